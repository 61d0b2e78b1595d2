// The workload of bench:store: steps of realistic size (an assistant message of several KB with
// one or two edit_file calls, their ledger transitions, each call's patch with its blobs, a
// tool_result message), compacted every ~150k tokens as the runtime does (a `compaction` record,
// the summary as the new history from index 0, a `compacted` checkpoint: one commit group).
import type { NewRecord } from '../../src/core/store/records';

const words = 'the quick brown fox jumps over the lazy dog while the agent edits src/index.ts and runs the tests; ';
const text = (bytes: number, seed: number) => `${seed} ${words.repeat(Math.ceil(bytes / words.length))}`.slice(0, bytes);
const budget = (turns: number) => ({
  turns,
  maxTurns: 100_000,
  inputTokens: turns * 2100,
  outputTokens: turns * 400,
  tokensUsed: 9000,
  costUsd: turns * 0.012,
});

function checkpointRecord(
  step: number,
  label: 'before_model' | 'after_model' | 'tool_started' | 'file_written' | 'tool_finished',
  messageCount: number,
  callId?: string,
  patchCount = step,
): NewRecord {
  return {
    type: 'checkpoint',
    checkpointId: `cp-${step}-${label}-${callId ?? ''}`,
    stepId: step,
    label,
    messageCount,
    patchCount,
    status: 'running',
    budget: budget(step),
    ...(callId ? { callId } : {}),
  };
}

const sourceLines = Array.from({ length: 60 }, (_, i) => `export const value${i} = compute(${i}, 'src/index.ts'); // line ${i}\n`);

/** src/index.ts after edit number `edit` (0: as it started): each edit rewrites three lines. */
function sourceAt(edit: number): string {
  const lines = [...sourceLines];
  for (let k = Math.max(1, edit - 19); k <= edit; k++) {
    const at = (k * 7) % 57;
    for (let i = at; i < at + 3; i++) lines[i] = `export const value${i} = compute(${i} + ${k}, "src/index.ts"); // edited by edit ${k}\n`;
  }
  return lines.join('');
}

const utf8 = (text: string) => new TextEncoder().encode(text);

/** Edits made before step n: one call a step, two every third step. */
const editsBefore = (n: number) => n - 1 + Math.floor((n - 1) / 3);

/**
 * What edit_file records for edit number `edit`: both contents as blobs (the before one already
 * stored by the edit before it), then the patch record, as record.ts makes it.
 * Returns the patch record and the new bytes (the after blob; the first edit's before blob too).
 */
async function patchRecord(sink: Sink, step: number, callId: string, edit: number): Promise<{ record: NewRecord; bytes: number }> {
  const before = sourceAt(edit - 1);
  const after = sourceAt(edit);
  const beforeBlob = await sink.blob(utf8(before));
  const afterBlob = await sink.blob(utf8(after));
  const record: NewRecord = {
    type: 'patch',
    patch: {
      patchId: `p-${callId}`,
      runId: 'big',
      stepId: step,
      toolCallId: callId,
      path: 'src/index.ts',
      op: 'modify',
      beforeHash: beforeBlob,
      afterHash: afterBlob,
      beforeBlob,
      afterBlob,
      added: 3,
      removed: 3,
      binary: false,
      createdAt: step * 1000 + 20,
      state: 'pending',
    },
  };
  return { record, bytes: utf8(after).length + (edit === 1 ? utf8(before).length : 0) };
}

function ledgerRecord(step: number, callId: string, status: 'planned' | 'started' | 'succeeded', resultRef?: string): NewRecord {
  return {
    type: 'ledger',
    entry: {
      callId,
      stepId: step,
      toolName: 'edit_file',
      inputHash: 'a'.repeat(64),
      status,
      idempotency: 'conditional',
      replayPolicy: 'auto',
      sideEffects: ['writes src/index.ts'],
      plannedAt: step * 1000,
      ...(status !== 'planned' ? { startedAt: step * 1000 + 5 } : {}),
      ...(status === 'succeeded' ? { finishedAt: step * 1000 + 50, resultRef: resultRef! } : {}),
      compensation: 'roll back the patch',
      intents: [{ path: 'src/index.ts', beforeHash: 'b'.repeat(64), afterHash: 'c'.repeat(64) }],
    },
  };
}

export interface Sink {
  /** One commit group, durable when it resolves; returns the new record data in bytes. */
  commit(records: NewRecord[]): Promise<number>;
  blob(bytes: Uint8Array): Promise<string>;
}

/** The history as the runtime holds it: its length and the tokens it holds (about 4 bytes a token). */
export interface History {
  messages: number;
  tokens: number;
  /** When set, the patches so far, which checkpoints then count as the runtime does (bench:fork); else each names its step. */
  patches?: number;
}

