import { ABSENT, hashContent } from '../../../src/core/patches/hash';
import { foldRecords, stepStartOf } from '../../../src/core/store/history';
import type { StoredRecord } from '../../../src/core/store/records';
import type { MemWorkspace } from '../faults/mem-world';

// What the journals say about the files, in the order the walk made it: the content each file
// must have (the latest record that wrote it: a patch, a restore, an inline undo), and per run
// the files a person restored, rolled back or undid since that run's model last saw them.

export interface Expected {
  readonly hash: string;
  /** Also acceptable while a restore awaits its `restore_done` (it records first; a kill may cut it before its writes). */
  readonly orHash?: string;
  readonly by: string;
}

type RestoreOf = Extract<StoredRecord, { type: 'restore' }>;

type ForkRecordOf = Extract<StoredRecord, { type: 'fork' }>;

export class FileTracker {
  readonly expected = new Map<string, Expected>();
  /** Per run: files changed by a person since its model's last request. */
  readonly pending = new Map<string, Set<string>>();
  private readonly lastSeq = new Map<string, number>();
  private readonly patchPaths = new Map<string, string>();
  /** Each fork's parent and the record of it the fork stands on. */
  private readonly forks = new Map<string, { parentId: string; seq: number }>();
  /** Restores whose writes no `restore_done` confirmed yet, by restoreId. */
  readonly awaiting = new Map<string, RestoreOf>();

  constructor(private readonly workspace: MemWorkspace) {}

  async start(): Promise<void> {
    for (const path of this.workspace.files.keys()) this.expected.set(path, { hash: await this.hashOf(path), by: 'the start' });
  }

  async hashOf(path: string): Promise<string> {
    return (await this.workspace.read(path))?.hash ?? ABSENT;
  }

  /** Takes in the records a step appended to `runId` (all of them for a run seen the first time). */
  async take(runId: string, records: readonly StoredRecord[]): Promise<void> {
    let from = this.lastSeq.get(runId);
    if (from === undefined) {
      const fork = records.find((r): r is ForkRecordOf => r.type === 'fork' && r.runId === runId);
      from = fork ? fork.seq : 0;
      if (fork) this.pending.set(runId, this.changedAfterForkPoint(records, fork));
      if (fork) this.forks.set(runId, { parentId: fork.parent.runId, seq: fork.parent.seq });
      this.lastSeq.set(runId, from);
    }
    for (const record of records) {
      if (record.seq <= from) continue;
      await this.takeOne(runId, record);
      this.lastSeq.set(runId, record.seq);
    }
  }

  private async takeOne(runId: string, record: StoredRecord): Promise<void> {
    if (record.type === 'patch') {
      this.patchPaths.set(record.patch.patchId, record.patch.path);
      this.expected.set(record.patch.path, { hash: record.patch.afterHash, by: `patch ${record.patch.patchId} of ${runId}` });
    } else if (record.type === 'restore') {
      // Until its restore_done, a restore's files may be either side of it; after, exactly what it says.
      if (record.confirm) this.awaiting.set(record.restoreId, record);
      for (const file of record.files)
        this.expected.set(file.path, {
          hash: file.writtenHash,
          ...(record.confirm ? { orHash: file.replacedHash } : {}),
          by: `restore ${record.restoreId} (${record.kind}) of ${runId}${record.confirm ? ', awaiting its restore_done' : ''}`,
        });
      this.noteWithForks(
        runId,
        record.seq,
        record.files.map((f) => f.path),
      );
    } else if (record.type === 'restore_done') {
      this.settle(runId, record);
    } else if (record.type === 'review' && record.decision === 'undo') {
      // Its edit is the restore record before it (inline-undo.ts), which says what the file holds.
      const paths = record.hunks.flatMap((h) => this.patchPaths.get(h.patchId) ?? []);
      this.noteWithForks(runId, record.seq, paths);
    }
  }

