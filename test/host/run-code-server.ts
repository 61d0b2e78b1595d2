// Runs the host suites (dist/test/host/index.js, the extensionTestsPath contract) inside a real
// VS Code extension host: code-server on loopback, opened by headless Chromium.
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { format } from 'node:util';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, REPO_ROOT, startCodeServer, workbenchUrl } from '../support/code-server';

const WORKBENCH_NOISE = [
  /^Ignoring fetching additional builtin/,
  /^\[AccountPolicyGate\]/,
  /^Updating additional builtin/,
  /^\[Service Worker\]/,
  /^Creating a socket/,
  /\/static\/out\/vs\//,
];
const TEST_TIMEOUT_MS = Number(process.env.HOST_TEST_TIMEOUT_MS ?? 10 * 60_000);

/** Two workspace folders, `app` (the demo files) and `lib`, and the `.code-workspace` file that opens both. */
function twoFolders(root: string): string {
  for (const name of ['app', 'lib']) mkdirSync(join(root, name));
  const file = join(root, 'two.code-workspace');
  writeFileSync(file, JSON.stringify({ folders: [{ path: 'app' }, { path: 'lib' }] }));
  return file;
}

export async function runHostTests(
  options: { workspaceTrust?: boolean; env?: Record<string, string>; entry?: string; twoFolders?: boolean } = {},
): Promise<number> {
  const testsPath = join(REPO_ROOT, 'dist/test/host', options.entry ?? 'index.js');
  if (!existsSync(testsPath)) throw new Error(`${testsPath} is missing: run node esbuild.mjs first`);
  const workspace = mkdtempSync(join(tmpdir(), 'agent-checkpoints-ws-'));
  const opened = options.twoFolders ? twoFolders(workspace) : workspace;
  const demo = join(REPO_ROOT, 'test/demo/workspace');
  if (existsSync(demo)) cpSync(demo, options.twoFolders ? join(workspace, 'app') : workspace, { recursive: true });

  const verbose = process.env.HOST_TEST_VERBOSE === '1';
  const server = await startCodeServer({
    workspaceTrust: options.workspaceTrust,
    // With trust on, the folder stays untrusted (Restricted Mode) without a startup prompt.
    settings: options.workspaceTrust
      ? { 'security.workspace.trust.startupPrompt': 'never', 'security.workspace.trust.emptyWindow': false }
      : undefined,
    env: { AGENT_CHECKPOINTS_TEST_WORKSPACE: workspace, ...options.env },
    // A chat model and a language-model tool for the lm suite.
    extensions: [join(REPO_ROOT, 'test/host/lm-fixture')],
    log: verbose ? (l) => process.stderr.write(`[code-server] ${l}`) : undefined,
  });
  const profile = mkdtempSync(join(tmpdir(), 'agent-checkpoints-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    let settle!: (code: number) => void;
    const exitCode = new Promise<number>((r) => (settle = r));
    await page.exposeFunction('codeAutomationExit', (code: number) => settle(Number(code)));
    let suiteStarted = false;
    await page.exposeFunction('codeAutomationLog', (_type: string, args: unknown[]) => {
      const text = format(...(Array.isArray(args) ? args : [args]));
      if (text.startsWith('[host-tests]')) suiteStarted = true;
      // The page also forwards the workbench's own console; show only the suites' output.
      if (verbose || (suiteStarted && !WORKBENCH_NOISE.some((re) => re.test(text)))) process.stdout.write(`${text}\n`);
    });
    if (verbose) page.on('console', (m) => process.stderr.write(`[page] ${m.text()}\n`));
    await page.goto(workbenchUrl(server, opened, { extensionDevelopmentPath: REPO_ROOT, extensionTestsPath: testsPath }), {
      timeout: 180_000,
    });
    const timeout = new Promise<number>((r) => setTimeout(() => r(124), TEST_TIMEOUT_MS));
    const code = await Promise.race([exitCode, timeout]);
    if (code === 124) console.error(`host tests did not finish within ${TEST_TIMEOUT_MS} ms`);
    return code;
  } finally {
    await context.close().catch(() => undefined);
    await server.stop();
    rmSync(profile, { recursive: true, force: true });
    rmSync(workspace, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const started = Date.now();
  // `--restricted`: the folder opens in Restricted Mode (workspace trust on) and only the restricted suite runs.
  // `--two-folders`: a workspace of two folders opens and only the two-folder suite runs.
  const restricted = process.argv.includes('--restricted');
  const two = process.argv.includes('--two-folders');
  runHostTests(restricted ? { workspaceTrust: true, entry: 'restricted.js' } : two ? { twoFolders: true, entry: 'two-folders.js' } : {})
    .then((code) => {
      console.log(`[host-tests] exit ${code} after ${((Date.now() - started) / 1000).toFixed(1)} s`);
      process.exit(code);
    })
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
}
