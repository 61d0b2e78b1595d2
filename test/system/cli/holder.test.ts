import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { EXTENSION_ID, folderKey, workspaceStoreDir } from '../../../src/host/node/state-dir';
import { openFileStore } from '../../../src/host/node/store-factory';
import { startFakeAnthropic } from '../../support/fake-anthropic/server';
import { sharedCli, startCli } from '../../support/cli-process';
import { tempDir } from '../../unit/runtime/harness';
import { runInput } from '../../unit/store/fixtures';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('CLI: who holds a run, and where a workspace store is', function () {
  this.timeout(90_000);
  let bundle: string;
  let scratch: string;

  before(async () => {
    scratch = tempDir('cli-holder');
    bundle = await sharedCli();
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  const start = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    startCli(bundle, args, { PATH: process.env['PATH'], HOME: scratch, ANTHROPIC_API_KEY: 'sk-holder-test', ...env });

  it('a long command: a second resume is refused naming the holder; after kill -9 it takes over at once and the command does not run twice', async () => {
    const ws = tempDir('cli-holder-ws');
    const store = join(scratch, 'store-long');
    const fake = await startFakeAnthropic([
      {
        content: [{ type: 'tool_use', id: 'toolu_long', name: 'run_command', input: { command: 'echo ran >> marker.txt; sleep 30' } }],
        stop_reason: 'tool_use',
      },
      { content: [{ type: 'text', text: 'done' }] },
    ]);
    const common = ['--workspace', ws, '--store', store, '--base-url', fake.url, '--yes', '--trust'];
    const first = start(['run', ...common, '--task', 'run the long command']);
    try {
      const marker = join(ws, 'marker.txt');
      // The command writes in its copy-on-write view (in the store's command-views) until it ends.
      const views = join(store, 'command-views');
      const started = (): boolean =>
        existsSync(marker) || (existsSync(views) && readdirSync(views).some((v) => existsSync(join(views, v, 'u0', 'marker.txt'))));
      let exited = false;
      void first.done.then(() => (exited = true));
      for (let i = 0; i < 200 && !started() && !exited; i++) await sleep(100);
      assert.ok(started(), `the command started${exited ? `; the CLI exited: ${(await first.done).stderr}` : ''}`);
      // No real wait past the lease timeout: that a silent holder keeps its lease by its heartbeat
      // timer is proven with the Timers port (store/lease-holder.test.ts); here, across real processes,
      // a live holder on the same host is refused whatever its heartbeat's age.
      const refused = await start(['resume', ...common]).done;
      assert.equal(refused.code, 2, refused.stderr);
      const named = /held by another live writer \(pid (\d+) on .*heartbeat \d s ago\)/.exec(refused.stderr);
      assert.ok(named, refused.stderr);
      // The CLI started with a key runs itself again without it (key-handoff.ts): the holder is that process.
      const holderPid = Number(named[1]);
      const parent = Number(readFileSync(`/proc/${holderPid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
      assert.ok(holderPid === first.proc.pid || parent === first.proc.pid, `pid ${holderPid} is the first CLI`);
      process.kill(holderPid, 'SIGKILL');
      await first.done;
      const began = Date.now();
      const taken = await start(['resume', ...common]).done;
      assert.ok(Date.now() - began < 15_000, 'taken over within the lease timeout');
      assert.doesNotMatch(taken.stderr, /held by/);
      // Its view kept what it wrote before the kill: settled at the resume (applied once, not run again).
      assert.match(
        taken.stdout,
        /^ {2}\[status unknown\] run: .*sleep/m,
        'the cut command is reported as status unknown, its changes settled',
      );
      assert.equal(readFileSync(marker, 'utf8'), 'ran\n', 'the command ran once');
    } finally {
      first.proc.kill('SIGKILL');
      await fake.close();
      rmSync(ws, { recursive: true, force: true });
    }
  });

  it("status without --store finds the extension's store of the folder, and says where it looks", async () => {
    const ws = tempDir('cli-holder-ws');
    const base = join(scratch, '.config', 'Code', 'User', 'globalStorage', EXTENSION_ID);
    const storeDir = workspaceStoreDir(base, [folderKey({ scheme: 'file', fsPath: ws, uri: '' })]);
    mkdirSync(storeDir, { recursive: true });
    const writer = await openFileStore(storeDir).createRun(runInput('from-the-extension'));
    await writer.close();
    try {
      const status = await start(['status', '--workspace', ws], { XDG_CONFIG_HOME: '' }).done;
      assert.equal(status.code, 0, status.stderr);
      assert.match(status.stdout, /^run from-the-extension: running/);
      assert.equal(status.stderr, `store: ${storeDir}\n`);
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });
});
