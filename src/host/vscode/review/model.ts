import * as vscode from 'vscode';
import { splitLines } from '../../../core/patches/hunks';
import { reviewFile, type HunkView, type PendingPatch } from '../../../core/patches/review';
import { loadRunReview, withRecords, type HunkCache, type ReviewSource, type RunReview } from '../../../core/patches/review-load';
import type { StoredRecord } from '../../../core/store/records';

export interface ReviewModelDeps {
  /** The run listing carries each run's pending patches: a run with none is not read. */
  readonly source: ReviewSource & { listRuns(): Promise<readonly { readonly runId: string; readonly pendingPatches?: number }[]> };
  /** Live text of a workspace path (the open buffer, else disk); undefined when absent or binary. */
  readLive(path: string): Promise<string | undefined>;
  readonly log: (message: string) => void;
}

/**
 * The review state of every run of the workspace: the pending hunks per file (from the journal)
 * and where each is in the live text now (from the buffers). Cheap to update on every keystroke:
 * one file's hunks are located again in its text.
 */
export class ReviewModel implements vscode.Disposable {
  private readonly runs = new Map<string, RunReview>();
  private byPath = new Map<string, PendingPatch[]>();
  private readonly views = new Map<string, readonly HunkView[]>();
  private readonly cache: HunkCache = new Map();
  private readonly changed = new vscode.EventEmitter<readonly string[]>();
  /** Fires the paths whose hunks or their places changed. */
  readonly onDidChange = this.changed.event;
  private loading: Promise<void> = Promise.resolve();

  constructor(private readonly deps: ReviewModelDeps) {}

  /** Serialises loads, so that an older read never overwrites a newer one. */
  private queue(work: () => Promise<void>): Promise<void> {
    this.loading = this.loading.then(work).catch((error: unknown) => this.deps.log(`review state not read: ${String(error)}`));
    return this.loading;
  }

  /** Forgets everything read so far (the next reloadAll derives it all again from disk). */
  reset(): void {
    const paths = [...this.views.keys()];
    this.runs.clear();
    this.byPath = new Map();
    this.views.clear();
    this.cache.clear();
    if (paths.length > 0) this.changed.fire(paths);
  }

  /**
   * Follows the run listing (activation, a run created or removed): reads only the runs never
   * read before that have patches pending (all of them with `all`: a reload from disk).
   */
  reloadAll(all = false): Promise<void> {
    return this.queue(async () => {
      const list = await this.deps.source.listRuns();
      const listed = new Set(list.map((r) => r.runId));
      const touched = new Set([...this.runs.keys()].filter((id) => !listed.has(id)));
      touched.forEach((id) => this.runs.delete(id));
      for (const { runId, pendingPatches } of list) {
        if (this.runs.has(runId) && !all) continue;
        if (pendingPatches === 0) this.runs.set(runId, { runId, patches: new Map(), pending: [], decisions: new Map() });
        else await this.readRun(runId);
        touched.add(runId);
      }
      await this.rebuild(touched);
    });
  }

  /** Re-reads one run (a write from elsewhere, or records that cannot be folded in). */
  reloadRun(runId: string): Promise<void> {
    return this.queue(async () => {
      await this.readRun(runId);
      await this.rebuild(new Set([runId]));
    });
  }

  /** A writer of this window appended records (a step, a decision, a restore): folded in without reading the run. */
  recordsAppended(runId: string, records: readonly StoredRecord[]): Promise<void> {
    return this.queue(async () => {
      const next = await withRecords(this.deps.source, runId, this.runs.get(runId), records, this.cache);
      if (next) this.runs.set(runId, next);
      else await this.readRun(runId);
      await this.rebuild(new Set([runId]));
    });
  }

  private async readRun(runId: string): Promise<void> {
    try {
      this.runs.set(runId, await loadRunReview(this.deps.source, runId, this.cache));
    } catch (error) {
      this.runs.delete(runId);
      this.deps.log(`review of run ${runId} not read: ${String(error)}`);
    }
  }

  /** Groups pending patches per file (oldest first) and locates the touched files' hunks again. */
  private async rebuild(touchedRuns: ReadonlySet<string>): Promise<void> {
    const byPath = new Map<string, PendingPatch[]>();
    for (const review of this.runs.values())
      for (const pending of review.pending) byPath.set(pending.patch.path, [...(byPath.get(pending.patch.path) ?? []), pending]);
    for (const list of byPath.values()) list.sort((a, b) => a.patch.createdAt - b.patch.createdAt);
    const touched = new Set<string>();
    for (const [path, views] of this.views) if (views.some((v) => touchedRuns.has(v.patch.runId)) || !byPath.has(path)) touched.add(path);
    for (const [path, list] of byPath) if (list.some((p) => touchedRuns.has(p.patch.runId)) || !this.views.has(path)) touched.add(path);
    this.byPath = byPath;
    for (const path of touched) {
      if (!byPath.has(path)) this.views.delete(path);
      else this.locate(path, (await this.deps.readLive(path).catch(() => undefined)) ?? '');
    }
    if (touched.size > 0) this.changed.fire([...touched]);
  }

  private locate(path: string, text: string): void {
    const pending = this.byPath.get(path);
    if (pending === undefined) return;
    this.views.set(path, reviewFile(splitLines(text), pending));
  }

  /** The live text of a file changed (typing, undo, save of another content): locate its hunks again. */
  update(path: string, text: string): void {
    if (!this.byPath.has(path)) return;
    this.locate(path, text);
    this.changed.fire([path]);
  }

  /** A run's review set as last read (undefined when nothing of it waits). */
  runReview(runId: string): RunReview | undefined {
    return this.runs.get(runId);
  }

  /** Runs with hunks waiting, newest first. */
  runIds(): string[] {
    return [...this.runs.values()]
      .filter((r) => this.count(r.runId) > 0)
      .map((r) => r.runId)
      .reverse();
  }

  hasPending(path: string): boolean {
    return this.byPath.has(path);
  }

  /** The hunks of a file where they are now, by line. */
  viewsOf(path: string): readonly HunkView[] {
    return this.views.get(path) ?? [];
  }

  /** Every file with hunks to review, by path. */
  paths(): string[] {
    return [...this.views]
      .filter(([, v]) => v.length > 0)
      .map(([path]) => path)
      .sort();
  }

  /** Hunks waiting for Keep or Undo (edited ones included), of one run or all. */
  count(runId?: string): number {
    let n = 0;
    for (const views of this.views.values()) for (const v of views) if (runId === undefined || v.patch.runId === runId) n++;
    return n;
  }

  /** Hunks waiting for Keep or Undo, per run that has any. */
  counts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const views of this.views.values()) for (const v of views) counts.set(v.patch.runId, (counts.get(v.patch.runId) ?? 0) + 1);
    return counts;
  }

  /** Settles once the loads asked for so far are done. */
  settled(): Promise<void> {
    return this.loading;
  }

  dispose(): void {
    this.changed.dispose();
  }
}
