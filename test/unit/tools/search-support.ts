import { readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createToolRegistry } from '../../../src/core/tools/registry';
import type { ToolContext } from '../../../src/core/tools/types';
import { createNodeCommandRunner } from '../../../src/host/node/command-runner';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { ripgrepOnPath, ripgrepUnderAppRoot } from '../../../src/host/node/search/index';

/** rg on PATH, else the one of the code-server install the host tests use, else null. */
export function findRipgrep(): string | null {
  const onPath = ripgrepOnPath();
  if (onPath !== null) return onPath;
  const cache = join(homedir(), '.cache', 'agent-checkpoints');
  let installs: string[];
  try {
    installs = readdirSync(cache).filter((name) => name.startsWith('code-server-'));
  } catch {
    return null;
  }
  for (const install of installs) {
    const found = ripgrepUnderAppRoot(join(cache, install, 'cs', 'node_modules', 'code-server', 'lib', 'vscode'));
    if (found !== null) return found;
  }
  return null;
}

/**
 * ripgrep for a test that compares it with the Node fallback. Where none is found the test is
 * skipped, saying why; in CI (CI set) that is a failure, since the setup installs Debian's ripgrep.
 */
export function ripgrepOrSkip(ctx: Mocha.Context): string {
  const rg = findRipgrep();
  if (rg !== null) return rg;
  const why = 'no ripgrep on PATH or in a code-server install';
  if (process.env['CI']) throw new Error(`${why}: CI installs Debian's ripgrep (test/host/setup-vscode.sh), so this test must run`);
  console.log(`      skipped: ${why} (in CI this fails)`);
  return ctx.skip();
}

const registry = createToolRegistry();

/** Runs one read-only tool of the registry on a workspace folder, with the given engine. */
export async function runTool(root: string, name: string, input: unknown, ripgrep: string | null, signal?: AbortSignal) {
  const workspace = new NodeWorkspace({ roots: [root], ripgrep });
  const ctx: ToolContext = {
    runId: 'r',
    callId: 'c',
    stepId: 1,
    workspace,
    commands: createNodeCommandRunner(),
    signal: signal ?? new AbortController().signal,
    applyWrite: () => Promise.reject(new Error('read-only test')),
  };
  const tool = registry.get(name)!;
  return tool.execute(tool.input.parse(input), ctx, []);
}
