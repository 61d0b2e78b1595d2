import { readdirSync } from 'node:fs';
import { createNodeCommandRunner } from '../../../src/host/node/command-runner';
import { applyToDisk } from './sandbox-support';

// Run by subids.test.ts as a throwaway user: one runner runs each command given in the workspace
// `ws` (views in `views`), applies its change set to the disk and prints one JSON line per command,
// then the names left in the views folder.

async function main(ws: string, views: string, commands: string[]): Promise<void> {
  const runner = createNodeCommandRunner({
    env: { PATH: process.env['PATH'], HOME: process.env['HOME'] },
    sandbox: () => ({ roots: [ws], protectedPaths: [], hidden: [], homePaths: [], network: false, views }),
  });
  for (const command of commands) {
    const result = await runner.run(command, { cwd: ws, timeoutMs: 10_000, maxOutputBytes: 64 * 1024 });
    const via = result.changes?.via;
    const notes = result.changes?.notes ?? [];
    const applied = await applyToDisk([ws], result.changes);
    const { exitCode, stderr, sandboxNote } = result;
    console.log(JSON.stringify({ exitCode, stderr, sandboxNote, via, notes, applied }));
  }
  console.log(JSON.stringify({ viewsLeft: readdirSync(views) }));
}

const [ws, views, ...commands] = process.argv.slice(2);
main(ws!, views!, commands).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
