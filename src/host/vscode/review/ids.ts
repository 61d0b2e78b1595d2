import type { CommandId } from '../commands/command-table';

export const REVIEW_COMMANDS = {
  keepHunk: 'agentCheckpoints.review.keepHunk',
  undoHunk: 'agentCheckpoints.review.undoHunk',
  keepFile: 'agentCheckpoints.review.keepFile',
  undoFile: 'agentCheckpoints.review.undoFile',
  keepRun: 'agentCheckpoints.review.keepRun',
  undoRun: 'agentCheckpoints.review.undoRun',
  next: 'agentCheckpoints.review.next',
  previous: 'agentCheckpoints.review.previous',
} as const satisfies Record<string, CommandId>;

export const REVIEW_CONTEXT = {
  /** Some file of the workspace has agent hunks waiting for review. */
  hasChanges: 'agentCheckpoints.review.hasChanges',
  /** The active editor's file has agent hunks waiting for review. */
  activeHasChanges: 'agentCheckpoints.review.activeHasChanges',
} as const;
