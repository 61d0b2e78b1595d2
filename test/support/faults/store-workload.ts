import { isDeepStrictEqual } from 'node:util';
import { StoreError, type CheckpointStore, type RunWriter } from '../../../src/core/store/contract';
import { FileCheckpointStore } from '../../../src/core/store/file/file-store';
import type { StoreFs } from '../../../src/core/store/fs-port';
import type { ProcessIdentity } from '../../../src/core/store/lease-policy';
import type { Budget, NewRecord, RunRecord, StoredRecord } from '../../../src/core/store/records';

// A store-level workload: create a run, then append commit groups (some naming blobs written
// just before), remembering every record whose append resolved (acknowledged). After a fault,
// `checkRecovered` opens a fresh store on what is left and checks the journal is a prefix that
// holds every acknowledged record, that the run verifies, and that a writer can continue it.

export const STORE_ROOT = '/store';
export const RUN_ID = 'run-faults';
const enc = new TextEncoder();

/** The crashed process (alive as far as it knows) and the next one, which sees it dead. */
export const FIRST_PROCESS: ProcessIdentity = { pid: 101, hostname: 'faults-host', isAlive: () => true };
export const NEXT_PROCESS: ProcessIdentity = { pid: 202, hostname: 'faults-host', isAlive: (pid) => pid === 202 };

export function tickingClock(start = 1_800_000_000_000): { now(): number } {
  let t = start;
  return { now: () => (t += 7) };
}

export function faultStore(fs: StoreFs, identity: ProcessIdentity): FileCheckpointStore {
  // snapshotStepBytes 0: every fault also meets a state snapshot being written.
  return new FileCheckpointStore({
    fs,
    root: STORE_ROOT,
    clock: tickingClock(),
    process: identity,
    stateIntervalMs: 0,
    snapshotStepBytes: 0,
  });
}

/** The storage folder exists before the store does (VS Code's storageUri, the CLI's --store). */
export async function prepareRoot(fs: StoreFs): Promise<void> {
  await fs.mkdirp(STORE_ROOT);
  await fs.syncDir('/');
}

export function runInput(runId = RUN_ID): Omit<RunRecord, 'v' | 'at' | 'type'> {
  return {
    runId,
    task: 'prove crash safety',
    createdAt: 1_800_000_000_000,
    workspaceFolders: ['/ws'],
    git: { isRepo: false, dirtyPaths: [] },
    settings: { model: 'claude-test', provider: 'anthropic', maxTurns: 40, maxOutputTokensPerCall: 512 },
  };
}

function budget(turns: number): Budget {
  return { turns, maxTurns: 40, inputTokens: turns * 100, outputTokens: turns * 20, tokensUsed: 120, costUsd: turns / 1000 };
}

/** Commit group number g (1-based): a checkpoint, a message, sometimes a ledger entry naming a blob. */
export function groupRecords(g: number, blob?: string): NewRecord[] {
  const records: NewRecord[] = [
    {
      type: 'checkpoint',
      checkpointId: `c${g}`,
      stepId: g,
      label: g % 2 ? 'before_model' : 'after_model',
      messageCount: g,
      patchCount: 0,
      status: 'running',
      budget: budget(g),
    },
    {
      type: 'message',
      index: g - 1,
      stepId: g,
      message: { role: g % 2 ? 'user' : 'assistant', content: [{ type: 'text', text: `message ${g} ${'·'.repeat(g * 13)}` }] },
    },
  ];
  if (blob !== undefined) {
    records.push({
      type: 'ledger',
      entry: {
        callId: `toolu_${g}`,
        stepId: g,
        toolName: 'read_file',
        inputHash: `h${g}`,
        status: 'succeeded',
        idempotency: 'idempotent',
        replayPolicy: 'auto',
        sideEffects: [],
        plannedAt: g,
        finishedAt: g + 1,
        resultRef: blob,
        compensation: 'nothing to undo',
      },
    });
  }
  return records;
}

export interface WorkloadResult {
  /** Every record whose append resolved, in order (the run record is `created`). */
  readonly acknowledged: StoredRecord[];
  readonly created: boolean;
  readonly error?: unknown;
}

/** Runs the workload until it ends or the first failure (the process is then considered dead). */
export async function storeWorkload(store: CheckpointStore, groups: number, runId = RUN_ID): Promise<WorkloadResult> {
  const acknowledged: StoredRecord[] = [];
  let created = false;
  let writer: RunWriter | undefined;
  try {
    writer = await store.createRun(runInput(runId));
    created = true;
    for (let g = 1; g <= groups; g++) {
      const blob = g % 3 === 0 ? await store.putBlob(enc.encode(`result of call ${g}`)) : undefined;
      acknowledged.push(...(await writer.append(groupRecords(g, blob))));
    }
    await writer.close();
    return { acknowledged, created };
  } catch (error) {
    // As the runtime does: a failed run closes its writer (releasing the lease when it can).
    await writer?.close().catch(() => undefined);
    return { acknowledged, created, error };
  }
}

