import { forkRun, nodeWorkspaceOf } from '../node/agent-host/index';
import { openStore, shownAddress, storeAddressOf } from '../node/store-factory';
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
  const address = storeAddressOf(storePath);
  const result = await forkRun(
    store,
    parentId,
    { step: options.step! },
    {
      files,
      clock: { now: () => Date.now() },
      workspace: nodeWorkspaceOf([dir], address),
      log: { log: (level, message) => void (level !== 'info' && process.stderr.write(`${level}: ${message}\n`)) },
    },
  );
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
