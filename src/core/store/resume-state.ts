import { z } from 'zod';
import { LedgerEntry } from '../ledger/schema';
import { MessageParam } from '../model/messages';
import { Patch } from '../patches/schema';
import type { FoldState } from './fold';
import { checksummed, LineRef, readChecked } from './journal-format';
import { Plan } from './plan';
import {
  ApprovalRecord,
  Budget,
  CheckpointRecord,
  FileChange,
  FORMAT_VERSION,
  LineCrc,
  NoteRecord,
  RestoreRecord,
  RunEndRecord,
  RunRecord,
  RunFailure,
  RunStatus,
} from './records';

// What a run needs to continue, bounded by its live context and not by its length: the messages
// since the last compaction, the calls that are open, that the messages name or that had an
// external effect the recovery note must name, the latest patches of each file, approvals,
// budget and counters. A state snapshot is this, with the journal position it covers.

const count = z.number().int().nonnegative();

export { FileChange } from './records';

export const ResumeState = z.object({
  run: RunRecord,
  status: RunStatus,
  statusReason: z.string().optional(),
  /** Why the run stopped early, when its latest status record says (a model error, a limit). */
  failure: RunFailure.optional(),
  budget: Budget,
  /** The active history (after any branch) since the last compaction. */
  messages: z.array(MessageParam),
  /** Latest entry per call of the active history, in planning order: open calls, calls the messages name, the latest completed non-idempotent calls. */
  ledger: z.array(LedgerEntry),
  /** For each file, its latest patch that was not rolled back and every patch after it; and the patches of open calls. */
  patches: z.array(Patch),
  patchCount: count,
  /** The run's allow_for_run rules, and the decisions on the calls the ledger keeps. */
  approvals: z.array(ApprovalRecord),
  notes: z.array(NoteRecord),
  restores: z.array(RestoreRecord),
  ended: RunEndRecord.optional(),
  /** The last checkpoint of the active history. */
  latestCheckpoint: CheckpointRecord.optional(),
  /** The stop reason of the active history's latest answer (its last after_model checkpoint). */
  lastStopReason: z.string().optional(),
  /** Files restored, rolled back or undone since the model's last request: the next one carries a note naming them. */
  fileChanges: z.array(FileChange).optional(),
  /** A fork: how far into each ancestor's journal its person changes were taken in (ancestor_changes), by run. */
  ancestorsSeen: z.array(z.object({ runId: z.string(), seq: count })).optional(),
  /** The calls the latest instruction asked to undo (until the next instruction): calls made now compensate them. */
  undoing: z.array(z.string()).optional(),
  /** The model's plan as its latest succeeded update_plan call in the active history set it (plan.ts). */
  plan: Plan.optional(),
  /** The first new instruction since the run began or was forked, as its listing names a fork by (listedInstruction). */
  firstInstruction: z.string().optional(),
  checkpointCount: count,
  lastSeq: count,
  stepId: count,
  /** By path, the index (patch records before it) of its latest patch: what a fork from an earlier point learns of the files changed since (fork-fold.ts). A fork keeps none. */
  lastPatchIndex: z.array(z.object({ path: z.string(), index: count })).optional(),
  /** The seq of the latest record that changed what came before it (patch_state, restore, review, branch). A fork keeps none. */
  lastRevisionSeq: count.optional(),
});
export type ResumeState = z.infer<typeof ResumeState>;

/** An item a snapshot names by the journal line of the record that holds it. */
const ByLine = z.object({ line: LineRef });

/**
 * A snapshot's state: a resume state whose messages and ledger entries the file store may name by
 * their lines in the run's own journal (message and ledger records), so that a snapshot does not
 * copy the live context.
 */
export const SnapshotState = ResumeState.extend({
  messages: z.array(z.union([ByLine, MessageParam])),
  ledger: z.array(z.union([ByLine, LedgerEntry])),
});
export type SnapshotState = z.infer<typeof SnapshotState>;

/** A state snapshot: the state after record `lastSeq`, whose line (starting at `lastLineStart`, stating `lastLineCrc`) ends at `journalBytes`. */
export const Snapshot = z.object({
  v: z.number().int().positive(),
  journalBytes: count,
  lastLineStart: count,
  lastLineCrc: LineCrc,
  state: SnapshotState,
});
export type Snapshot = z.infer<typeof Snapshot>;
/** A snapshot's fields but its state (made once: a schema's first use in a process is slow). */
const SnapshotHead = Snapshot.omit({ state: true });

/**
 * Completed calls with external effects a resume tells the model not to repeat: the latest this
 * many before the step it resumes in. Older ones are left to the journal, so a run of many
 * commands resumes as fast as a short one.
 */
export const EARLIER_EFFECTS = 10;

export const OPEN = new Set<LedgerEntry['status']>(['planned', 'approved', 'started', 'uncertain']);

/** Call ids the messages name (tool_use and tool_result blocks). */
function namedCalls(messages: readonly MessageParam[]): Set<string> {
  const blocks = messages.flatMap((message) => (typeof message.content === 'string' ? [] : message.content));
  return new Set(blocks.flatMap((b) => (b.type === 'tool_use' ? [String(b.id)] : b.type === 'tool_result' ? [String(b.tool_use_id)] : [])));
}

function keptPatches(patches: Iterable<Patch>, openCalls: ReadonlySet<string>): Patch[] {
  const all = [...patches];
  const from = new Map<string, number>();
  all.forEach((patch, i) => {
    if (patch.state !== 'rolled_back' || !from.has(patch.path)) from.set(patch.path, i);
  });
  return all.filter((patch, i) => i >= from.get(patch.path)! || openCalls.has(patch.toolCallId));
}

