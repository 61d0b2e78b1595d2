import { encodeText, hashContent } from '../../../src/core/patches/hash';
import { loadRunReview } from '../../../src/core/patches/review-load';
import { fullyKept, hunkRef, reviewFile, undoneLines, type HunkView } from '../../../src/core/patches/review';
import { splitLines } from '../../../src/core/patches/hunks';
import { randomUUID } from 'node:crypto';
import { silentLog } from '../../../src/core/ports';
import { undoHunksInline } from '../../../src/core/restore/inline-undo';
import type { RunWriter } from '../../../src/core/store/contract';
import type { NewRecord } from '../../../src/core/store/records';
import type { Prng } from '../faults/prng';
import { WALK_SETTINGS, type WalkWorld } from './world';

// The ways on, as a person (or a host) takes them, each over the real core: a step picks its
// run and its point at random and says what it did in one line (the failing sequence's replay).

export type StepKind = 'run' | 'resume' | 'instruction' | 'compaction' | 'restore' | 'rollback' | 'undo_restore' | 'keep' | 'undo' | 'fork';

export const STEP_KINDS: readonly StepKind[] = [
  'run',
  'resume',
  'resume',
  'instruction',
  'instruction',
  'compaction',
  'restore',
  'restore',
  'rollback',
  'undo_restore',
  'keep',
  'undo',
  'undo',
  'fork',
  'fork',
];

export interface StepContext {
  readonly world: WalkWorld;
  readonly prng: Prng;
  readonly runs: readonly string[];
  /** The kind of step taken (a step with no run to act on starts one). */
  kind?: StepKind;
  /** Names the run the step acts on (its requests are checked for the file note). */
  act(runId: string): void;
  /** The run the step opened for writing through the runtime or the restore actions (which settle a cut restore first). */
  opened?: string;
}

const never = () => new AbortController().signal;

function pickRun(ctx: StepContext): string | undefined {
  return ctx.runs.length === 0 ? undefined : ctx.prng.pick(ctx.runs);
}

/** Performs one step; returns its description. Errors (refusals, kills) propagate to the walk. */
export async function performStep(kind: StepKind, ctx: StepContext): Promise<string> {
  const runId = kind === 'run' ? undefined : pickRun(ctx);
  ctx.kind = runId === undefined ? 'run' : kind;
  if (kind === 'run' || runId === undefined) {
    const id = `walk-run-${ctx.runs.length + 1}-${ctx.world.process.pid}`;
    ctx.act(id);
    await ctx.world.runtime().start({ runId: id, task: 'Tidy the text files.', settings: WALK_SETTINGS, system: 'You tidy files.' });
    return `run ${id}`;
  }
  ctx.act(runId);
  if (kind !== 'keep' && kind !== 'undo' && kind !== 'restore' && kind !== 'fork') ctx.opened = runId;
  switch (kind) {
    case 'resume':
      await ctx.world.runtime().resume(runId, never(), { raise: { maxTurns: (await turnsOf(ctx, runId)) + 3 } });
      return `resume ${runId}`;
    case 'compaction': {
      const budget = 1200 + ctx.prng.int(2000);
      await ctx.world.runtime().resume(runId, never(), { raise: { maxTurns: (await turnsOf(ctx, runId)) + 2 }, maxContextTokens: budget });
      return `resume ${runId} with a context budget of ${budget} (compaction)`;
    }
    case 'instruction':
      await ctx.world.runtime().continue(runId, 'Now tidy them again.', never(), { moreTurns: 3 });
      return `new instruction to ${runId}`;
    case 'restore':
      return restore(ctx, runId);
    case 'rollback':
      return rollback(ctx, runId);
    case 'undo_restore': {
      const undone = await ctx.world.restoreActions().undoLastRestore(runId);
      return `undo the last restore of ${runId}${undone ? '' : ' (none)'}`;
    }
    case 'keep':
    case 'undo':
      return review(ctx, runId, kind);
    case 'fork':
      return fork(ctx, runId);
  }
}

/** The turn limit a run has now, or the turns it used when more (a raise must go above both). */
async function turnsOf(ctx: StepContext, runId: string): Promise<number> {
  const { budget } = await ctx.world.process.store.readResumeState(runId);
  return Math.max(budget.turns, budget.maxTurns);
}

async function restore(ctx: StepContext, runId: string): Promise<string> {
  const state = await ctx.world.process.store.readRun(runId);
  if (state.checkpoints.length === 0) return `restore ${runId}: no checkpoint`;
  const checkpoint = ctx.prng.pick(state.checkpoints);
  const what = ctx.prng.pick(['files', 'session', 'both'] as const);
  const force = ctx.prng.next() < 0.3;
  if (what !== 'session') ctx.opened = runId;
  const done = await ctx.world.restoreActions().restoreCheckpoint(runId, checkpoint.checkpointId, what, force);
  if (done.fork) ctx.act(done.fork.runId);
  return `restore ${what} of ${runId} to ${checkpoint.checkpointId} (${checkpoint.label}, step ${checkpoint.stepId})${force ? ' forced' : ''}${done.fork ? ` -> fork ${done.fork.runId}` : ''}`;
}

