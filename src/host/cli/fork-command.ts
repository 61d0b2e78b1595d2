import { randomUUID } from 'node:crypto';
import { forkAt, type WithParentWriter } from '../../core/restore/fork';
import { newRunId } from '../../core/runtime/runtime';
import { NodeWorkspace } from '../node/node-workspace';
import { openStore, shownAddress, isPostgresAddress } from '../node/store-factory';
import type { CliOptions } from './args';

/** Turns a new instruction adds to a run that had reached its turn limit, when no --max-turns is given. */
export const DEFAULT_MORE_TURNS = 20;

/**
 * `fork`: a new run (paused) whose history is the run's up to the start of --step; with
 * `--files restore`, the agent's later changes are rolled back first (in the run, undoably).
 * Prints the fork's id; `resume --run ID` or `continue --run ID` goes on with it.
 */
export async function forkCommand(options: CliOptions, dir: string, storePath: string): Promise<number> {
  const store = openStore(storePath);
  const parentId = options.run!;
  const files = options.files ?? 'keep';
  const withParentWriter: WithParentWriter = async (work) => {
    const writer = await store.openWriter(parentId);
    try {
      return await work({
        workspace: new NodeWorkspace({ roots: [dir], ...(isPostgresAddress(storePath) ? {} : { storeDir: storePath }) }),
        blobs: store,
        journal: writer,
        clock: { now: () => Date.now() },
        log: { log: (level, message) => void (level !== 'info' && process.stderr.write(`${level}: ${message}\n`)) },
        newId: randomUUID,
      });
    } finally {
      await writer.close().catch(() => undefined);
    }
  };
  const result = await forkAt(store, parentId, { step: options.step! }, { runId: newRunId(Date.now()), files, withParentWriter });
  const written = result.files?.written ?? [];
  const conflicts = result.files?.plan.files.filter((f) => f.status === 'conflict').map((f) => f.path) ?? [];
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ runId: result.fork.runId, parent: result.fork.parent, files, written, conflicts })}\n`);
    return 0;
  }
  process.stderr.write(`store: ${shownAddress(storePath)}\n`);
  process.stdout.write(`forked run ${parentId} at the start of step ${options.step!} as run ${result.fork.runId} (paused)\n`);
  if (files === 'restore')
    process.stdout.write(
      `files: ${written.length > 0 ? `restored ${written.join(', ')}` : 'none needed restoring'}${conflicts.length > 0 ? `; left alone (changed since): ${conflicts.join(', ')}` : ''}\n`,
    );
  process.stdout.write(`go on with: agent-checkpoints resume --workspace ${dir} --run ${result.fork.runId}\n`);
  return 0;
}
