import { strict as assert } from 'node:assert';
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../../src/host/cli/main';
import { openFileStore } from '../../../src/host/node/store-factory';
import { tempDir } from '../../unit/runtime/harness';
import { checkpoint, ledgerEntry, runInput } from '../../unit/store/fixtures';

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

  it('resume cuts a torn final line (no newline) and says so on stderr', async () => {
    const { journal } = await pausedRun();
    const whole = readFileSync(journal);
    const torn = '{"s":5,"b":5,"e":5,"r":{"v":1,"at":1,"type":"no';
    appendFileSync(journal, torn);
    const replay = join(dir, 'replay.jsonl');
    writeFileSync(replay, END_TURN);
    const args = ['resume', '--workspace', ws, '--store', store, '--run', 'r1', '--yes', '--trust', '--provider', 'replay'];
    const resumed = await cli([...args, '--replay', replay]);
    assert.match(
      resumed.stderr,
      new RegExp(`warn: run r1: an unfinished last write \\(${torn.length} bytes at byte ${whole.length} of .*journal\\.jsonl\\) was cut`),
    );
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.deepEqual(readFileSync(journal).subarray(0, whole.length), whole, 'only the torn line was cut');
  });
});
