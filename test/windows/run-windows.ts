// The Windows layer of `npm test`: the store, patch, restore and workspace suites, and the CLI's
// journeys, under Node for Windows in Wine (setup-wine.sh installs both). Without Wine the layer
// is skipped saying why, and fails when CI is set. What Wine cannot prove is in the README.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as esbuild from 'esbuild';
import { REPO, setupWine, winPath, wineNode } from './wine';

/**
 * Suites that run in one process with no child process: the file-system rules as Windows applies
 * them, and runs of the real runtime against the loopback fake API (through http-fetch.ts).
 * Left out: the POSIX command runner's suites (tools.test.ts: /bin/sh scripts) and the suites that
 * inject win32 into a Linux process (command-windows, path-rules-windows) or start processes.
 */
const STORE = ['atomic-file', 'file-store', 'corruption', 'migrations', 'snapshots', 'refs', 'pending-ids', 'blob-put'];
const STORE_MORE = [
  'open-state-file',
  'writer-handle',
  'decisions',
  'fold',
  'io-errors',
  'node-yield',
  'secrets',
  'facts-log',
  'fork-from-snapshot',
];
export const WINDOWS_SUITES = [
  ...[...STORE, ...STORE_MORE].map((f) => `test/unit/store/${f}.test.ts`),
  ...['classify', 'hash', 'record'].map((f) => `test/unit/patches/${f}.test.ts`),
  ...['rollback', 'rollback.property', 'session', 'branch-fold', 'node-workspace', 'staged-temps'].map(
    (f) => `test/unit/restore/${f}.test.ts`,
  ),
  ...['line-endings', 'search-text', 'search-buffers'].map((f) => `test/unit/tools/${f}.test.ts`),
  ...['path-rules', 'protected-paths'].map((f) => `test/unit/security/${f}.test.ts`),
  'test/unit/platform/shell.test.ts',
  'test/unit/faults/mem-fs.test.ts',
];

async function bundleSuites(out: string): Promise<string[]> {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  await esbuild.build({
    entryPoints: WINDOWS_SUITES.map((file) => join(REPO, file)),
    outdir: out,
    outbase: join(REPO, 'test'),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['mocha', 'pg', 'pg-native'],
    inject: [join(REPO, 'test/windows/http-fetch.ts')],
    logLevel: 'error',
  });
  return WINDOWS_SUITES.map((file) => join(out, relative('test', file).replace(/\.ts$/, '.js')));
}

async function main(): Promise<number> {
  const started = Date.now();
  const wine = setupWine();
  if (typeof wine === 'string') {
    console.log(`windows layer skipped: ${wine}`);
    return process.env['CI'] === 'true' ? 1 : 0;
  }
  const files = await bundleSuites(join(REPO, 'test-results', 'windows', 'suites'));
  const mocha = join(REPO, 'node_modules', 'mocha', 'bin', 'mocha.js');
  console.log('--- suites under Node for Windows (Wine)');
  const suites = await wineNode(wine, [winPath(mocha), '--reporter', 'spec', '--timeout', '60000', ...files.map(winPath)]);
  process.stdout.write(suites.output);
  console.log('--- the CLI under Node for Windows (Wine)');
  const journeys = spawnSync('npx', ['mocha', '--require', 'tsx/cjs', '--timeout', '120000', 'test/windows/*.windows.ts'], {
    cwd: REPO,
    stdio: 'inherit',
  });
  console.log(`windows layer: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return suites.code === 0 && journeys.status === 0 ? 0 : 1;
}

void main().then((code) => process.exit(code));
