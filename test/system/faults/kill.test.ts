import * as assert from 'node:assert/strict';
import { sharedCli } from '../../support/cli-process';
import { killRuns, measureCliRun, type KillPlan, type KillRunResult } from '../../support/faults/kill-harness';

// kill -9 of the real headless CLI (bundled from src/host/cli/bin.ts into a temp folder) against the fake
// Anthropic server: every save point of the script, then seeded random instants (resumes killed
// too), each resumed to completion. KILL_RUNS overrides the number of random runs: npm test takes
// 40 (about 3 minutes on two cores); the 1,000 kills of the design's figure are `npm run bench:crash
// -- --kills 1000`, the same harness.

const RANDOM_RUNS = Number(process.env['KILL_RUNS'] ?? 40);
const CONCURRENCY = 3;

function failures(results: readonly KillRunResult[]): string[] {
  return results.filter((r) => !r.ok).map((r) => `${r.point}: ${r.problems.join('; ')}`);
}

describe('faults: kill -9 of the headless CLI, then resume', function () {
  // About 70 kill runs, three at a time, each starting the bundled CLI several times: minutes on two cores.
  this.timeout(900_000);
  let syncs = 0;
  let activeMs = 0;
  let cli = '';

  before(async () => {
    cli = await sharedCli();
    const clean = await measureCliRun(cli);
    syncs = clean.syncs;
    activeMs = Math.max(100, clean.ms - clean.startupMs);
  });

  it('at every save point (right after each journal fsync) and at random instants: 0 duplicates, 0 lost acknowledged records, every run resumes', async () => {
    const plans: KillPlan[] = [];
    for (let afterSync = 1; afterSync <= syncs; afterSync++) plans.push({ kind: 'savePoint', afterSync });
    for (let seed = 1; seed <= RANDOM_RUNS; seed++)
      plans.push({ kind: 'random', maxDelayMs: Math.round(activeMs * 1.3), seed, resumeKills: seed % 3 });
    const results = await killRuns(plans, CONCURRENCY, { cli });
    const kills = results.reduce((n, r) => n + r.kills, 0);
    assert.equal(results.length, plans.length, `${results.length} kill runs of ${plans.length}`);
    assert.deepEqual(failures(results).slice(0, 5), []);
    assert.equal(
      results.reduce((n, r) => n + r.duplicates, 0),
      0,
      'duplicated non-idempotent executions',
    );
    assert.equal(
      results.reduce((n, r) => n + r.lostAcknowledged, 0),
      0,
      'lost acknowledged records',
    );
    assert.ok(kills >= Math.floor(results.length * 0.7), `${kills} processes killed in ${results.length} runs`);
    assert.ok(
      results.some((r) => r.executions === 0),
      'some cut fell between tool_started and the command (status unknown)',
    );
  });
});