/** Tokens of history that make the runtime compact (a context budget of 200k, summarised at ~75%). */
export const COMPACT_AT_TOKENS = 150_000;
const tokensOf = (record: NewRecord) => Math.ceil(JSON.stringify(record).length / 4);

/** A compaction as compaction.ts writes it: the summary is the whole history from index 0. */
async function compact(sink: Sink, n: number, history: History): Promise<number> {
  const summary: NewRecord = { type: 'message', index: 0, stepId: n, message: { role: 'user', content: text(6000, n) } };
  const records: NewRecord[] = [
    {
      type: 'compaction',
      stepId: n,
      kind: 'summary',
      tokensBefore: history.tokens,
      tokensAfter: tokensOf(summary),
      contextBudget: 200_000,
      messagesBefore: history.messages,
      messagesAfter: 1,
      clearedCallIds: [],
    },
    summary,
    {
      ...(checkpointRecord(n, 'before_model', 1, undefined, history.patches) as Extract<NewRecord, { type: 'checkpoint' }>),
      label: 'compacted',
    },
  ];
  history.messages = 1;
  history.tokens = tokensOf(summary);
  return sink.commit(records);
}

/** Step n; returns the new bytes it stored (records and blobs). */
export async function step(sink: Sink, n: number, history: History): Promise<number> {
  let bytes = history.tokens > COMPACT_AT_TOKENS ? await compact(sink, n, history) : 0;
  const calls = n % 3 === 0 ? [`tu-${n}-a`, `tu-${n}-b`] : [`tu-${n}-a`];
  const base = history.messages;
  const counted = (label: Parameters<typeof checkpointRecord>[1], messages: number, callId?: string) =>
    checkpointRecord(n, label, messages, callId, history.patches);
  bytes += await sink.commit([counted('before_model', base)]);
  const assistant: NewRecord = {
    type: 'message',
    index: base,
    stepId: n,
    message: {
      role: 'assistant',
      content: [
        { type: 'text', text: text(3000, n) },
        ...calls.map((id) => ({ type: 'tool_use', id, name: 'edit_file', input: { path: 'src/index.ts', edits: text(400, n) } })),
      ],
    },
  };
  bytes += await sink.commit([assistant, ...calls.map((id) => ledgerRecord(n, id, 'planned')), counted('after_model', base + 1)]);
  const results: { type: string; tool_use_id: string; content: string }[] = [];
  for (const id of calls) {
    bytes += await sink.commit([ledgerRecord(n, id, 'started'), counted('tool_started', base + 1, id)]);
    const patch = await patchRecord(sink, n, id, editsBefore(n) + calls.indexOf(id) + 1);
    if (history.patches !== undefined) history.patches += 1;
    bytes += patch.bytes + (await sink.commit([patch.record, counted('file_written', base + 1, id)]));
    const result = { type: 'tool_result', tool_use_id: id, content: text(2500, n) };
    results.push(result);
    const blobBytes = new TextEncoder().encode(JSON.stringify(result));
    const ref = await sink.blob(blobBytes);
    bytes += blobBytes.length;
    bytes += await sink.commit([ledgerRecord(n, id, 'succeeded', ref), counted('tool_finished', base + 1, id)]);
  }
  const user: NewRecord = { type: 'message', index: base + 1, stepId: n, message: { role: 'user', content: results } };
  bytes += await sink.commit([user]);
  history.messages = base + 2;
  history.tokens += tokensOf(assistant) + tokensOf(user);
  return bytes;
}

/** The run every store bench writes. */
export function runInput(runId: string) {
  return {
    runId,
    task: 'bench',
    createdAt: Date.now(),
    workspaceFolders: ['/ws'],
    git: { isRepo: false, dirtyPaths: [] },
    settings: { model: 'm', provider: 'p', maxTurns: 100_000, maxOutputTokensPerCall: 4096 },
  };
}

/**
 * The steps at whose start a run of `steps` steps compacts (the workload is the same whatever the
 * sink: its history is run through without storing anything).
 */
export async function compactionSteps(steps: number): Promise<number[]> {
  const at: number[] = [];
  const history: History = { messages: 0, tokens: 0 };
  const sink: Sink = { commit: async () => 0, blob: async () => '0'.repeat(64) };
  for (let n = 1; n <= steps; n++) {
    if (history.tokens > COMPACT_AT_TOKENS) at.push(n);
    await step(sink, n, history);
  }
  return at;
}

/** How many steps after its newest compaction step `n` ends (the live context it leaves): a step's place in its compaction cycle. */
export function phaseOf(n: number, compactions: readonly number[]): number {
  return n - Math.max(0, ...compactions.filter((c) => c <= n));
}

/** The latest step at most `limit` that ends at `phase` steps after a compaction (the same live context as another run's step of that phase). */
export function latestStepAtPhase(limit: number, phase: number, compactions: readonly number[]): number {
  const start = Math.max(...compactions.filter((c) => c + phase <= limit));
  return start + phase;
}