/** A record as the snapshot holds it: without the seq the journal numbers it by. */
const plain = <T extends object>({ seq: _seq, ...rest }: T & { seq?: unknown }): T => rest as T;

/** The part of a fold a resume needs (the same whether folded from a snapshot or from the whole journal). */
export function resumeStateOf(state: FoldState): ResumeState {
  const named = namedCalls(state.messages);
  const all = [...state.ledger.values()];
  const isEffect = (entry: LedgerEntry) => entry.idempotency === 'non_idempotent' && entry.status === 'succeeded';
  // Of the effects before the current step, a resume names only the latest (recovery-note.ts).
  const dropped = new Set(all.filter((entry) => isEffect(entry) && entry.stepId < state.stepId).slice(0, -EARLIER_EFFECTS));
  const ledger = all.filter((entry) => OPEN.has(entry.status) || named.has(entry.callId) || (isEffect(entry) && !dropped.has(entry)));
  const open = new Set(ledger.filter((entry) => OPEN.has(entry.status)).map((entry) => entry.callId));
  // A decision on one call matters only while the resume can still meet that call; rules for the run always.
  const kept = new Set(ledger.map((entry) => entry.callId));
  const decided = (approval: ApprovalRecord) => approval.decision === 'allow_for_run' || kept.has(approval.target);
  const { status, budget, messages, patchCount, checkpointCount, lastSeq, stepId } = state;
  return {
    run: plain(state.run),
    status,
    budget,
    messages,
    ledger,
    patches: keptPatches(state.patches.values(), open),
    patchCount,
    approvals: state.approvals.filter(decided).map(plain),
    notes: state.notes.map(plain),
    restores: state.restores.map(plain),
    checkpointCount,
    lastSeq,
    stepId,
    ...(state.statusReason !== undefined ? { statusReason: state.statusReason } : {}),
    ...(state.failure !== undefined ? { failure: state.failure } : {}),
    ...(state.ended ? { ended: plain(state.ended) } : {}),
    ...(state.latestCheckpoint ? { latestCheckpoint: plain(state.latestCheckpoint) } : {}),
    ...(state.lastStopReason !== undefined ? { lastStopReason: state.lastStopReason } : {}),
    ...(state.fileChanges && state.fileChanges.length > 0 ? { fileChanges: state.fileChanges } : {}),
    ...(state.undoing ? { undoing: state.undoing } : {}),
    ...(state.firstInstruction !== undefined ? { firstInstruction: state.firstInstruction } : {}),
    ...(state.plan !== undefined ? { plan: state.plan } : {}),
    ...(state.ancestorsSeen ? { ancestorsSeen: state.ancestorsSeen } : {}),
    ...(state.lastPatchIndex ? { lastPatchIndex: [...state.lastPatchIndex].map(([path, index]) => ({ path, index })) } : {}),
    ...(state.lastRevisionSeq !== undefined ? { lastRevisionSeq: state.lastRevisionSeq } : {}),
  };
}

/** A snapshot file: its JSON on one line, closed by its checksum as a journal line is. */
export function encodeSnapshot(snapshot: Omit<Snapshot, 'v'>): Uint8Array {
  return new TextEncoder().encode(checksummed(JSON.stringify({ v: FORMAT_VERSION, ...snapshot }).slice(0, -1)));
}

/**
 * The snapshot in a file's bytes, or null when they do not hold (checksum, JSON, schema, version).
 * The state's fields are checked one at a time, letting `pause` (the event loop) run between them:
 * a schema's first use in a process is slow, and a resume must not hold the loop for it.
 */
export async function decodeSnapshot(bytes: Uint8Array, pause?: () => Promise<void>): Promise<Snapshot | null> {
  if (bytes[bytes.length - 1] !== 0x0a) return null;
  const raw = readChecked(bytes, 0, bytes.length - 1) as { state?: Record<string, unknown> } | null;
  await pause?.();
  const head = SnapshotHead.safeParse(raw);
  if (!head.success || head.data.v !== FORMAT_VERSION || typeof raw?.state !== 'object' || raw.state === null) return null;
  const state: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(SnapshotState.shape)) {
    await pause?.();
    const value = raw.state[key];
    // The live context's messages (up to a context window of them) and the other lists are checked a few items at a time.
    const field = schema instanceof z.ZodArray && Array.isArray(value) ? await parseInParts(schema, value, pause) : schema.safeParse(value);
    if (!field.success) return null;
    if (field.data !== undefined) state[key] = field.data;
  }
  return { ...head.data, state: state as SnapshotState };
}

/** Items of a list checked between two pauses of a snapshot's decoding (most are journal line references; a copied message's first check in a process takes milliseconds). */
const ITEMS_PER_PAUSE = 16;

async function parseInParts(
  schema: z.ZodArray,
  value: readonly unknown[],
  pause?: () => Promise<void>,
): Promise<z.ZodSafeParseResult<unknown[]>> {
  const data: unknown[] = [];
  for (let i = 0; i < value.length; i += ITEMS_PER_PAUSE) {
    if (i > 0) await pause?.();
    const part = schema.safeParse(value.slice(i, i + ITEMS_PER_PAUSE));
    if (!part.success) return part;
    data.push(...part.data);
  }
  return { success: true, data };
}
