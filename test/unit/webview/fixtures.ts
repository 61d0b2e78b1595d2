import type { LedgerEntry, LedgerStatus } from '../../../src/core/ledger/schema';
import type { MessageParam } from '../../../src/core/model/messages';
import type { LiveState, Patch } from '../../../src/core/patches/schema';
import type { RunState } from '../../../src/core/store/contract';
import type { CheckpointLabel, CheckpointRecord, RunRecord, RunStatus, StoredRecord, StoreRecord } from '../../../src/core/store/records';

// A synthetic run with every kind of row: used by unit tests, the benchmark and screenshots.

const T0 = Date.UTC(2025, 0, 15, 9, 30, 0);
const HASH_A = 'a'.repeat(64);
const HASH_B = 'b'.repeat(64);

interface ToolKind {
  name: string;
  input: (step: number) => Record<string, unknown>;
  idempotency: LedgerEntry['idempotency'];
  replayPolicy: LedgerEntry['replayPolicy'];
  sideEffects: string[];
  compensation: string;
  writes: boolean;
}

const TOOLS: ToolKind[] = [
  {
    name: 'read_file',
    input: (s) => ({ path: `src/module${s % 40}.ts` }),
    idempotency: 'idempotent',
    replayPolicy: 'auto',
    sideEffects: [],
    compensation: 'nothing to undo',
    writes: false,
  },
  {
    name: 'write_file',
    input: (s) => ({ path: `src/module${s % 40}.ts`, content: 'export const x = 1;\n' }),
    idempotency: 'conditional',
    replayPolicy: 'auto',
    sideEffects: ['fs.write'],
    compensation: 'roll back the patch',
    writes: true,
  },
  {
    name: 'run_command',
    input: () => ({ command: 'npm test -- --grep "timeline"' }),
    idempotency: 'non_idempotent',
    replayPolicy: 'ask',
    sideEffects: ['process.spawn'],
    compensation: 'not reversible',
    writes: false,
  },
  {
    name: 'http_post',
    input: () => ({ url: 'https://tracker.example/issues', body: '{}' }),
    idempotency: 'non_idempotent',
    replayPolicy: 'never',
    sideEffects: ['network.post'],
    compensation: 'close the created issue by hand',
    writes: false,
  },
];

const STATUSES: LedgerStatus[] = ['succeeded', 'succeeded', 'succeeded', 'failed', 'succeeded', 'uncertain', 'succeeded', 'approved'];

function checkpoint(id: number, stepId: number, label: CheckpointLabel, at: number, status: RunStatus, callId?: string): CheckpointRecord {
  const record: CheckpointRecord = {
    v: 1,
    at,
    type: 'checkpoint',
    checkpointId: `cp-${id}`,
    stepId,
    label,
    messageCount: stepId + 1,
    patchCount: 0,
    status,
    budget: {
      turns: stepId,
      maxTurns: 100_000,
      inputTokens: stepId * 1200,
      outputTokens: stepId * 300,
      tokensUsed: 1500,
      costUsd: stepId * 0.0081,
    },
  };
  if (callId !== undefined) record.callId = callId;
  return record;
}

export interface SampleRun {
  readonly state: RunState;
  readonly live: Map<string, LiveState>;
}

