import type { LedgerEntry } from '../../../src/core/ledger/schema';
import type { Clock } from '../../../src/core/ports';
import type { Budget, CheckpointLabel, NewRecord, RunRecord } from '../../../src/core/store/records';

export class ManualClock implements Clock {
  constructor(public time = Date.now()) {}
  now(): number {
    return this.time;
  }
  advance(ms: number): void {
    this.time += ms;
  }
}

export function runInput(runId: string, task = 'fix the tests'): Omit<RunRecord, 'v' | 'at' | 'type'> {
  return {
    runId,
    task,
    createdAt: 1_700_000_000_000,
    workspaceFolders: ['/ws'],
    git: { isRepo: true, head: 'abc', dirtyPaths: [] },
    settings: { model: 'claude-test', provider: 'anthropic', maxTurns: 50, maxOutputTokensPerCall: 4096 },
  };
}

export function budget(turns: number): Budget {
  return { turns, maxTurns: 50, inputTokens: turns * 100, outputTokens: turns * 10, tokensUsed: 110, costUsd: turns * 0.01 };
}

export function checkpoint(id: string, stepId: number, label: CheckpointLabel, messageCount: number, turns = stepId): NewRecord {
  return { type: 'checkpoint', checkpointId: id, stepId, label, messageCount, patchCount: 0, status: 'running', budget: budget(turns) };
}

export function message(index: number, stepId: number, role: 'user' | 'assistant', text: string): NewRecord {
  return { type: 'message', index, stepId, message: { role, content: [{ type: 'text', text }] } };
}

export function ledgerEntry(callId: string, stepId: number, status: LedgerEntry['status'], resultRef?: string): NewRecord {
  const entry: LedgerEntry = {
    callId,
    stepId,
    toolName: 'write_file',
    inputHash: 'h'.repeat(8),
    status,
    idempotency: 'conditional',
    replayPolicy: 'auto',
    sideEffects: ['file'],
    plannedAt: 1,
    compensation: 'roll back the patch',
  };
  if (resultRef !== undefined) entry.resultRef = resultRef;
  return { type: 'ledger', entry };
}

export const bytesOf = (text: string): Uint8Array => new TextEncoder().encode(text);
