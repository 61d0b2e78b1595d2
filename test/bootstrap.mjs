// Installs what a fresh clone needs before any npm script can run: npm dependencies (npm ci
// when node_modules is missing or older than the lock file) and, on request, the offline VS
// Code (code-server + Node 24 + Debian's Chromium through apt when root).
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
