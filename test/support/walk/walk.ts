import { toolUsesOf, type ContentBlock, type MessageParam } from '../../../src/core/model/messages';
import type { ModelRequest } from '../../../src/core/model/provider';
import { ABSENT } from '../../../src/core/patches/hash';
import { SUMMARY_REQUEST } from '../../../src/core/runtime/compaction';
import { isRuntimeNote } from '../../../src/core/runtime/recovery-note';
import { Prng } from '../faults/prng';
import { performStep, STEP_KINDS, type StepContext } from './actions';
import { strandedRuns } from './stranded';
import { FileTracker } from './tracker';
import { isKilled, WalkWorld } from './world';

// One random walk: a seeded sequence of steps over one workspace and one store, each step a
// way on (run, resume, new instruction, compaction, restore files/session/both, rollback, undo
// of a restore, inline Keep/Undo, fork), a third of them cut by a kill -9 at a random save
// point. After every step: every request the runtime sent passed the API's rules; no open call
// is `succeeded` in a run's ledger while its file is back to before the call; every file holds
// what the journals say; and each file a person restored, rolled back or undid since a run's
// model last saw it is named in that run's next request. About one answer in seven is drawn from
// the table of documented answers; at the end, a run that resume, a new instruction and a fork
// with a new instruction all fail to complete once the model answers normally is stranded.

export interface SequenceResult {
  readonly seed: number;
  readonly steps: string[];
  readonly invalidRequests: number;
  readonly ledgerMismatches: number;
  readonly fileMismatches: number;
  readonly noteMismatches: number;
  readonly unexpectedErrors: number;
  readonly kills: number;
  readonly requests: number;
  readonly strandedRuns: number;
  readonly drawnAnswers: number;
  /** Model answers in all (the table's share is drawn / answers). */
  readonly answers: number;
  readonly problems: string[];
}

/** Errors a step may end with: refusals a person reads, and the kill. Any other is a defect. */
const EXPECTED_ERRORS = new Set(['ResumeError', 'RollbackTargetError', 'RunBusyError', 'StaleContentError']);

function textAfterLastAnswer(messages: readonly MessageParam[]): string {
  const last = messages.map((m) => m.role).lastIndexOf('assistant');
  return messages
    .slice(last + 1)
    .flatMap((m) => (typeof m.content === 'string' ? [m.content] : m.content.map(blockText)))
    .join('\n');
}

/** A text block's words, or the runtime's note inside a tool_result (where the recovery note goes); not tool output. */
function blockText(block: ContentBlock): string {
  if (block.type === 'text') return String(block.text);
  if (block.type !== 'tool_result' || !Array.isArray(block.content)) return '';
  return block.content
    .map((inner) => (inner.type === 'text' && typeof inner['text'] === 'string' && isRuntimeNote(inner['text']) ? inner['text'] : ''))
    .join('\n');
}

export class Sequence {
  readonly world: WalkWorld;
  readonly tracker: FileTracker;
  readonly prng: Prng;
  readonly runs: string[] = [];
  readonly steps: string[] = [];
  readonly problems: string[] = [];
  acting: string | undefined;
  stepNo = 0;
  /** Per run: open calls recorded `succeeded` whose file is back to before them. */
  readonly undoneCalls = new Map<string, Set<string>>();
  counts = { invalid: 0, ledger: 0, files: 0, notes: 0, errors: 0, kills: 0, requests: 0, stranded: 0 };

  constructor(readonly seed: number) {
    this.prng = new Prng(seed);
    this.world = new WalkWorld(seed, { onRequest: (r) => this.onRequest(r) }, this.prng.next() < 0.5 ? 0 : 1 << 20);
    this.tracker = new FileTracker(this.world.workspace);
  }

  private problem(kind: keyof Sequence['counts'], text: string): void {
    this.counts[kind] += 1;
    this.problems.push(`step ${this.stepNo}: ${text}`);
  }

  /**
   * The walk's note check: a request of a run that has files pending names each of them. The
   * records the step appended before the request (a cut restore or undo the runtime settled, say)
   * are taken in first: the request answers for them, not the next one.
   */
  private async onRequest(request: ModelRequest): Promise<void> {
    this.counts.requests += 1;
    await this.takeRecords();
    // A compaction's summary request reads the history before the latest answer: not a turn on it.
    if (textAfterLastAnswer(request.messages).includes(SUMMARY_REQUEST)) return;
    this.checkDoneCalls(textAfterLastAnswer(request.messages));
    const pending = this.acting === undefined ? undefined : this.tracker.pending.get(this.acting);
    if (!pending || pending.size === 0) return;
    const text = textAfterLastAnswer(request.messages);
    const missing = [...pending].filter((path) => !text.includes(path) && !this.tracker.leftByCutRestore(path));
    if (missing.length > 0)
      this.problem('notes', `the request of ${this.acting} does not name ${missing.join(', ')} (changed since its model last saw them)`);
    pending.clear();
  }

