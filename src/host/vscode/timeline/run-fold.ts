import type { MessageParam } from '../../../core/model/messages';
import type { LiveState, Patch } from '../../../core/patches/schema';
import type { JournalDamage, RunState } from '../../../core/store/contract';
import { BranchNeedsRecords, foldRecord, runStateOf, type FoldState } from '../../../core/store/fold';
import type { StoredRecord } from '../../../core/store/records';
import { buildSteps, runHeader } from '../../../protocol/build';
import type { RunHolder, RunView, StepRow } from '../../../protocol/viewModel';

// A run the Timeline shows, kept folded in memory: read from disk once (when the view opens it,
// or after another process or an action wrote it), then advanced by the records the runtime
// emits, with the same fold every reader uses. The newest steps are rebuilt from the fold; the
// steps before them are what the view already has.

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
  /** The lowest step changed since the view was last built from this fold (Infinity: none). */
  private touched = Infinity;

  private constructor(
    private readonly fold: FoldState,
    private readonly damage: JournalDamage | undefined,
  ) {}

  /** The fold of a state read from the store. */
  static of(state: RunState): RunFold {
    const messages = [...state.messages];
    // Checkpoints of the current history count in the fold's own copy of it.
    const historyOf = new Map<string, readonly MessageParam[]>();
    for (const [id, history] of state.historyOf ?? []) historyOf.set(id, history === state.messages ? messages : history);
    const fold: FoldState = {
      run: state.run,
      status: state.status,
      statusReason: state.statusReason,
      budget: state.budget,
      messages,
      ledger: new Map(state.ledger.map((entry) => [entry.callId, entry])),
      patches: new Map(state.patches.map((patch) => [patch.patchId, patch])),
      // The number of patch records; only a writer's next checkpoint needs it.
      patchCount: state.patches.length,
      approvals: [...state.approvals],
      notes: [...state.notes],
      restores: [...state.restores],
      ended: state.ended,
      latestCheckpoint: state.latestCheckpoint,
      lastStopReason: state.lastStopReason,
      checkpointCount: state.checkpointCount,
      lastSeq: state.lastSeq,
      stepId: state.stepId,
      checkpoints: [...state.checkpoints],
      allCheckpoints: [...state.allCheckpoints],
      historyOf,
    };
    return new RunFold(fold, state.damage);
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
   * Folds records the runtime appended. False when they do not follow the fold (a gap, or a
   * branch that needs the records before it): the run must be read again.
   */
  append(records: readonly StoredRecord[]): boolean {
    if (this.damage || records[0]?.seq !== this.fold.lastSeq + 1) return false;
    for (const record of records) {
      this.touched = Math.min(this.touched, stepOf(this.fold, record));
      try {
        foldRecord(this.fold, record);
      } catch (error) {
        if (error instanceof BranchNeedsRecords) return false;
        throw error;
      }
    }
    return true;
  }

  /** The pending patches of the steps from `from` on (those a view rebuild classifies). */
  pendingFrom(stepId: number): Patch[] {
    const out: Patch[] = [];
    for (const patch of this.fold.patches.values()) if (patch.state === 'pending' && patch.stepId >= stepId) out.push(patch);
    return out;
  }

  /** The step the next view update starts from, and forgets it (the caller sends that update). */
  takeTouched(): number {
    const touched = this.touched;
    this.touched = Infinity;
    return touched;
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
        budget: f.budget,
        restores: f.restores,
        allCheckpoints: f.allCheckpoints ?? [],
        notes: f.notes,
        ...(f.ended ? { ended: f.ended } : {}),
        ...(this.damage ? { damage: this.damage } : {}),
      },
      active,
      heldElsewhere,
    );
  }

  /** The rows from checkpoint index `from` on. */
  steps(live: ReadonlyMap<string, LiveState>, from = 0): StepRow[] {
    const f = this.fold;
    return buildSteps(
      { checkpoints: f.checkpoints ?? [], messages: f.messages, notes: f.notes, ledger: f.ledger.values(), patches: f.patches.values() },
      live,
      from,
    );
  }
}