/** A run of `steps` steps; the last step's call is still `started` when `running`. */
export function sampleRun(steps: number, options: { runId?: string; task?: string; running?: boolean } = {}): SampleRun {
  const runId = options.runId ?? 'run-1';
  const status: RunStatus = options.running ? 'running' : 'completed';
  const run: RunRecord = {
    v: 1,
    at: T0,
    type: 'run',
    runId,
    task: options.task ?? 'Add a retry budget to the HTTP client and cover it with tests',
    createdAt: T0,
    workspaceFolders: ['/work/demo'],
    git: { isRepo: true, head: 'abc123', dirtyPaths: [] },
    settings: { model: 'claude-sonnet-4-5', provider: 'anthropic', maxTurns: 100_000, maxOutputTokensPerCall: 4096 },
  };
  const checkpoints: CheckpointRecord[] = [checkpoint(0, 0, 'run_start', T0, status)];
  const ledger: LedgerEntry[] = [];
  const patches: Patch[] = [];
  const messages: MessageParam[] = [{ role: 'user', content: run.task }];
  const live = new Map<string, LiveState>();
  let cp = 1;
  for (let s = 1; s <= steps; s++) {
    const at = T0 + s * 4000;
    const tool = TOOLS[s % TOOLS.length]!;
    const callId = `toolu_${s}`;
    const last = s === steps;
    const callStatus: LedgerStatus = last && options.running ? 'started' : STATUSES[s % STATUSES.length]!;
    checkpoints.push(checkpoint(cp++, s, 'before_model', at, status), checkpoint(cp++, s, 'after_model', at + 1500, status));
    checkpoints.push(checkpoint(cp++, s, 'tool_started', at + 1600, status, callId));
    if (callStatus !== 'started') checkpoints.push(checkpoint(cp++, s, 'tool_finished', at + 2400, status, callId));
    messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: callId, name: tool.name, input: tool.input(s) }] });
    const entry: LedgerEntry = {
      callId,
      stepId: s,
      toolName: tool.name,
      inputHash: HASH_A,
      status: callStatus,
      idempotency: tool.idempotency,
      replayPolicy: tool.replayPolicy,
      sideEffects: tool.sideEffects,
      plannedAt: at + 1500,
      startedAt: at + 1600,
      compensation: tool.compensation,
    };
    if (callStatus !== 'started') entry.finishedAt = at + 2400;
    if (callStatus === 'failed') entry.error = 'exit code 1';
    if (tool.writes) {
      const patchId = `patch-${s}`;
      entry.patchIds = [patchId];
      const state = s % 9 === 0 ? 'accepted' : s % 13 === 0 ? 'rolled_back' : 'pending';
      patches.push({
        patchId,
        runId,
        stepId: s,
        toolCallId: callId,
        path: `src/module${s % 40}.ts`,
        op: s % 10 === 1 ? 'create' : 'modify',
        beforeHash: HASH_A,
        afterHash: HASH_B,
        added: 3 + (s % 7),
        removed: s % 4,
        binary: false,
        createdAt: at + 2000,
        state,
      });
      live.set(patchId, s % 5 === 0 ? 'conflict' : s % 7 === 0 ? 'not_applied' : 'applied');
    }
    ledger.push(entry);
  }
  const budget = checkpoints[checkpoints.length - 1]!.budget;
  const state: RunState = {
    run,
    status,
    messages,
    ledger,
    patches,
    approvals: [],
    budget,
    checkpoints,
    allCheckpoints: checkpoints,
    checkpointCount: checkpoints.length,
    latestCheckpoint: checkpoints[checkpoints.length - 1]!,
    notes: [],
    restores: [],
    lastSeq: checkpoints.length + ledger.length,
    // As a full read of the journal gives it: every checkpoint counts in the one history.
    historyOf: new Map(checkpoints.map((c) => [c.checkpointId, messages])),
    stepId: steps,
  };
  return { state, live };
}

/**
 * The records that take `before` to `after`, a longer sampleRun of the same run (not running):
 * what the runtime emits for the new steps, each step's message, calls and patches, then its
 * checkpoints. Their seq follow `afterSeq` (the last record folded so far).
 */
export function recordsBetween(before: RunState, after: RunState, afterSeq = before.lastSeq): StoredRecord[] {
  let seq = afterSeq;
  const out: StoredRecord[] = [];
  const add = (record: StoreRecord) => out.push({ ...record, seq: ++seq });
  for (let stepId = before.stepId + 1; stepId <= after.stepId; stepId++) {
    after.messages.forEach((message, index) => {
      if (index >= before.messages.length && index === stepId) add({ v: 1, at: T0, type: 'message', index, stepId, message });
    });
    for (const entry of after.ledger.filter((e) => e.stepId === stepId)) add({ v: 1, at: entry.plannedAt, type: 'ledger', entry });
    for (const patch of after.patches.filter((p) => p.stepId === stepId)) add({ v: 1, at: patch.createdAt, type: 'patch', patch });
    for (const checkpoint of after.checkpoints.filter((c) => c.stepId === stepId)) add(checkpoint);
  }
  return out;
}
