import { strict as assert } from 'node:assert';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../../src/host/cli/main';
import { openFileStore } from '../../../src/host/node/store-factory';
import { tempDir } from '../runtime/harness';
import { checkpoint, ledgerEntry, runInput } from '../store/fixtures';

interface Printed {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in this process, keeping what it prints. */
async function cli(args: string[]): Promise<Printed> {
  const printed = { stdout: '', stderr: '' };
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((chunk: string | Uint8Array) => ((printed.stdout += String(chunk)), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => ((printed.stderr += String(chunk)), true)) as typeof process.stderr.write;
  try {
    return { code: await main(args), ...printed };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
}

const END_TURN = `${JSON.stringify({
  id: 'msg_done',
  content: [{ type: 'text', text: 'Nothing left to do.' }],
  stop_reason: 'end_turn',
  usage: { input_tokens: 10, output_tokens: 3 },
})}\n`;

describe('CLI: a torn write is cut and reported, a damaged journal is shown read-only', function () {
  this.timeout(30_000);
  let dir: string;
  let store: string;
  let ws: string;
  beforeEach(() => {
    dir = tempDir('cli-journal');
    store = join(dir, 'store');
    ws = join(dir, 'ws');
    mkdirSync(ws);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A paused run whose last commit group marks call k1 succeeded; its journal's path and the offset of that group. */
  async function pausedRun(): Promise<{ journal: string; lastGroup: number }> {
    const files = openFileStore(store);
    const writer = await files.createRun(runInput('r1', 'check the journal'));
    await writer.append([checkpoint('c0', 0, 'run_start', 0), ledgerEntry('k1', 0, 'planned')]);
    await writer.append([{ type: 'status', status: 'paused', reason: 'waiting' }]);
    const journal = files.journalPath('r1');
    const lastGroup = readFileSync(journal).length;
    await writer.append([ledgerEntry('k1', 0, 'succeeded')]);
    await writer.close();
    return { journal, lastGroup };
  }

  it('a flipped byte in the last, fsynced group: status shows the intact part read-only, resume refuses naming file and byte', async () => {
    const { journal, lastGroup } = await pausedRun();
    const corrupt = readFileSync(journal);
    const at = corrupt.indexOf('succeeded', lastGroup);
    corrupt[at] = corrupt[at]! ^ 0x01;
    writeFileSync(journal, corrupt);

    const status = await cli(['status', '--store', store, '--run', 'r1']);
    assert.equal(status.code, 0, status.stderr);
    assert.ok(status.stdout.startsWith(`damaged: ${journal} at byte ${lastGroup}: `), status.stdout);
    assert.match(status.stdout, /read-only/);
    assert.match(status.stdout, /run r1: paused/);
    assert.match(status.stdout, /k1 write_file planned/, 'the intact part: the damaged group that said succeeded is not taken');
    const json = JSON.parse((await cli(['status', '--store', store, '--run', 'r1', '--json'])).stdout) as Record<string, unknown>;
    assert.deepEqual({ ...(json['damage'] as object), message: undefined }, { file: journal, offset: lastGroup, message: undefined });
    assert.equal(json['readOnly'], true);

    const replay = join(dir, 'replay.jsonl');
    writeFileSync(replay, END_TURN);
    const args = ['resume', '--workspace', ws, '--store', store, '--run', 'r1', '--yes', '--trust', '--provider', 'replay'];
    const resumed = await cli([...args, '--replay', replay]);
    assert.equal(resumed.code, 2);
    assert.ok(resumed.stderr.includes(`${journal} is damaged at byte ${lastGroup}`), resumed.stderr);
    assert.deepEqual(readFileSync(journal), corrupt, 'nothing was cut');
  });
});
