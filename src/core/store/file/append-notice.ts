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

  /** Undefined when the port cannot watch (no notice, as a store without one). */
  watch(listener: (runId: string) => void): { close(): void } | undefined {
    if (!this.fs.watch) return undefined;
    const seen = new Map<string, number>();
    // A run checked now, and whether another event came meanwhile (checked again after).
    const checking = new Map<string, boolean>();
    let closed = false;
    const check = async (runId: string): Promise<void> => {
      if (checking.has(runId)) return void checking.set(runId, true);
      try {
        do {
          checking.set(runId, false);
          const size = (await this.fs.stat(joinPath(this.runsDir, runId, JOURNAL)).catch(() => null))?.size;
          if (size === undefined || size === seen.get(runId)) continue;
          seen.set(runId, size);
          if (size !== this.own.get(runId) && !closed) listener(runId);
        } while (checking.get(runId) === true);
      } finally {
        checking.delete(runId);
      }
    };
    const handle = this.fs.watch(this.runsDir, (path) => {
      const [runId, name, ...rest] = path.split('/');
      if (runId !== undefined && name === JOURNAL && rest.length === 0 && RUN_ID.test(runId)) void check(runId);
    });
    return {
      close: () => {
        closed = true;
        handle.close();
      },
    };
  }
}

/**
 * The file store's lease notice: a lease file of a run taken, renewed, released or set aside
 * (its temporary and stale names too). Who holds what is read from the listing by the caller.
 */
export function watchLeaseFiles(fs: StoreFs, runsDir: string, listener: (runId: string) => void): { close(): void } {
  const handle = fs.watch?.(runsDir, (path) => {
    const [runId, name, ...rest] = path.split('/');
    if (runId !== undefined && name?.startsWith(LEASE) === true && rest.length === 0 && RUN_ID.test(runId)) listener(runId);
  });
  return handle ?? { close: () => undefined };
}
