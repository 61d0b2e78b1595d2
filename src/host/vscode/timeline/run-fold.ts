import type { MessageParam } from '../../../core/model/messages';
import type { LiveState, Patch } from '../../../core/patches/schema';
import type { JournalDamage, RunState } from '../../../core/store/contract';
import { BranchNeedsRecords, foldFromResumeState, foldRecord, runStateOf, type FoldState } from '../../../core/store/fold';
import type { StoredRecord } from '../../../core/store/records';
import { buildSteps, runHeader } from './view-build';
import type { RunHolder, RunView, StepRow } from '../../../protocol/viewModel';

// A run the Timeline shows, kept folded in memory once per window (run-folds.ts: every view and
// tab reads the same fold): read from disk once (when a view opens it, or after another process
// or an action wrote it), then advanced by the records the runtime emits, with the same fold
// every reader uses. The newest steps are rebuilt from the fold; the steps before them are what
// each view already has (each view keeps which steps the records touched since it last built).

/** The records a fold record touches from: the step it belongs to (Infinity: only the header). */
function stepOf(fold: FoldState, record: StoredRecord): number {
  switch (record.type) {
    case 'checkpoint':
    case 'message':
      return record.stepId;
    case 'ledger':
      return record.entry.stepId;
    case 'patch':
      return record.patch.stepId;
    case 'patch_state':
      return fold.patches.get(record.patchId)?.stepId ?? 0;
    case 'compaction':
      return fold.stepId;
    default:
      return Infinity;
  }
}

export class RunFold {
  /** The first checkpoint index whose step can be built again: the histories before it are let go. */
  private rebuildFrom = 0;
  /** A history may have been replaced (read from disk, or a compaction folded in) since the last build. */
  private historiesChanged = true;

  private constructor(
    private readonly fold: FoldState,
    private readonly damage: JournalDamage | undefined,
  ) {}

  /** The fold of a state read from the store. */
  static of({ damage, historyOf: histories, ...state }: RunState): RunFold {
    // patchCount (the number of patch records) is only for a writer's next checkpoint.
    const fold = foldFromResumeState({ ...state, patchCount: state.patches.length });
    // Checkpoints of the current history count in the fold's own copy of it.
    const historyOf = new Map<string, readonly MessageParam[]>();
    for (const [id, history] of histories ?? []) historyOf.set(id, history === state.messages ? fold.messages : history);
    const full = { ...fold, checkpoints: [...state.checkpoints], allCheckpoints: [...state.allCheckpoints], historyOf };
    return new RunFold(full, damage);
  }

  get lastSeq(): number {
    return this.fold.lastSeq;
  }

  get patches(): Iterable<Patch> {
    return this.fold.patches.values();
  }

  patch(patchId: string): Patch | undefined {
    return this.fold.patches.get(patchId);
  }

  /** The state as RunState readers get it (copies the ledger and patches: for actions, not for every step). */
  state(): RunState {
    const state = runStateOf(this.fold);
    return this.damage ? { ...state, damage: this.damage } : state;
  }

  /**
   * Folds records the runtime appended; returns the lowest step they touched (Infinity: only the
   * header). False when they do not follow the fold (a gap, or a branch that needs the records
   * before it): the run must be read again.
   */
  append(records: readonly StoredRecord[]): number | false {
    if (this.damage || records[0]?.seq !== this.fold.lastSeq + 1) return false;
    let touched = Infinity;
    for (const record of records) {
      touched = Math.min(touched, stepOf(this.fold, record));
      if (record.type === 'compaction') this.historiesChanged = true;
      try {
        foldRecord(this.fold, record);
      } catch (error) {
        if (error instanceof BranchNeedsRecords) return false;
        throw error;
      }
    }
    return touched;
  }

  /** The pending patches of the steps from `from` on (those a view rebuild classifies). */
  pendingFrom(stepId: number): Patch[] {
    const out: Patch[] = [];
    for (const patch of this.fold.patches.values()) if (patch.state === 'pending' && patch.stepId >= stepId) out.push(patch);
    return out;
  }

  /** The checkpoint index and step id where the rows from step `stepId` begin (the step holding it). */
  tailStart(stepId: number): { index: number; stepId: number } {
    const checkpoints = this.fold.checkpoints ?? [];
    let i = checkpoints.length - 1;
    while (i > 0 && checkpoints[i]!.stepId > stepId) i--;
    const step = checkpoints[i]?.stepId ?? 0;
    while (i > 0 && checkpoints[i - 1]!.stepId === step) i--;
    return { index: Math.max(0, i), stepId: step };
  }

  header(active: boolean, heldElsewhere?: RunHolder): RunView['header'] {
    const f = this.fold;
    return runHeader(
      {
        run: f.run,
        status: f.status,
        ...(f.statusReason !== undefined ? { statusReason: f.statusReason } : {}),
        ...(f.failure !== undefined ? { failure: f.failure } : {}),
        budget: f.budget,
        restores: f.restores,
        allCheckpoints: f.allCheckpoints ?? [],
        notes: f.notes,
        ...(f.ended ? { ended: f.ended } : {}),
        ...(f.firstInstruction !== undefined ? { firstInstruction: f.firstInstruction } : {}),
        ...(f.plan !== undefined ? { plan: f.plan } : {}),
        ...(this.damage ? { damage: this.damage } : {}),
      },
      active,
      heldElsewhere,
    );
  }

  /** Whether the rows from checkpoint index `from` on can be built from what the fold keeps. */
  canBuild(from: number): boolean {
    return from >= this.rebuildFrom;
  }

  /**
   * The rows from checkpoint index `from` on (see canBuild). Then the histories before the
   * current one are let go: the view has their steps, and a long run's earlier messages would
   * otherwise stay in memory for as long as it is shown.
   */
  steps(live: ReadonlyMap<string, LiveState>, from = 0): StepRow[] {
    const f = this.fold;
    const source = {
      checkpoints: f.checkpoints ?? [],
      messages: f.messages,
      notes: f.notes,
      ledger: f.ledger.values(),
      patches: f.patches.values(),
    };
    const rows = buildSteps(f.historyOf ? { ...source, historyOf: f.historyOf } : source, live, from);
    this.forgetEarlierHistories();
    return rows;
  }

  private forgetEarlierHistories(): void {
    const { historyOf, checkpoints, messages } = this.fold;
    if (!historyOf || !checkpoints || !this.historiesChanged) return;
    this.historiesChanged = false;
    let dropped = false;
    for (const [id, history] of historyOf) if (history !== messages) dropped = historyOf.delete(id);
    if (!dropped) return;
    const first = checkpoints.findIndex((c) => historyOf.has(c.checkpointId));
    // The step the current history begins in can still be built: its last checkpoints count in it.
    this.rebuildFrom = first < 0 ? checkpoints.length : this.tailStart(checkpoints[first]!.stepId).index;
  }
}
