export * from './schema';
export { canonicalJson, inputHash } from './canonical';
export { IllegalTransitionError, hasRecordedResult, isLegalTransition, isTerminal, transition, type EntryChanges } from './transitions';
