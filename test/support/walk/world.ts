import type { ModelRequest } from '../../../src/core/model/provider';
import { silentLog } from '../../../src/core/ports';
import { buildAgent } from '../../../src/core/runtime/agent';
import type { AgentRuntime } from '../../../src/core/runtime/runtime';
import { FileCheckpointStore } from '../../../src/core/store/file/file-store';
import type { StoreFs } from '../../../src/core/store/fs-port';
import type { RunSettings } from '../../../src/core/store/records';
import { RestoreActions } from '../../../src/host/vscode/restore/restore-actions';
import { strictModel, type StrictModel } from '../fake-anthropic/strict-model';
import { MemStoreFs } from '../faults/mem-fs';
import { allowAllApprover, CountingRunner, MemWorkspace } from '../faults/mem-world';
import { prepareRoot, STORE_ROOT } from '../faults/store-workload';
import { WalkModel } from './model';

// The walk's world: one disk (the store's files) and one workspace that outlive every process,
// and a process at a time over them. A kill -9 is simulated at a save point: right after the
// Nth fsync of the store (journal, blob, folder or state file) completes, the process is gone:
// every later store operation, workspace write, command and model call of it fails, and what it
// wrote stays on disk (the OS keeps a killed process's writes; nothing unsynced is dropped, as
// it would be by a power cut). The next process takes the lease over from the dead pid. The
// real kill -9 of the CLI at each save point is test/system/faults/kill.test.ts; this is the same
// cut, in process, so that thousands of sequences run in seconds.

export const WALK_SETTINGS: RunSettings = {
  model: 'claude-sonnet-4-6',
  provider: 'anthropic',
  maxTurns: 4,
  maxOutputTokensPerCall: 512,
  maxContextTokens: 6000,
};

export class KilledError extends Error {
  readonly code = 'EKILLED';
  constructor(what: string) {
    super(`the process was killed (kill -9) and cannot ${what}`);
    this.name = 'KilledError';
  }
}

export function isKilled(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'EKILLED';
}

const SYNCS = new Set(['sync', 'syncDir', 'truncate']);

/** One process: its pid, its store over the shared disk, and the sync after which it is killed (if any). */
export class WalkProcess {
  dead = false;
  syncs = 0;
  readonly store: FileCheckpointStore;

  constructor(
    readonly pid: number,
    disk: MemStoreFs,
    private readonly killAfterSync: number | undefined,
    snapshotStepBytes: number,
  ) {
    let t = 1_800_000_000_000 + pid * 10_000_000;
    this.clock = { now: () => (t += 11) };
    this.store = new FileCheckpointStore({
      fs: this.fs(disk),
      root: STORE_ROOT,
      clock: this.clock,
      process: { pid, hostname: 'walk-host', isAlive: (p) => p === pid },
      stateIntervalMs: 0,
      snapshotStepBytes,
    });
  }

  readonly clock: { now(): number };

  check(what: string): void {
    if (this.dead) throw new KilledError(what);
  }

  private fs(disk: MemStoreFs): StoreFs {
    return new Proxy(disk, {
      get: (target, prop, receiver) => {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          this.check(String(prop));
          const out: unknown = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          if (SYNCS.has(String(prop)) && ++this.syncs === this.killAfterSync) this.dead = true;
          return out;
        };
      },
    });
  }
}

export interface WorldHooks {
  onRequest(request: ModelRequest): Promise<void>;
}

export class WalkWorld {
  readonly disk = new MemStoreFs();
  readonly workspace: MemWorkspace;
  readonly commands: CountingRunner;
  readonly model: StrictModel<WalkModel>;
  /** The model inside `model` (its draws and its finishing mode). */
  readonly walkModel: WalkModel;
  process: WalkProcess;
  private pid = 0;
  private ids = 0;

  constructor(
    seed: number,
    hooks: WorldHooks,
    private readonly snapshotStepBytes: number,
  ) {
    this.workspace = new MemWorkspace({ 'a.txt': 'alpha\nbeta\ngamma\n', 'b.txt': 'one\ntwo\n' }, () => !this.process.dead);
    this.commands = new CountingRunner(() => !this.process.dead);
    this.walkModel = new WalkModel(seed, { files: () => this.texts(), onRequest: (r) => hooks.onRequest(r) });
    this.model = strictModel(this.walkModel);
    this.process = this.spawn(undefined);
  }

  async prepare(): Promise<void> {
    await prepareRoot(this.disk);
  }

  /** A new process (the previous one is gone: killed, or done); killed after its Nth sync when given. */
  spawn(killAfterSync: number | undefined): WalkProcess {
    this.pid += 1;
    this.process = new WalkProcess(this.pid, this.disk, killAfterSync, this.snapshotStepBytes);
    return this.process;
  }

  texts(): Map<string, string> {
    const out = new Map<string, string>();
    for (const path of this.workspace.files.keys()) out.set(path, this.workspace.text(path) ?? '');
    return out;
  }

  runtime(): AgentRuntime {
    const proc = this.process;
    const model = this.model;
    return buildAgent({
      store: proc.store,
      workspace: this.workspace,
      model: {
        name: model.name,
        complete: (request) => {
          proc.check('call the model');
          return model.complete(request);
        },
      },
      approver: allowAllApprover,
      commands: this.commands,
      clock: proc.clock,
      log: silentLog,
      newId: () => `w${this.pid}-${++this.ids}`,
    }).runtime;
  }

  restoreActions(): RestoreActions {
    const proc = this.process;
    return new RestoreActions({ store: proc.store, workspace: this.workspace, clock: proc.clock, log: silentLog, isRunning: () => false });
  }
}
