// Installs what a fresh clone needs before any npm script can run: npm dependencies (npm ci
// when node_modules is missing or older than the lock file) and, on request, the offline VS
// Code (code-server + Node 24 + Debian's Chromium through apt when root), and the system tools
// the product uses when present: bubblewrap (the commands' sandbox), uidmap (newuidmap/newgidmap: the
// sandbox's view maps the person's subordinate ids) and ripgrep (search_text).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export function ensureNodeModules() {
  const marker = join(REPO_ROOT, 'node_modules', '.package-lock.json');
  const lock = join(REPO_ROOT, 'package-lock.json');
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs) return;
  console.log('[bootstrap] installing npm dependencies (npm ci)');
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: REPO_ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('npm ci failed');
}

/** Returns the folder of the offline VS Code, installing it when missing. */
export function ensureOfflineVsCode() {
  const out = execFileSync('bash', [join(REPO_ROOT, 'test/host/setup-vscode.sh')], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  return out.trim().split('\n').pop();
}

/** Debian packages of tools the product uses, by the command each provides. */
const SYSTEM_TOOLS = { bwrap: 'bubblewrap', newuidmap: 'uidmap', rg: 'ripgrep' };

function onPath(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/**
 * Installs bubblewrap, uidmap and ripgrep with apt when missing and running as root (as setup-vscode.sh does
 * Chromium); otherwise prints the apt command. Without them the tests that need them are skipped and
 * the product runs commands unsandboxed (with a warning) and searches with its Node fallback.
 */
export function ensureSystemTools() {
  const missing = Object.entries(SYSTEM_TOOLS)
    .filter(([command]) => !onPath(command))
    .map(([, pkg]) => pkg);
  if (missing.length === 0) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !onPath('apt-get')) {
    console.log(`[bootstrap] missing system packages. Run: sudo apt-get update && sudo apt-get install -y ${missing.join(' ')}`);
    return;
  }
  console.log(`[bootstrap] installing with apt: ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (spawnSync('apt-get', ['update', '-q'], { stdio: 'inherit', env }).status !== 0) throw new Error('apt-get update failed');
  const r = spawnSync('apt-get', ['install', '-y', '-q', ...missing], { stdio: 'inherit', env });
  if (r.status !== 0) throw new Error(`apt-get install ${missing.join(' ')} failed`);
}
