// The same host suites through @vscode/test-electron, for machines that can download VS Code
// (it fails offline with ENOTFOUND; use `npm run test:host` there).
import { cpSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTests } from '@vscode/test-electron';
import { REPO_ROOT } from '../support/code-server';

async function main(): Promise<void> {
  const workspace = mkdtempSync(join(tmpdir(), 'agent-checkpoints-ws-'));
  const demo = join(REPO_ROOT, 'test/demo/workspace');
  if (existsSync(demo)) cpSync(demo, workspace, { recursive: true });
  await runTests({
    version: process.env.VSCODE_TEST_VERSION ?? 'stable',
    extensionDevelopmentPath: REPO_ROOT,
    extensionTestsPath: join(REPO_ROOT, 'dist/test/host/index.js'),
    launchArgs: [workspace, '--disable-extensions', '--disable-workspace-trust'],
    extensionTestsEnv: { AGENT_CHECKPOINTS_TEST_WORKSPACE: workspace },
  });
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
