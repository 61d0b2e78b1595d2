import type { RunState } from '../../../core/store/contract';
import type { StoredRecord } from '../../../core/store/records';
import { RunFold } from './run-fold';

/**
 * The folds of the runs the Timeline shows, one per run for the whole window: every Timeline view
 * and editor tab reads the same fold. A run is read when a view first needs it or after a write
 * from elsewhere; the records this window appends advance its fold once, however many views hear
 * of them (a batch is told to each view: the first folds it, the others get the same answer).
 */
export class RunFolds {
  private readonly folds = new Map<string, RunFold>();
  private readonly loading = new Map<string, Promise<RunFold>>();
  /** Records appended while a run is being read (unknown: a write from elsewhere). */
  private readonly during = new Map<string, { records: StoredRecord[]; unknown: boolean }>();
  /** What folding each batch answered (the step it touched from, or false: dropped), by the batch. */
  private readonly answered = new WeakMap<readonly StoredRecord[], number | false>();

  constructor(private readonly readRun: (runId: string) => Promise<RunState>) {}

  /** The run's fold now, if one is kept. */
  peek(runId: string): RunFold | undefined {
    return this.folds.get(runId);
  }

  get(runId: string): Promise<RunFold> {
    const cached = this.folds.get(runId);
    if (cached) return Promise.resolve(cached);
    let loading = this.loading.get(runId);
    if (!loading) {
      loading = this.load(runId).finally(() => this.loading.delete(runId));
      this.loading.set(runId, loading);
    }
    return loading;
  }

  /** Reads the run; what the runtime appended while it was read is folded in after, or it is read again next time. */
  private async load(runId: string): Promise<RunFold> {
    const during: { records: StoredRecord[]; unknown: boolean } = { records: [], unknown: false };
    this.during.set(runId, during);
    try {
      const fold = RunFold.of(await this.readRun(runId));
      const missed = during.records.filter((r) => r.seq > fold.lastSeq);
      if (!during.unknown && (missed.length === 0 || fold.append(missed) !== false)) this.folds.set(runId, fold);
      return fold;
    } finally {
      this.during.delete(runId);
    }
  }

  /**
   * Records were appended to a run: folded in when the runtime gave them and they follow what is
   * folded (the lowest step they touched is returned); otherwise (another process, an action, a
   * gap) the fold is let go and the run read again when needed (false).
   */
  recordsChanged(runId: string, records?: readonly StoredRecord[]): number | false {
    if (records && this.answered.has(records)) return this.answered.get(records)!;
    const during = this.during.get(runId);
    if (during && records) during.records.push(...records);
    else if (during) during.unknown = true;
    const fold = this.folds.get(runId);
    const touched = fold && records ? fold.append(records) : false;
    if (touched === false) this.folds.delete(runId);
    if (records) this.answered.set(records, touched);
    return touched;
  }

  /** Lets the run's fold go (it is read again when needed). */
  drop(runId: string): void {
    this.folds.delete(runId);
  }
}
