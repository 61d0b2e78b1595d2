import { joinPath, type StoreFs } from '../fs-port';
import { RUN_ID } from '../run-id';
import { JOURNAL, LEASE } from './file-device';

/**
 * The file store's change notice: a journal that grew (or was cut) by a write of another holder
 * (another process, another store object). The store object's own writes are told apart by the
 * journal size each of them leaves (noted before the write), and only journals are watched: a
 * lease heartbeat or a state file rewrite is no change of records.
 */
export class AppendNotice {
  /** By run, the journal size this store object's latest own write leaves. */
  private readonly own = new Map<string, number>();

  constructor(
    private readonly fs: StoreFs,
    private readonly runsDir: string,
  ) {}

  /** This store object is about to leave the run's journal at `size` bytes (an append, a new run, a cut torn tail). */
  wrote(runId: string, size: number): void {
    this.own.set(runId, size);
  }

  /** Appends of other holders, by run (the port can watch). */
  watch(listener: (runId: string) => void): { close(): void } {
    const seen = new Map<string, number>();
    // A run checked now, and whether another event came meanwhile (checked again after).
    const checking = new Map<string, boolean>();
    const check = async (runId: string): Promise<void> => {
      if (checking.has(runId)) return void checking.set(runId, true);
      try {
        do {
          checking.set(runId, false);
          const size = (await this.fs.stat(joinPath(this.runsDir, runId, JOURNAL)).catch(() => null))?.size;
          if (size === undefined || size === seen.get(runId)) continue;
          seen.set(runId, size);
          if (size !== this.own.get(runId)) listener(runId);
        } while (checking.get(runId) === true);
      } finally {
        checking.delete(runId);
      }
    };
    return this.watchFiles(
      (name) => name === JOURNAL,
      (runId) => void check(runId),
    );
  }

  /** A lease file taken, renewed, released or set aside (its other names too); who holds what the caller reads from the listing. */
  watchLeases(listener: (runId: string) => void): { close(): void } {
    return this.watchFiles((name) => name.startsWith(LEASE), listener);
  }

  /** Changes to a file runs/<runId>/<name> whose name `matches`, by run. */
  private watchFiles(matches: (name: string) => boolean, listener: (runId: string) => void): { close(): void } {
    return this.fs.watch!(this.runsDir, (path) => {
      const [runId, name, ...rest] = path.split('/');
      if (runId !== undefined && name !== undefined && matches(name) && rest.length === 0 && RUN_ID.test(runId)) listener(runId);
    });
  }
}