async function rollback(ctx: StepContext, runId: string): Promise<string> {
  const state = await ctx.world.process.store.readRun(runId);
  const patches = state.patches.filter((p) => p.state !== 'rolled_back');
  if (patches.length === 0) return `rollback in ${runId}: no patch`;
  const patch = ctx.prng.pick(patches);
  const hunk = ctx.prng.next() < 0.3;
  const target = hunk
    ? { kind: 'hunk' as const, patchId: patch.patchId, hunkIndex: 0 }
    : { kind: 'patch' as const, patchId: patch.patchId };
  await ctx.world.restoreActions().rollback(runId, target, { force: ctx.prng.next() < 0.2 });
  return `rollback ${hunk ? 'hunk 0 of ' : ''}patch ${patch.patchId} (${patch.path}) in ${runId}`;
}

/** Inline Keep / Undo as the editor's review does them (host/vscode/review/actions.ts): the edit first, then the record. */
async function review(ctx: StepContext, runId: string, decision: 'keep' | 'undo'): Promise<string> {
  const { store } = ctx.world.process;
  const loaded = await loadRunReview(store, runId);
  const paths = [...new Set(loaded.pending.map((p) => p.patch.path))];
  if (paths.length === 0) return `${decision} in ${runId}: nothing to review`;
  const path = ctx.prng.pick(paths);
  const text = ctx.world.workspace.text(path);
  if (text === null) return `${decision} in ${runId}: ${path} is gone`;
  const views = reviewFile(
    text,
    loaded.pending.filter((p) => p.patch.path === path),
  ).filter((v) => v.state === 'waiting');
  if (views.length === 0) return `${decision} in ${runId}: no waiting hunk in ${path}`;
  const view = ctx.prng.pick(views);
  if (decision === 'keep') {
    const accepted = fullyKept(loaded.pending, [hunkRef(view)], loaded.decisions);
    await append(ctx, runId, [
      { type: 'review', decision: 'keep', hunks: [hunkRef(view)] },
      ...accepted.map((patchId): NewRecord => ({ type: 'patch_state', patchId, state: 'accepted', reason: 'every hunk kept in review' })),
    ]);
    return `keep hunk ${view.hunk.index} of ${view.patch.patchId} (${path}) in ${runId}`;
  }
  await withWriter(ctx, runId, (journal) => undoHunk(ctx, journal, path, text, view));
  return `undo hunk ${view.hunk.index} of ${view.patch.patchId} (${path}) in ${runId}`;
}

/** The undo as the core does it: its restore record, the edit, its restore_done and decision (inline-undo.ts). */
async function undoHunk(ctx: StepContext, journal: RunWriter, path: string, text: string, view: HunkView): Promise<void> {
  const lines = undoneLines(splitLines(text), view);
  if (!lines) throw new Error(`hunk of ${path} is not waiting`);
  const live = encodeText(text, false);
  const result = encodeText(lines.join(''), false);
  const { store } = ctx.world.process;
  const deps = { workspace: ctx.world.workspace, blobs: store, journal, clock: ctx.world.process.clock, log: silentLog, newId: randomUUID };
  await undoHunksInline(deps, { path, live, liveHash: hashContent(live), result, resultHash: hashContent(result), hunks: [hunkRef(view)] });
}

async function withWriter(ctx: StepContext, runId: string, work: (writer: RunWriter) => Promise<void>): Promise<void> {
  const writer = await ctx.world.process.store.openWriter(runId);
  try {
    await work(writer);
  } finally {
    await writer.close().catch(() => undefined);
  }
}

async function append(ctx: StepContext, runId: string, records: NewRecord[]): Promise<void> {
  await withWriter(ctx, runId, async (writer) => {
    await writer.append(records);
  });
}

async function fork(ctx: StepContext, runId: string): Promise<string> {
  const state = await ctx.world.process.store.readRun(runId);
  const steps = [...new Set(state.checkpoints.map((c) => c.stepId).filter((s) => s >= 1))];
  if (steps.length === 0) return `fork of ${runId}: no step`;
  const step = ctx.prng.pick(steps);
  const files = ctx.prng.next() < 0.4 ? 'restore' : 'keep';
  if (files === 'restore') ctx.opened = runId;
  const done = await ctx.world.restoreActions().fork(runId, { step }, files, ctx.prng.next() < 0.3);
  ctx.act(done.fork.runId);
  return `fork ${runId} at the start of step ${step}, files ${files} -> ${done.fork.runId}`;
}
