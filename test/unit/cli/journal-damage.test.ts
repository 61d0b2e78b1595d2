import { strict as assert } from 'node:assert';
import { cli, END_TURN, pausedRun } from '../../support/cli-in-process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../runtime/harness';

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

  it('a flipped byte in the last, fsynced group: status shows the intact part read-only, resume refuses naming file and byte', async () => {
    const { journal, lastGroup } = await pausedRun(store);
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
