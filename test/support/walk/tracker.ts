import { ABSENT } from '../../../src/core/patches/hash';
import { foldRecords, stepStartOf } from '../../../src/core/store/fold';
import type { StoredRecord } from '../../../src/core/store/records';
import type { MemWorkspace } from '../faults/mem-world';

// What the journals say about the files, in the order the walk made it: the content each file
// must have (the latest record that wrote it: a patch, a restore, an inline undo), and per run
// the files a person restored, rolled back or undid since that run's model last saw them.

export interface Expected {
  readonly hash: string;
  /** Also acceptable: the process was killed between this record and its file write (a restore records first). */
  readonly orHash?: string;
  readonly by: string;
}

type ForkRecordOf = Extract<StoredRecord, { type: 'fork' }>;

export class FileTracker {
  readonly expected = new Map<string, Expected>();
  /** Per run: files changed by a person since its model's last request. */
  readonly pending = new Map<string, Set<string>>();
  private readonly lastSeq = new Map<string, number>();
  private readonly patchPaths = new Map<string, string>();

  constructor(private readonly workspace: MemWorkspace) {}

  async start(): Promise<void> {
    for (const path of this.workspace.files.keys()) this.expected.set(path, { hash: await this.hashOf(path), by: 'the start' });
  }

  async hashOf(path: string): Promise<string> {
    return (await this.workspace.read(path))?.hash ?? ABSENT;
  }

  /** A person's edit (an inline undo): what the file holds now is theirs, recorded or not. */
  async personEdit(path: string): Promise<void> {
    this.expected.set(path, { hash: await this.hashOf(path), by: "the person's edit" });
  }

  /** Takes in the records a step appended to `runId` (all of them for a run seen the first time). */
  async take(runId: string, records: readonly StoredRecord[], killed: boolean): Promise<void> {
    let from = this.lastSeq.get(runId);
    if (from === undefined) {
      const fork = records.find((r): r is ForkRecordOf => r.type === 'fork' && r.runId === runId);
      from = fork ? fork.seq : 0;
      if (fork) this.pending.set(runId, this.changedAfterForkPoint(records, fork));
      this.lastSeq.set(runId, from);
    }
    for (const record of records) {
      if (record.seq <= from) continue;
      await this.takeOne(runId, record, killed);
      this.lastSeq.set(runId, record.seq);
    }
  }

  private async takeOne(runId: string, record: StoredRecord, killed: boolean): Promise<void> {
    if (record.type === 'patch') {
      this.patchPaths.set(record.patch.patchId, record.patch.path);
      this.expected.set(record.patch.path, { hash: record.patch.afterHash, by: `patch ${record.patch.patchId} of ${runId}` });
    } else if (record.type === 'restore') {
      for (const file of record.files)
        this.expected.set(file.path, {
          hash: file.writtenHash,
          ...(killed ? { orHash: file.replacedHash } : {}),
          by: `restore ${record.restoreId} (${record.kind}) of ${runId}`,
        });
      this.note(
        runId,
        record.files.map((f) => f.path),
      );
    } else if (record.type === 'review' && record.decision === 'undo') {
      const paths = record.hunks.flatMap((h) => this.patchPaths.get(h.patchId) ?? []);
      for (const path of paths) this.expected.set(path, { hash: await this.hashOf(path), by: `inline undo in ${runId}` });
      this.note(runId, paths);
    }
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