  /** A restore's writes confirmed: each file written holds what it wrote, each left one what it replaced (never taken as restored). */
  private settle(runId: string, done: Extract<StoredRecord, { type: 'restore_done' }>): void {
    const restore = this.awaiting.get(done.restoreId);
    this.awaiting.delete(done.restoreId);
    if (!restore) return;
    const by = `restore ${done.restoreId} of ${runId}`;
    for (const file of restore.files) {
      const left = done.left.some((l) => l.path === file.path);
      // Not owed even when a later write (another run's agent) has the file since: the restore did not change it.
      if (left) this.unnoteWithForks(runId, restore.seq, file.path);
      if (!left && !done.written.includes(file.path)) continue;
      const current = this.expected.get(file.path);
      if (current?.by.startsWith(`restore ${done.restoreId} `) !== true) continue;
      this.expected.set(
        file.path,
        left ? { hash: file.replacedHash, by: `${by}, which left it as it was` } : { hash: file.writtenHash, by },
      );
    }
  }

  /**
   * A file a restore still awaiting its restore_done meant to write but that does not hold it: the
   * runtime settles such a restore before its request and leaves the file unnamed (it did not change).
   */
  leftByCutRestore(path: string): boolean {
    const bytes = this.workspace.files.get(path);
    const live = bytes === undefined ? ABSENT : hashContent(bytes);
    return [...this.awaiting.values()].some((r) => r.files.some((f) => f.path === path && f.writtenHash !== live));
  }

  /** A person's change in `runId` at record `seq`: its files changed under the run and under every fork made of it before (and their forks). */
  private noteWithForks(runId: string, seq: number, paths: readonly string[]): void {
    this.note(runId, paths);
    for (const [forkId, fork] of this.forks) if (fork.parentId === runId && fork.seq < seq) this.noteWithForks(forkId, Infinity, paths);
  }

  /** A file a cut restore left as it was did not change: not owed to the run, nor to the forks it was noted for (as the runtime's fold and ancestor_changes drop it). */
  private unnoteWithForks(runId: string, seq: number, path: string): void {
    this.pending.get(runId)?.delete(path);
    for (const [forkId, fork] of this.forks) if (fork.parentId === runId && fork.seq < seq) this.unnoteWithForks(forkId, Infinity, path);
  }

  private note(runId: string, paths: readonly string[]): void {
    if (paths.length === 0) return;
    const set = this.pending.get(runId) ?? new Set<string>();
    for (const path of paths) set.add(path);
    this.pending.set(runId, set);
  }

  /** Files a person changed in the fork's ancestry after the point the fork starts from (its model knows the files as they were there). */
  private changedAfterForkPoint(records: readonly StoredRecord[], fork: ForkRecordOf): Set<string> {
    const prefix = records.filter((r) => r.seq <= fork.parent.seq);
    for (const r of prefix) if (r.type === 'patch') this.patchPaths.set(r.patch.patchId, r.patch.path);
    const point = fork.parent.checkpointId ?? stepStartOf(foldRecords(prefix).checkpoints, fork.parent.step)?.checkpointId;
    const at = [...prefix].reverse().find((r) => r.type === 'checkpoint' && r.checkpointId === point)?.seq ?? 0;
    const paths = new Set<string>();
    for (const r of prefix) {
      if (r.seq <= at) continue;
      if (r.type === 'restore') r.files.forEach((f) => paths.add(f.path));
      if (r.type === 'review' && r.decision === 'undo') r.hunks.forEach((h) => paths.add(this.patchPaths.get(h.patchId) ?? ''));
    }
    paths.delete('');
    return paths;
  }

  /** Files whose content is not what the journals say. */
  async mismatches(): Promise<string[]> {
    const problems: string[] = [];
    const paths = new Set([...this.expected.keys(), ...this.workspace.files.keys()]);
    for (const path of paths) {
      const live = await this.hashOf(path);
      const want = this.expected.get(path);
      if (!want) problems.push(`${path} exists but no record wrote it`);
      else if (live !== want.hash && live !== want.orHash)
        problems.push(`${path} is ${live.slice(0, 12)}, the journals say ${want.hash.slice(0, 12)} (${want.by})`);
    }
    return problems;
  }
}
