// Starts the product for a person: builds, prepares a working copy of the demo workspace, and
// opens it with the extension loaded (Extension Development Host).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, startCodeServer, workbenchUrl } from '../support/code-server';

const DEMO_SOURCE = join(REPO_ROOT, 'test/demo/workspace');
const DEMO_COPY = join(REPO_ROOT, 'test-results/demo-workspace');

function prepareWorkspace(): string {
  if (!existsSync(DEMO_COPY)) {
    mkdirSync(DEMO_COPY, { recursive: true });
    cpSync(DEMO_SOURCE, DEMO_COPY, { recursive: true });
    console.log(`[start] demo workspace copied to ${DEMO_COPY} (delete it for a fresh one)`);
  }
  return DEMO_COPY;
}

function hasDesktopCode(): boolean {
  return (
    spawnSync('sh', ['-c', 'command -v code'], { stdio: 'ignore' }).status === 0 && process.env.AGENT_CHECKPOINTS_USE_CODE_SERVER !== '1'
  );
}

async function main(): Promise<void> {
  execFileSync(process.execPath, [join(REPO_ROOT, 'esbuild.mjs')], { cwd: REPO_ROOT, stdio: 'inherit' });
  const workspace = prepareWorkspace();
  const replay = join(REPO_ROOT, 'test/demo/replay.jsonl');
  const settings = process.env.ANTHROPIC_API_KEY ? {} : { 'agentCheckpoints.provider': 'replay', 'agentCheckpoints.replayFile': replay };

  if (hasDesktopCode()) {
    // A profile of its own, so the demo's settings (the replay provider) apply and yours stay untouched.
    const profile = join(REPO_ROOT, 'test-results/demo-vscode-desktop');
    mkdirSync(join(profile, 'User'), { recursive: true });
    writeFileSync(join(profile, 'User', 'settings.json'), JSON.stringify(settings, null, 2));
    console.log(`[start] opening desktop VS Code with the extension under development (profile ${profile})`);
    spawn('code', ['--new-window', `--user-data-dir=${profile}`, `--extensionDevelopmentPath=${REPO_ROOT}`, workspace], {
      stdio: 'inherit',
    });
    return;
  }
  const port = Number(process.env.PORT ?? 8765);
  const server = await startCodeServer({
    port,
    settings,
    stateDir: join(REPO_ROOT, 'test-results/demo-vscode'),
    log: (l) => process.stderr.write(l.replace(/^/gm, '[code-server] ')),
  });
  const url = workbenchUrl(server, workspace, { extensionDevelopmentPath: REPO_ROOT });
  console.log('\n[start] VS Code (code-server) is listening on 127.0.0.1 only. Open:\n');
  console.log(`  ${url}\n`);
  console.log(
    process.env.ANTHROPIC_API_KEY
      ? '[start] provider: anthropic (ANTHROPIC_API_KEY from the environment)'
      : `[start] provider: replay (${replay}). For Claude: start with ANTHROPIC_API_KEY set, or run "Agent: Set API Key" and set agentCheckpoints.provider to "anthropic" in the user settings`,
  );
  console.log('[start] Ctrl-C stops the server.');
  const stop = async () => {
    await server.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  await new Promise<void>((resolve) => server.process.once('exit', () => resolve()));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
