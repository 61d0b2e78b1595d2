import type { Clock, Log, Workspace } from '../ports';
import type { CheckpointStore } from '../store/contract';
import type { FileIntent } from '../ledger/schema';
import type { PreparedWrite } from '../tools/types';
import { execBitsOf, execFields, liveExec, placeExec } from './exec-bit';
import { ABSENT, decodeText, hashOrAbsent, isBinary } from './hash';
import { diffTexts } from './hunks';
import type { Patch } from './schema';

/** The blob half of the store: content-addressed, written durably before any record names it. */
export type BlobStore = Pick<CheckpointStore, 'putBlob' | 'getBlob'>;

/** Above this size (either side) content is kept by hash only. */
export const DEFAULT_CONTENT_CAP_BYTES = 2 * 1024 * 1024;

export interface WriteDeps {
  readonly workspace: Workspace;
  readonly blobs: BlobStore;
  readonly clock: Clock;
  readonly log: Log;
  readonly newId: () => string;
  readonly contentCapBytes?: number;
}

export interface WriteOrigin {
  readonly runId: string;
  readonly stepId: number;
  readonly toolCallId: string;
}

/**
 * Reads the LIVE content of path (buffer or disk) and describes writing `after` over it.
 * `executable`: the bit the new content gets (a command's); undefined keeps the live file's.
 */
export async function prepareWrite(
  workspace: Workspace,
  path: string,
  after: Uint8Array | null,
  executable?: boolean,
): Promise<PreparedWrite> {
  // A write's path is checked as one (names Windows refuses too) before anything is stored or written.
  const normalized = await workspace.normalize(path, after === null ? undefined : 'write');
  const live = await workspace.read(normalized);
  const before = live === null ? null : live.bytes;
  // The bit is read only when the write may change it (a delete, a command's file): an edit keeps it.
  const bits = after === null || executable !== undefined ? execBitsOf(await liveExec(workspace, normalized), after, executable) : {};
  return {
    path: normalized,
    beforeHash: live === null ? ABSENT : live.hash,
    afterHash: hashOrAbsent(after),
    ...bits,
    before,
    after,
  };
}

function operation(write: PreparedWrite): Patch['op'] {
  if (write.beforeHash === ABSENT) return 'create';
  if (write.afterHash === ABSENT) return 'delete';
  return 'modify';
}

interface DiffSummary {
  readonly added: number;
  readonly removed: number;
  readonly binary: boolean;
}

function summarizeDiff(path: string, before: Uint8Array | null, after: Uint8Array | null): DiffSummary {
  const beforeText = before === null ? { text: '', bom: false } : decodeText(before);
  const afterText = after === null ? { text: '', bom: false } : decodeText(after);
  if (beforeText === null || afterText === null) return { added: 0, removed: 0, binary: true };
  const { added, removed } = diffTexts(path, beforeText.text, afterText.text);
  return { added, removed, binary: false };
}

function omittedSummary(write: PreparedWrite): DiffSummary {
  const binary = [write.before, write.after].some((bytes) => bytes !== null && isBinary(bytes));
  return { added: 0, removed: 0, binary };
}

async function putIfPresent(blobs: BlobStore, bytes: Uint8Array | null): Promise<string | undefined> {
  return bytes === null ? undefined : blobs.putBlob(bytes);
}

export interface StoredWriteBlobs {
  readonly beforeBlob?: string;
  readonly afterBlob?: string;
  readonly omitted: boolean;
}

/** Stores both sides of a write as blobs, side by side (nothing over the size cap); idempotent thanks to content addressing. */
export async function storeWriteBlobs(
  deps: Pick<WriteDeps, 'blobs' | 'contentCapBytes'>,
  write: Pick<PreparedWrite, 'before' | 'after'>,
): Promise<StoredWriteBlobs> {
  const omitted = isOverCap(deps, write);
  if (omitted) return { omitted };
  const [beforeBlob, afterBlob] = await Promise.all([putIfPresent(deps.blobs, write.before), putIfPresent(deps.blobs, write.after)]);
  return { omitted, ...(beforeBlob === undefined ? {} : { beforeBlob }), ...(afterBlob === undefined ? {} : { afterBlob }) };
}

/** The write-ahead intent of a write whose blobs are stored (run before its call starts). */
export function intentOf(write: PreparedWrite, blobs: StoredWriteBlobs): FileIntent {
  return {
    path: write.path,
    beforeHash: write.beforeHash,
    afterHash: write.afterHash,
    ...(blobs.beforeBlob ? { beforeBlob: blobs.beforeBlob } : {}),
    ...(blobs.afterBlob ? { afterBlob: blobs.afterBlob } : {}),
    ...execFields(write),
  };
}

function isOverCap(deps: Pick<WriteDeps, 'contentCapBytes'>, write: Pick<PreparedWrite, 'before' | 'after'>): boolean {
  return Math.max(write.before?.length ?? 0, write.after?.length ?? 0) > (deps.contentCapBytes ?? DEFAULT_CONTENT_CAP_BYTES);
}

function summaryOf(write: PreparedWrite, omitted: boolean): DiffSummary {
  return omitted ? omittedSummary(write) : summarizeDiff(write.path, write.before, write.after);
}