export interface RecoveryCheck {
  readonly ok: boolean;
  readonly problem?: string;
  readonly recovered: number;
  /** The run was refused as damaged (a garbled unacknowledged last write), its intact part checked. */
  readonly refused?: boolean;
}

/**
 * A power cut can leave the last, unacknowledged write garbled into complete lines. Nothing tells
 * those bytes from acknowledged ones damaged later, so the store refuses the run instead of cutting
 * them. That is right when: the crash garbled a write, the intact part before the damage holds every
 * acknowledged record (`prefixProblem` says what is wrong, if anything), opening the run is refused
 * naming the journal and the byte, and the journal is left byte for byte as it was.
 */
export async function checkRefused(
  store: FileCheckpointStore,
  runId: string,
  garbled: boolean,
  prefixProblem: (intact: readonly StoredRecord[]) => string | undefined,
  open: () => Promise<unknown> = () => store.openWriter(runId),
): Promise<RecoveryCheck> {
  const scan = await store.scanJournalOf(runId);
  const intact = scan.records;
  if (!scan.damage) return fail('refused, but a scan finds no damage', intact.length);
  if (!garbled) return fail(`damaged at byte ${scan.damage.offset} though no write was garbled`, intact.length);
  const problem = prefixProblem(intact);
  if (problem !== undefined) return fail(`the intact part: ${problem}`, intact.length);
  const journal = store.journalPath(runId);
  const before = await store.fs.readFile(journal);
  const refusal = await open().then(
    () => undefined,
    (error: unknown) => error,
  );
  if (refusal === undefined) return fail('the damaged run opened for writing', intact.length);
  if (!describeError(refusal).includes(`${journal}`) || !describeError(refusal).includes(`byte ${scan.damage.offset}`))
    return fail(`the refusal does not name the journal and byte ${scan.damage.offset}: ${describeError(refusal)}`, intact.length);
  if (!isDeepStrictEqual(await store.fs.readFile(journal), before)) return fail('the refused journal was changed', intact.length);
  return { ok: true, recovered: intact.length, refused: true };
}

/** Every acknowledged record, in order, at the start of `records` (after the run record when it was created). */
function acknowledgedPrefixProblem(records: readonly StoredRecord[], result: WorkloadResult, runId: string): string | undefined {
  if (result.created && (records[0]?.type !== 'run' || records[0].runId !== runId)) return 'the acknowledged run record is missing';
  const offset = result.created ? 1 : 0;
  if (records.length < result.acknowledged.length + offset)
    return `lost acknowledged records: ${records.length} read, ${result.acknowledged.length} acknowledged`;
  for (const [i, ack] of result.acknowledged.entries()) {
    if (!isDeepStrictEqual(plain(records[i + offset]), plain(ack))) return `record ${i + 1} differs from the acknowledged one`;
  }
  for (const [i, record] of records.entries()) {
    if (record.seq !== i + 1) return `sequence ${record.seq} at position ${i + 1}`;
  }
  return undefined;
}

function fail(problem: string, recovered = 0): RecoveryCheck {
  return { ok: false, problem, recovered };
}

/**
 * After a fault: the journal opens (no crash, no damage), is a prefix of what was written with
 * every acknowledged record in it, verifies, and accepts a new commit group; or, when the cut
 * `garbled` a write, the run may be refused as damaged (checkRefused).
 */
export async function checkRecovered(
  store: FileCheckpointStore,
  result: WorkloadResult,
  runId = RUN_ID,
  garbled = false,
): Promise<RecoveryCheck> {
  let records: readonly StoredRecord[];
  try {
    await store.listRuns();
    records = await store.readRecords(runId);
  } catch (error) {
    if (error instanceof StoreError && error.code === 'damaged' && result.created)
      return checkRefused(store, runId, garbled, (intact) => acknowledgedPrefixProblem(intact, result, runId));
    if (!result.created && error instanceof StoreError) return { ok: true, recovered: 0 };
    return fail(`reading the run failed: ${describeError(error)}`);
  }
  const problem = acknowledgedPrefixProblem(records, result, runId);
  if (problem !== undefined) return fail(problem, records.length);
  const report = await store.verify(runId).catch((error: unknown) => error);
  if (report instanceof Error || !(report as { ok: boolean }).ok) return fail(`verify failed: ${describeError(report)}`, records.length);
  try {
    const writer = await store.openWriter(runId);
    const next = records.length;
    await writer.append([{ type: 'note', kind: 'info', text: `recovered with ${next} records` }]);
    await writer.close();
    const after = await store.readRecords(runId);
    if (after.length <= next) return fail('the appended group after recovery is missing', records.length);
  } catch (error) {
    return fail(`continuing the run failed: ${describeError(error)}`, records.length);
  }
  return { ok: true, recovered: records.length };
}

function plain(record: StoredRecord | undefined): unknown {
  return record === undefined ? undefined : JSON.parse(JSON.stringify(record));
}

export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return JSON.stringify(error);
}
