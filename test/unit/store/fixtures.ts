import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LedgerEntry } from '../../../src/core/ledger/schema';
import type { Clock } from '../../../src/core/ports';
import type { Budget, CheckpointLabel, NewRecord, RunRecord, StoredRecord } from '../../../src/core/store/records';
import type { FileCheckpointStore } from '../../../src/core/store/file/file-store';
import { LeaseFile, type LeaseInfo } from '../../../src/core/store/lease-policy';
import { stampRecords } from '../../../src/core/store/stamp';
import { openFileStore } from '../../../src/host/node/store-factory';

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

/** A run of three steps whose third compacted the history to a summary first (as the runtime's summary compaction does). */
export function compactedRun(): StoredRecord[] {
  const compaction: NewRecord = {
    type: 'compaction',
    stepId: 3,
    kind: 'summary',
    tokensBefore: 900,
    tokensAfter: 100,
    contextBudget: 1000,
    messagesBefore: 5,
    messagesAfter: 1,
    clearedCallIds: [],
  };
  const records: NewRecord[] = [
    { ...runInput('r1'), type: 'run' },
    checkpoint('c0', 0, 'run_start', 1),
    message(0, 0, 'user', 'the task'),
    checkpoint('c1', 1, 'before_model', 1),
    message(1, 1, 'assistant', 'First I read the README.'),
    checkpoint('c2', 1, 'after_model', 2),
    message(2, 1, 'user', 'ok'),
    checkpoint('c3', 2, 'before_model', 3),
    message(3, 2, 'assistant', 'Then I fix the bug.'),
    checkpoint('c4', 2, 'after_model', 4),
    message(4, 2, 'user', 'ok'),
    checkpoint('c5', 3, 'before_model', 5),
    compaction,
    message(0, 3, 'user', '[summary of the earlier work] read the README, fixed the bug'),
    checkpoint('c6', 3, 'compacted', 1),
    message(1, 3, 'assistant', 'All done now.'),
    checkpoint('c7', 3, 'after_model', 2),
  ];
  return stampRecords(records, 1, 5);
}

/** The lease of a run of a file store as its lease file says it (null: no lease file). */
export function leaseOf(store: FileCheckpointStore, runId: string): LeaseInfo | null {
  const path = join(store.runDir(runId), 'lease.json');
  return existsSync(path) ? LeaseFile.parse(JSON.parse(readFileSync(path, 'utf8'))) : null;
}

/** A pending patch record of run r1 creating `<patchId>.txt` (its content as `afterBlob`, when given). */
export function pendingPatch(patchId: string, afterBlob?: string): NewRecord {
  return {
    type: 'patch',
    patch: {
      patchId,
      runId: 'r1',
      stepId: 1,
      toolCallId: `c-${patchId}`,
      path: `${patchId}.txt`,
      op: 'create',
      beforeHash: 'absent',
      afterHash: 'a'.repeat(64),
      ...(afterBlob ? { afterBlob } : {}),
      added: 1,
      removed: 0,
      binary: false,
      createdAt: 1,
      state: 'pending',
    },
  } as NewRecord;
}

/** A closed run in the file store under `root` (a user message and a checkpoint); returns its folder. */
export async function closedFileRun(root: string, runId: string): Promise<string> {
  const writer = await openFileStore(root).createRun(runInput(runId));
  await writer.append([message(0, 1, 'user', 'go'), checkpoint('c1', 1, 'after_model', 1)]);
  await writer.close();
  return join(root, 'runs', runId);
}