/** The patch record of a write whose blobs are stored. */
export function patchOfWrite(
  deps: Pick<WriteDeps, 'clock' | 'newId'>,
  origin: WriteOrigin,
  write: PreparedWrite,
  blobs: StoredWriteBlobs,
  wroteDirtyBuffer: boolean,
  summary: DiffSummary = summaryOf(write, blobs.omitted),
): Patch {
  return {
    patchId: deps.newId(),
    runId: origin.runId,
    stepId: origin.stepId,
    toolCallId: origin.toolCallId,
    path: write.path,
    op: operation(write),
    beforeHash: write.beforeHash,
    afterHash: write.afterHash,
    ...(blobs.beforeBlob === undefined ? {} : { beforeBlob: blobs.beforeBlob }),
    ...(blobs.afterBlob === undefined ? {} : { afterBlob: blobs.afterBlob }),
    ...summary,
    ...execFields(write),
    ...(blobs.omitted ? { contentOmitted: true } : {}),
    ...(wroteDirtyBuffer ? { wroteDirtyBuffer: true } : {}),
    createdAt: deps.clock.now(),
    state: 'pending',
  };
}

/**
 * The diff summary, computed once the I/O already under way has been handed to the system
 * (after the pending callbacks run): the diff then costs no time of its own on the way to disk.
 */
function summaryWhileWriting(write: PreparedWrite, omitted: boolean): Promise<DiffSummary> {
  return new Promise((resolve, reject) => {
    setImmediate(() => {
      try {
        resolve(summaryOf(write, omitted));
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  });
}

async function isDirtyNow(workspace: Workspace, path: string): Promise<boolean> {
  if (workspace.isDirty) return workspace.isDirty(path);
  return (await workspace.read(path))?.dirty === true;
}

/**
 * Performs one prepared write durably: before and after blobs first, then the write (or delete)
 * through the Workspace with the expected before-hash (StaleContentError when live changed),
 * then returns the Patch (state pending) for the caller to journal.
 */
export async function applyPreparedWrite(deps: WriteDeps, origin: WriteOrigin, write: PreparedWrite): Promise<Patch> {
  const written = storeBlobsThenWrite(deps, write);
  const summary = summaryWhileWriting(write, isOverCap(deps, write));
  const [blobs, diff] = await Promise.allSettled([written, summary]);
  if (blobs.status === 'rejected') throw blobs.reason;
  if (diff.status === 'rejected') throw diff.reason;
  const stored = blobs.value;
  if (stored.omitted) {
    const size = Math.max(write.before?.length ?? 0, write.after?.length ?? 0);
    const cap = deps.contentCapBytes ?? DEFAULT_CONTENT_CAP_BYTES;
    deps.log.log(
      'warn',
      `${write.path}: ${size} bytes is over the ${cap}-byte cap; content kept by hash only: no diff is shown and the patch cannot be rolled back (a created file can still be deleted)`,
      { path: write.path, size, cap },
    );
  }
  return patchOfWrite(deps, origin, write, stored, stored.wroteDirtyBuffer, diff.value);
}

/**
 * The blobs, durable, then the write: a workspace that can stage a write (writeWhenReady) writes
 * the new content aside while the blobs are stored, and replaces the live file only once both
 * are durable (a blob that fails leaves the live file untouched).
 */
async function storeBlobsThenWrite(deps: WriteDeps, write: PreparedWrite): Promise<StoredWriteBlobs & { wroteDirtyBuffer: boolean }> {
  const { workspace } = deps;
  const wroteDirtyBuffer = await isDirtyNow(workspace, write.path);
  // A mode-only write (a command's chmod) has the same bytes on both sides: only its bit is placed.
  const modeOnly = write.beforeHash === write.afterHash && write.execAfter !== undefined;
  if (write.after === null || !workspace.writeWhenReady || modeOnly) {
    const blobs = await storeWriteBlobs(deps, write);
    if (write.after === null) await workspace.delete(write.path, write.beforeHash);
    else if (!modeOnly) await workspace.write(write.path, write.after, write.beforeHash);
    await placeWrittenExec(workspace, write);
    return { ...blobs, wroteDirtyBuffer };
  }
  const stored = storeWriteBlobs(deps, write);
  const [blobs, written] = await Promise.allSettled([stored, workspace.writeWhenReady(write.path, write.after, write.beforeHash, stored)]);
  if (blobs.status === 'rejected') throw blobs.reason;
  if (written.status === 'rejected') throw written.reason;
  await placeWrittenExec(workspace, write);
  return { ...blobs.value, wroteDirtyBuffer };
}

/** The bit a write changes (a mode-only write has only this), checked against the live one it was prepared with. */
async function placeWrittenExec(workspace: Workspace, write: PreparedWrite): Promise<void> {
  if (write.after === null) return;
  await placeExec(workspace, write.path, write.execAfter, write.beforeHash === ABSENT ? undefined : write.execBefore);
}

/**
 * The patch of a write that happened before an interruption but whose patch record was never
 * journaled: rebuilt from the write-ahead intent and the blobs stored before the call started.
 */
export async function recoverPatch(
  deps: Pick<WriteDeps, 'blobs' | 'clock' | 'newId'>,
  origin: WriteOrigin,
  intent: FileIntent,
): Promise<Patch> {
  const before = intent.beforeBlob === undefined ? null : await deps.blobs.getBlob(intent.beforeBlob);
  const after = intent.afterBlob === undefined ? null : await deps.blobs.getBlob(intent.afterBlob);
  const omitted = (intent.beforeHash !== ABSENT && before === null) || (intent.afterHash !== ABSENT && after === null);
  const write: PreparedWrite = {
    path: intent.path,
    beforeHash: intent.beforeHash,
    afterHash: intent.afterHash,
    ...execFields(intent),
    before,
    after,
  };
  const blobs: StoredWriteBlobs = {
    omitted,
    ...(intent.beforeBlob ? { beforeBlob: intent.beforeBlob } : {}),
    ...(intent.afterBlob ? { afterBlob: intent.afterBlob } : {}),
  };
  return patchOfWrite(deps, origin, write, blobs, false);
}
