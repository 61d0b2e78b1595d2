export { AgentRuntime, newRunId } from './runtime';
export type { GitReader, OutcomeStatus, RunOutcome, RuntimeDeps, RuntimeEvent, RuntimeListener, StartRequest } from './types';
export { CANCELLED_REASON } from './types';
export { ApprovalUnavailableError, ResumeError, StorageFailure } from './errors';
export { STATUS_UNKNOWN_MESSAGE, type CallReport, type ReconcileOutcome } from './reconcile';
export { RECOVERY_NOTE_MARKER, recoveryNote } from './recovery-note';
export { limitReached } from './budget';
export { classifyLatestPatches } from './resume';
export { buildSystemPrompt, composeRunPrompt, HostFacts, SYSTEM_PROMPT_VERSION, type PromptEnvironment } from './system-prompt';
export {
  DEFAULT_INSTRUCTION_FILES,
  INSTRUCTION_FILE_CAP_BYTES,
  InstructionFileNames,
  instructionChanges,
  readProjectInstructions,
} from './project-instructions';
export { HostClosing } from './failure';
