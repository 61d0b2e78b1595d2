// Starts the offline VS Code (code-server) on loopback in an isolated temp folder, and drives
// it with Debian's Chromium through playwright-core. Shared by the host test launcher, the e2e
// tests and `npm start`.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const REPO_ROOT = resolve(__dirname, '..', '..');
export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1',
];

/** Installs (or reuses) the offline VS Code; returns its cache folder. */
export function ensureCodeServer(): string {
  const out = execFileSync('bash', [join(REPO_ROOT, 'test/host/setup-vscode.sh')], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  const dir = out.trim().split('\n').pop();
  if (!dir) throw new Error('setup-vscode.sh printed no folder');
  return dir;
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
}

const QUIET_SETTINGS = {
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'workbench.enableExperiments': false,
  'extensions.ignoreRecommendations': true,
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'chat.disableAIFeatures': true,
  'chat.commandCenter.enabled': false,
  'security.workspace.trust.enabled': false,
  // The chat view would open an empty secondary side bar, taking the width the timeline needs.
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'git.enabled': false,
  'files.autoSave': 'off',
  'window.restoreWindows': 'none',
};

export interface CodeServerOptions {
  /** Extra environment for the server (reaches the extension host). */
  env?: Record<string, string>;
  /** Extra user settings. */
  settings?: Record<string, unknown>;
  /** Keep workspace trust on (for restricted-mode tests). */
  workspaceTrust?: boolean;
  port?: number;
  /** A folder kept across starts (user data, extensions); default: a temp folder removed on stop. */
  stateDir?: string;
  /** Unpacked test extensions (folders with a package.json) installed beside the one under development. */
  extensions?: readonly string[];
  /** Extensions installed from a .vsix before start (npm start uses the development path instead). */
  log?: (line: string) => void;
}

export interface RunningCodeServer {
  readonly url: string;
  readonly port: number;
  readonly tempDir: string;
  readonly userDataDir: string;
  readonly process: ChildProcess;
  /** vscode-remote URI of an absolute path, as the web client needs it. */
  remoteUri(absPath: string): string;
  stop(): Promise<void>;
}

export async function startCodeServer(options: CodeServerOptions = {}): Promise<RunningCodeServer> {
  const installDir = ensureCodeServer();
  const node24 = join(installDir, 'node24/node_modules/node/bin/node');
  const entry = join(installDir, 'cs/node_modules/code-server/out/node/entry.js');
  const port = options.port ?? (await freePort());
  const tempDir = options.stateDir ?? mkdtempSync(join(tmpdir(), 'agent-checkpoints-cs-'));
  const userDataDir = join(tempDir, 'user-data');
  const extensionsDir = join(tempDir, 'extensions');
  for (const d of ['config', 'data', 'cache', 'tmp', 'user-data/User', 'extensions']) mkdirSync(join(tempDir, d), { recursive: true });
  const settings = {
    ...QUIET_SETTINGS,
    ...(options.workspaceTrust ? { 'security.workspace.trust.enabled': true } : {}),
    ...options.settings,
  };
  writeFileSync(join(userDataDir, 'User/settings.json'), JSON.stringify(settings, null, 2));
  // Test extensions (unpacked folders), installed by copying them where the server scans for extensions.
  for (const folder of options.extensions ?? []) {
    const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { publisher: string; name: string; version: string };
    cpSync(folder, join(extensionsDir, `${manifest.publisher}.${manifest.name}-${manifest.version}`), { recursive: true });
  }

  const args = [
    entry,
    '--bind-addr',
    `127.0.0.1:${port}`,
    '--auth',
    'none',
    '--disable-telemetry',
    '--disable-update-check',
    '--user-data-dir',
    userDataDir,
    '--extensions-dir',
    extensionsDir,
    '--vscode-option',
    'enable-smoke-test-driver',
    ...(options.workspaceTrust ? [] : ['--disable-workspace-trust']),
  ];
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    XDG_CONFIG_HOME: join(tempDir, 'config'),
    XDG_DATA_HOME: join(tempDir, 'data'),
    XDG_CACHE_HOME: join(tempDir, 'cache'),
    TMPDIR: join(tempDir, 'tmp'),
    EXTENSIONS_GALLERY: '{}',
    ...options.env,
  };
  delete env.VSCODE_IPC_HOOK_CLI;
  const child = spawn(node24, args, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = options.log ?? (() => undefined);
  child.stdout?.on('data', (d: Buffer) => log(d.toString()));
  child.stderr?.on('data', (d: Buffer) => log(d.toString()));
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(url, child);

  let stopped = false;
  return {
    url,
    port,
    tempDir,
    userDataDir,
    process: child,
    remoteUri: (absPath) => `vscode-remote://127.0.0.1:${port}${absPath}`,
    async stop() {
      if (stopped) return;
      stopped = true;
      await killGroup(child);
      if (!options.stateDir) rmSync(tempDir, { recursive: true, force: true });
    },
  };
}

async function waitForHealth(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`code-server exited with ${child.exitCode} before it was ready`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('code-server did not answer /healthz within 60 s');
}

/** Kills the server's whole process group (never by name). */
export async function killGroup(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }, 5_000);
  await exited;
  clearTimeout(timer);
}

/** The workbench URL that opens a folder (or a `.code-workspace` file: its folders) and, optionally, runs extension tests (smoke-test driver). */
export function workbenchUrl(
  server: RunningCodeServer,
  folder: string,
  dev?: { extensionDevelopmentPath: string; extensionTestsPath?: string },
): string {
  const params = new URLSearchParams(folder.endsWith('.code-workspace') ? { workspace: folder } : { folder });
  if (dev) {
    const payload: Array<[string, string]> = [['extensionDevelopmentPath', server.remoteUri(dev.extensionDevelopmentPath)]];
    if (dev.extensionTestsPath) payload.push(['extensionTestsPath', server.remoteUri(dev.extensionTestsPath)]);
    params.set('payload', JSON.stringify(payload));
  }
  return `${server.url}/?${params.toString()}`;
}
