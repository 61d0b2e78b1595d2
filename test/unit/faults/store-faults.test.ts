import * as assert from 'node:assert/strict';
import { CrashingFs } from '../../support/faults/crashing-fs';
import { FAULT_CODES } from '../../support/faults/failing-fs';
import { checkRecovered, faultStore, FIRST_PROCESS, NEXT_PROCESS, storeWorkload } from '../../support/faults/store-workload';
import { ioErrorPoint, measureWorkload, powerLossPoint, type PointResult } from '../../support/faults/store-faults';

const GROUPS = 8;
const SEEDS_PER_SYNC = 6;

function failures(results: readonly PointResult[]): string[] {
  return results.filter((r) => !r.ok).map((r) => `${r.point}: ${r.problem}`);
}

describe('faults: store under power loss and I/O errors', function () {
  // Each case replays a whole workload once per operation: 10-25 s on a loaded two-core machine.
  this.timeout(120_000);
  let syncs = 0;
  let ops = 0;

  before(async () => {
    ({ syncs, ops } = await measureWorkload(GROUPS));
  });

  // A garbled write can leave complete lines whose checksum fails: the store cannot tell them from
  // acknowledged bytes damaged later, so it refuses the run (file and byte named, nothing cut)
  // rather than cut them; checkRefused checks such a refusal keeps every acknowledged record.
  it(`power loss before every fsync, ${SEEDS_PER_SYNC} keep/drop/garble draws each: a prefix with every acknowledged record, or refused unchanged`, async () => {
    const results: PointResult[] = [];
    for (let atSync = 1; atSync <= syncs + 1; atSync++) {
      for (let seed = 1; seed <= SEEDS_PER_SYNC; seed++) results.push(await powerLossPoint(GROUPS, atSync, atSync * 7919 + seed));
    }
    assert.ok(results.length >= 200, `${results.length} power-loss points`);
    assert.deepEqual(failures(results).slice(0, 5), []);
    const refused = results.filter((r) => r.refused).length;
    assert.ok(refused > 0 && refused < results.length / 4, `${refused} of ${results.length} points refused as damaged`);
  });

  for (const code of FAULT_CODES) {
    it(`${code} at every operation (once, then sticky): a clear error, 0 corruptions, the run continues once cleared`, async () => {
      const results: PointResult[] = [];
      for (let atOp = 1; atOp <= ops + 1; atOp++) {
        results.push(await ioErrorPoint(GROUPS, atOp, code, false));
        results.push(await ioErrorPoint(GROUPS, atOp, code, true));
      }
      assert.deepEqual(failures(results).slice(0, 5), []);
    });
  }

  // Found by this harness (src/core/store/file/file-store.ts ensureRoot, fixed in ef925d5): a store
  // folder created by mkdirp had only itself fsynced, never its parent, so its own name was not
  // durable and a power cut after createRun and append resolved could lose the whole store.
  it('power loss when the store folder did not exist before the run: acknowledged records survive', async () => {
    const lost: string[] = [];
    for (let seed = 1; seed <= 20; seed++) {
      const fs = new CrashingFs();
      const result = await storeWorkload(faultStore(fs, FIRST_PROCESS), 2);
      assert.equal(result.error, undefined);
      fs.cutPower();
      const { fs: disk, report } = fs.restart(seed);
      const check = await checkRecovered(faultStore(disk, NEXT_PROCESS), result, undefined, report.choices.writes.includes('garbled'));
      if (!check.ok) lost.push(`seed ${seed}: ${check.problem}`);
    }
    assert.deepEqual(lost, []);
  });
});