  /** A call the files say is undone is never listed among the calls the model must not repeat. */
  private checkDoneCalls(text: string): void {
    const undone = this.acting === undefined ? undefined : this.undoneCalls.get(this.acting);
    if (!undone || undone.size === 0) return;
    let section = '';
    for (const line of text.split('\n')) {
      if (!line.startsWith('- ')) section = line;
      else if (/do not repeat/.test(section) && [...undone].some((id) => line.includes(id)))
        this.problem('ledger', `${this.acting}: the model is told ${line.slice(2, 60)}... is done, but its change is undone`);
    }
    undone.clear();
  }

  async step(): Promise<void> {
    this.stepNo = this.steps.length + 1;
    const kind = this.prng.pick(STEP_KINDS);
    const killAt = this.prng.next() < 0.35 ? 1 + this.prng.int(24) : undefined;
    const proc = killAt === undefined ? this.world.process : this.world.spawn(killAt);
    const ctx: StepContext = {
      world: this.world,
      prng: this.prng,
      runs: this.runs,
      act: (id) => (this.acting = id),
    };
    const refusedBefore = this.world.model.refused.length;
    let text: string;
    let threw = false;
    try {
      this.acting = undefined;
      text = await performStep(kind, ctx);
    } catch (error) {
      threw = true;
      const name = error instanceof Error ? error.name : 'thrown';
      text = `${ctx.kind ?? kind} ${this.acting ?? ''}: ${isKilled(error) ? 'cut by the kill' : `${name}: ${(error as Error).message}`}`;
      if (!isKilled(error) && !proc.dead && !EXPECTED_ERRORS.has(name)) this.problem('errors', `unexpected ${text}`);
    }
    const killed = proc.dead;
    if (killed) this.counts.kills += 1;
    this.steps.push(`${text}${killed ? ` [kill -9 after sync ${killAt}]` : ''}`);
    if (killAt !== undefined) this.world.spawn(undefined);
    for (const breach of this.world.model.refused.slice(refusedBefore))
      this.problem('invalid', `a request breaks ${breach.rule}: ${breach.message}`);
    await this.check();
    if (!killed && !threw && ctx.opened !== undefined) await this.checkSettled(ctx.opened);
  }

  /** A run a step opened for writing (and finished with) has no restore awaiting its restore_done: none is taken as done unconfirmed. */
  private async checkSettled(runId: string): Promise<void> {
    for (const restore of (await this.world.process.store.readResumeState(runId)).restores)
      if (restore.confirm) this.problem('files', `${runId} was opened, and restore ${restore.restoreId} still awaits its restore_done`);
  }

  /** Every run's records not taken yet, into the tracker. */
  private async takeRecords(): Promise<void> {
    const { store } = this.world.process;
    for (const summary of await store.listRuns()) {
      if (!this.runs.includes(summary.runId)) this.runs.push(summary.runId);
      await this.tracker.take(summary.runId, await store.readRecords(summary.runId));
    }
  }

  /** The checks after a step (public for the walk's self-checks, which take steps of their own). */
  async check(): Promise<void> {
    await this.takeRecords();
    for (const problem of await this.tracker.mismatches()) this.problem('files', problem);
    for (const runId of this.runs) {
      try {
        await this.checkLedger(runId);
      } catch (error) {
        this.problem('errors', `run ${runId} does not open: ${(error as Error).message}`);
      }
    }
  }

  /**
   * An open call of the active history whose ledger entry is `succeeded` is what a resume would
   * reuse: when its patch was rolled back, or its file is back to before it all the same (a
   * restore in another run), the next request must not tell the model it is done (onRequest).
   */
  private async checkLedger(runId: string): Promise<void> {
    const state = await this.world.process.store.readResumeState(runId);
    const last = state.messages.at(-1);
    const undone = new Set<string>();
    this.undoneCalls.set(runId, undone);
    if (!last || last.role !== 'assistant' || state.ended) return;
    for (const use of toolUsesOf(last)) {
      const entry = state.ledger.find((e) => e.callId === use.id);
      if (entry?.status !== 'succeeded') continue;
      for (const patchId of entry.patchIds ?? []) {
        const patch = state.patches.find((p) => p.patchId === patchId);
        if (!patch) continue;
        const live = (await this.world.workspace.read(patch.path))?.hash ?? ABSENT;
        if (patch.state === 'rolled_back' || (live === patch.beforeHash && live !== patch.afterHash)) undone.add(use.id);
      }
    }
  }

