import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import { decodeCommandOutput } from '../../../src/host/node/command-output';
import { createNodeCommandRunner } from '../../../src/host/node/command-runner';
import { type ProcessControl } from '../../../src/host/node/process-tree';

/**
 * Windows' process control, on Linux: a signal to a process group does not exist there (it
 * throws, as the real process.kill of a negative pid does on Windows), and `taskkill /pid N /T /F`
 * is carried out as what it does, the whole tree ended at once by force.
 */
class WindowsProcesses implements ProcessControl {
  readonly platform = 'win32' as const;
  readonly kills: string[] = [];
  readonly started: string[][] = [];

  kill(pid: number, signal: NodeJS.Signals | 0): void {
    this.kills.push(`${pid} ${signal}`);
    if (pid < 0) throw Object.assign(new Error('kill ENOSYS (no process groups on Windows)'), { code: 'ENOSYS' });
    process.kill(pid, signal);
  }

  start(file: string, args: readonly string[]): void {
    this.started.push([file, ...args]);
    const pid = Number(args[args.indexOf('/pid') + 1]);
    if (file.endsWith('taskkill.exe') && args.includes('/T') && args.includes('/F')) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

/** Processes of the group that are not zombies (a killed orphan waits for init to reap it), from /proc. */
function liveInGroup(pgid: number): number[] {
  const live: number[] = [];
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue;
    }
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z') live.push(Number(name));
  }
  return live;
}

describe('commands on Windows: the tree ended by taskkill, output decoded (platform injected)', () => {
  const env = { ...process.env, SystemRoot: 'C:\\Windows' };
  const cwd = process.cwd();

  it('a timeout ends the whole tree with one taskkill /pid N /T /F and never signals a group', async () => {
    const processes = new WindowsProcesses();
    const runner = createNodeCommandRunner({ env, processes });
    const result = await runner.run('sleep 30 & sleep 30; echo never', { cwd, timeoutMs: 200, maxOutputBytes: 1000 });
    assert.equal(result.timedOut, true);
    assert.ok(result.durationMs < 10_000, `${result.durationMs} ms: it waited for the sleeps`);
    assert.equal(result.stdout, '');
    assert.equal(processes.started.length, 1, JSON.stringify(processes.started));
    const [file, ...args] = processes.started[0]!;
    assert.equal(file, 'C:\\Windows\\System32\\taskkill.exe');
    assert.deepEqual(
      args.filter((a) => a !== args[1]),
      ['/pid', '/T', '/F'],
    );
    assert.match(args[1]!, /^\d+$/);
    assert.deepEqual(
      processes.kills.filter((k) => k.startsWith('-')),
      [],
    );
    // A killed process leaves the run queue within moments, even on a busy machine.
    for (let waited = 0; liveInGroup(Number(args[1])).length > 0 && waited < 2000; waited += 20)
      await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(liveInGroup(Number(args[1])), [], 'every process of the tree is gone');
  });

  it('a cancel does the same; a command that ends by itself starts no taskkill', async () => {
    const processes = new WindowsProcesses();
    const runner = createNodeCommandRunner({ env, processes });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const cancelled = await runner.run('sleep 5', { cwd, timeoutMs: 10_000, maxOutputBytes: 1000, signal: controller.signal });
    assert.equal(cancelled.cancelled, true);
    assert.equal(processes.started.length, 1);
    const quick = await runner.run('echo ok', { cwd, timeoutMs: 5000, maxOutputBytes: 1000 });
    assert.equal(quick.stdout, 'ok\n');
    assert.equal(quick.stillRunning, undefined);
    assert.equal(processes.started.length, 1);
    assert.deepEqual(
      processes.kills.filter((k) => k.startsWith('-')),
      [],
    );
  });

  it('output: UTF-16LE with a BOM or clearly UTF-16 is decoded, on Windows other bytes that are not UTF-8 in the ANSI code page; on Windows \\r\\n is a line end', async () => {
    const utf16 = (text: string): Buffer => Buffer.from(text, 'utf16le');
    const text = 'héllo wörld\r\nline two\r\n';
    assert.equal(decodeCommandOutput(Buffer.concat([Buffer.from([0xff, 0xfe]), utf16(text)]), 'win32'), 'héllo wörld\nline two\n');
    assert.equal(decodeCommandOutput(utf16(text), 'win32'), 'héllo wörld\nline two\n');
    const be = Buffer.from(utf16('ab\r\n')).swap16();
    assert.equal(decodeCommandOutput(Buffer.concat([Buffer.from([0xfe, 0xff]), be]), 'win32'), 'ab\n');
    assert.equal(decodeCommandOutput(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('x\r\ny')]), 'win32'), 'x\ny');
    assert.equal(decodeCommandOutput(Buffer.from('x\r\ny\r'), 'linux'), 'x\r\ny\r', 'elsewhere a CR stays what it is');
    assert.equal(decodeCommandOutput(Buffer.from('ünïcode ✓\n'), 'win32'), 'ünïcode ✓\n');
    assert.equal(decodeCommandOutput(Buffer.concat([Buffer.from([0xff, 0xfe]), utf16('odd')]).subarray(0, 7), 'win32'), 'od');
    // Not UTF-8 on Windows: the system's ANSI code page (cmd.exe's echo of "Grüße" under code page 1252 or 1251).
    const cp1252 = Buffer.from([0x47, 0x72, 0xfc, 0xdf, 0x65, 0x0d, 0x0a]);
    assert.equal(
      decodeCommandOutput(cp1252, 'win32', () => new TextDecoder('windows-1252')),
      'Grüße\n',
    );
    assert.equal(
      decodeCommandOutput(Buffer.from([0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2]), 'win32', () => new TextDecoder('windows-1251')),
      'Привет',
    );
    assert.equal(
      decodeCommandOutput(Buffer.from('Grüße'), 'win32', () => assert.fail('UTF-8 needs no code page')),
      'Grüße',
    );
    assert.equal(decodeCommandOutput(cp1252, 'linux'), 'Gr\ufffd\ufffde\r\n', 'elsewhere output is UTF-8');
    const runner = createNodeCommandRunner({ env, processes: new WindowsProcesses() });
    const printed = await runner.run("printf '\\377\\376h\\000i\\000\\r\\000\\n\\000'", { cwd, timeoutMs: 5000, maxOutputBytes: 1000 });
    assert.equal(printed.stdout, 'hi\n');
  });
});
