export * from './viewModel';
export * from './messages';
