import type { ConversationBackend } from '../../../src/host/vscode/timeline/backend';
import type { PendingApproval } from '../../../src/protocol/messages';

const never = () => ({ dispose() {} });

/** A conversation backend that records what it was asked; `waiting` holds the calls that wait. */
export function fakeConversation(waiting: PendingApproval[] = []): ConversationBackend & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    onDidStream: never,
    onDidChangeApprovals: never,
    onDidRequestReveal: never,
    pendingApprovals: () => waiting,
    decide: (runId, callId, decision, reason) => {
      const index = waiting.findIndex((w) => w.runId === runId && w.callId === callId);
      if (index < 0) return false;
      waiting.splice(index, 1);
      calls.push(`decide:${callId}:${decision}${reason !== undefined ? `:${reason}` : ''}`);
      return true;
    },
    startRun: async (task, context) => (calls.push(`start:${task}:${context.map((c) => c.path).join(',')}`), 'run-new'),
    continueRun: async (runId, instruction) => (calls.push(`continue:${runId}:${instruction}`), 'Continuing with your instruction.'),
    pickContext: async (kind) => [{ kind, path: 'src/a.ts' }],
    openProblem: async (path, line) => {
      if (path.startsWith('..')) throw new Error(`${path}: outside every workspace folder`);
      calls.push(`problem:${path}:${line}`);
    },
    openLink: async (url) => (calls.push(`link:${url}`), true),
    copyText: async (text) => void calls.push(`copy:${text}`),
  };
}
