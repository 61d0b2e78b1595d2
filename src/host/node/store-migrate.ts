import { joinPath, mkdirpDurable, type StoreFs } from '../../core/store/fs-port';
import { replaceFileAtomic } from '../../core/store/atomic-file';
import type { FileCheckpointStore } from '../../core/store/file/file-store';
import { openFileStore } from './store-factory';

// Runs written where a workspace's store used to be (VS Code's per-window workspace storage,
// `<id>`, `<id>-1`, ...) are moved into the one store of the workspace: blobs copied first (a
// blob stays where it was too), then the run's folder renamed in. Nothing is deleted; a run
// another live writer holds there stays until a later activation.

export interface MigrationResult {
  readonly moved: string[];
  /** Runs left where they are, with why. */
  readonly left: { runId: string; from: string; reason: string }[];
}

async function exists(fs: StoreFs, path: string): Promise<boolean> {
  return (await fs.stat(path)) !== null;
}

async function copyBlobs(fs: StoreFs, from: string, to: string): Promise<void> {
  const blobsFrom = joinPath(from, 'blobs');
  if (!(await exists(fs, blobsFrom))) return;
  for (const shard of await fs.readdir(blobsFrom)) {
    const shardFrom = joinPath(blobsFrom, shard);
    if (!(await fs.stat(shardFrom))?.isDirectory) continue;
    const shardTo = joinPath(to, 'blobs', shard);
    for (const name of await fs.readdir(shardFrom)) {
      if (!/^[0-9a-f]{64}$/.test(name) || (await exists(fs, joinPath(shardTo, name)))) continue;
      await fs.mkdirp(shardTo);
      await replaceFileAtomic(fs, shardTo, name, await fs.readFile(joinPath(shardFrom, name)));
    }
  }
}

/** Moves every run of the store at `from` that `into` lacks and nobody holds into `into`. */
export async function migrateRunsFrom(from: string, into: FileCheckpointStore): Promise<MigrationResult> {
  const fs = into.fs;
  const result: MigrationResult = { moved: [], left: [] };
  const root = from.replace(/\\/g, '/');
  if (root === into.root || !(await exists(fs, joinPath(root, 'runs')))) return result;
  const old = openFileStore(root, { fs });
  const runs = await old.listRuns();
  if (runs.length === 0) return result;
  await mkdirpDurable(fs, into.runsDir);
  await copyBlobs(fs, root, into.root);
  for (const run of runs) {
    const target = into.runDir(run.runId);
    if (await exists(fs, target)) {
      result.left.push({ runId: run.runId, from: root, reason: 'a run with this id is already in the store' });
    } else if (run.leased) {
      result.left.push({ runId: run.runId, from: root, reason: 'another live writer holds it there' });
    } else {
      await fs.rename(old.runDir(run.runId), target);
      await fs.syncDir(into.runsDir);
      await fs.syncDir(old.runsDir);
      result.moved.push(run.runId);
    }
  }
  return result;
}

/**
 * The workspace-storage folders VS Code may have given this extension for one workspace: the
 * current one (`.../workspaceStorage/<id>[-N]/<extension>`) and its `<id>`, `<id>-1`, ... siblings.
 */
export async function workspaceStorageSiblings(fs: StoreFs, storagePath: string): Promise<string[]> {
  const path = storagePath.replace(/\\/g, '/');
  const parts = path.split('/');
  const extension = parts.pop();
  const folder = parts.pop();
  const base = parts.join('/');
  if (extension === undefined || folder === undefined || base === '') return [path];
  const id = folder.replace(/-\d+$/, '');
  const names = await fs.readdir(base).catch(() => [] as string[]);
  const siblings = names.filter((name) => name === id || (name.startsWith(`${id}-`) && /^\d+$/.test(name.slice(id.length + 1))));
  return [...new Set([path, ...siblings.sort().map((name) => joinPath(base, name, extension))])];
}