  /** The end of a sequence: no run is stranded once the model answers normally; the checks once more. */
  async checkStranded(): Promise<void> {
    this.stepNo = this.steps.length + 1;
    this.acting = undefined;
    const refusedBefore = this.world.model.refused.length;
    for (const stranded of await strandedRuns(this.world, this.world.walkModel, this.runs)) this.problem('stranded', stranded);
    for (const breach of this.world.model.refused.slice(refusedBefore))
      this.problem('invalid', `a request breaks ${breach.rule}: ${breach.message}`);
    await this.check();
  }

  result(): SequenceResult {
    const c = this.counts;
    return {
      seed: this.seed,
      steps: this.steps,
      invalidRequests: c.invalid,
      ledgerMismatches: c.ledger,
      fileMismatches: c.files,
      noteMismatches: c.notes,
      unexpectedErrors: c.errors,
      kills: c.kills,
      requests: c.requests,
      strandedRuns: c.stranded,
      drawnAnswers: this.world.walkModel.drawn,
      answers: this.world.walkModel.answers - this.world.walkModel.finished,
      problems: this.problems,
    };
  }
}

/** One sequence of `length` steps from `seed` (WALK_SEED replays it). */
export async function runSequence(seed: number, length: number): Promise<SequenceResult> {
  const sequence = new Sequence(seed);
  await sequence.world.prepare();
  await sequence.tracker.start();
  for (let i = 0; i < length; i++) await sequence.step();
  await sequence.checkStranded();
  return sequence.result();
}

export interface WalkSummary {
  readonly sequences: number;
  readonly steps: number;
  readonly invalid_requests: number;
  readonly ledger_mismatches: number;
  readonly file_mismatches: number;
  readonly note_mismatches: number;
  readonly unexpected_errors: number;
  readonly kills: number;
  readonly requests: number;
  /** Model answers drawn from the table of documented answers, and their share of all answers. */
  readonly drawn_answers: number;
  readonly drawn_share: number;
  readonly stranded_runs: number;
  readonly seed: number;
}

export function failed(result: SequenceResult): boolean {
  return result.problems.length > 0;
}

/** How a failing sequence is shown: its seed (WALK_SEED=...) and its steps, then what broke. */
export function describeFailure(result: SequenceResult): string {
  return [
    `sequence seed ${result.seed} (replay: WALK_SEED=${result.seed})`,
    ...result.steps.map((s, i) => `  ${i + 1}. ${s}`),
    ...result.problems.slice(0, 8).map((p) => `  ! ${p}`),
  ].join('\n');
}

/** `count` sequences, seeds derived from `seed`; the first failures kept whole. */
export async function runWalk(count: number, seed: number, length: number): Promise<{ summary: WalkSummary; failures: SequenceResult[] }> {
  const failures: SequenceResult[] = [];
  const total = {
    steps: 0,
    invalid: 0,
    ledger: 0,
    files: 0,
    notes: 0,
    errors: 0,
    kills: 0,
    requests: 0,
    stranded: 0,
    drawn: 0,
    answers: 0,
  };
  for (let i = 0; i < count; i++) {
    const result = await runSequence((seed + i * 7919) >>> 0, length);
    total.steps += result.steps.length;
    total.invalid += result.invalidRequests;
    total.ledger += result.ledgerMismatches;
    total.files += result.fileMismatches;
    total.notes += result.noteMismatches;
    total.errors += result.unexpectedErrors;
    total.kills += result.kills;
    total.requests += result.requests;
    total.stranded += result.strandedRuns;
    total.drawn += result.drawnAnswers;
    total.answers += result.answers;
    if (failed(result) && failures.length < 5) failures.push(result);
  }
  return {
    summary: {
      sequences: count,
      steps: total.steps,
      invalid_requests: total.invalid,
      ledger_mismatches: total.ledger,
      file_mismatches: total.files,
      note_mismatches: total.notes,
      unexpected_errors: total.errors,
      kills: total.kills,
      requests: total.requests,
      drawn_answers: total.drawn,
      drawn_share: total.answers === 0 ? 0 : Math.round((total.drawn / total.answers) * 1000) / 1000,
      stranded_runs: total.stranded,
      seed,
    },
    failures,
  };
}
