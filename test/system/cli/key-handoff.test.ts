import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import * as esbuild from 'esbuild';
import { tempDir } from '../../unit/runtime/harness';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('headless CLI: the key handed over on a pipe', function () {
  this.timeout(30_000);
  let dir = '';
  let entry = '';

  before(async () => {
    dir = tempDir('key-handoff');
    entry = join(dir, 'entry.js');
    await esbuild.build({
      entryPoints: [join(__dirname, 'fixtures', 'handoff-entry.ts')],
      outfile: entry,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      logLevel: 'error',
    });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  function launch(args: string[]) {
    const proc = spawn(process.execPath, [entry, ...args], {
      env: { PATH: process.env['PATH'], ANTHROPIC_API_KEY: 'sk-handoff-test' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const worker = new Promise<{ pid: number; line: string }>((resolve) => {
      let out = '';
      proc.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /worker (\d+) .*\n/.exec(out);
        if (m) resolve({ pid: Number(m[1]), line: m[0].trim() });
      });
    });
    const exit = new Promise<number | string | null>((resolve) => proc.on('exit', (code, signal) => resolve(signal ?? code)));
    return { proc, worker, exit };
  }

  it('the re-executed process holds the key in memory, not in its environment, and its exit code is the CLI’s', async () => {
    const run = launch(['exit', '7']);
    const { pid, line } = await run.worker;
    assert.notEqual(pid, run.proc.pid);
    assert.equal(line, `worker ${pid} key=sk-handoff-test env=none`);
    assert.equal(await run.exit, 7);
  });

  it('a worker killed by a signal kills its launcher the same way', async () => {
    const run = launch(['wait']);
    const { pid } = await run.worker;
    process.kill(pid, 'SIGKILL');
    assert.equal(await run.exit, 'SIGKILL');
  });

  it('kill -9 of the launcher ends the re-executed process too: the run never goes on behind it', async () => {
    const run = launch(['wait']);
    const { pid } = await run.worker;
    assert.ok(alive(pid));
    run.proc.kill('SIGKILL');
    assert.equal(await run.exit, 'SIGKILL');
    for (let i = 0; i < 40 && alive(pid); i++) await sleep(50);
    assert.equal(alive(pid), false, `worker ${pid} outlived its launcher`);
  });
});
