import { strict as assert } from 'node:assert';
import { cli, END_TURN, pausedRun } from '../../support/cli-in-process';
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../unit/runtime/harness';

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

  it('resume cuts a torn final line (no newline) and says so on stderr', async () => {
    const { journal } = await pausedRun(store);
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
