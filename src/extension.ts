export { activate } from './host/vscode/activate';
export type { AgentCheckpointsApi } from './host/vscode/api';

export function deactivate(): void {}
