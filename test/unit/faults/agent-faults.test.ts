import * as assert from 'node:assert/strict';
import { BUILTIN_TOOLS, createToolRegistry } from '../../../src/core/tools/registry';
import { ioErrorAgentPoint, measureAgentRun, powerLossAgentPoint, type AgentPointResult } from '../../support/faults/agent-faults';
import { FAULT_CODES } from '../../support/faults/failing-fs';

function failures(results: readonly AgentPointResult[]): string[] {
  return results.filter((r) => !r.ok).map((r) => `${r.point}: ${r.problems.join('; ')}`);
}

describe('faults: agent runs over the file store, cut by power loss and I/O errors', function () {
  this.timeout(120_000);
  let syncs = 0;
  let ops = 0;

  before(async () => {
    const clean = await measureAgentRun();
    assert.deepEqual(clean.problems, []);
    ({ syncs, ops } = clean);
  });

  // A cut that garbles the unacknowledged last write into complete lines leaves the run refused as
  // damaged (file and byte named, nothing cut: see checkRefused) instead of completed.
  it('power loss before every fsync of a run (3 draws each, some resumes cut again): every acknowledged record kept, 0 duplicates, the run completes or is refused unchanged', async () => {
    const results: AgentPointResult[] = [];
    for (let atSync = 1; atSync <= syncs; atSync++) {
      for (let draw = 0; draw < 3; draw++) results.push(await powerLossAgentPoint({ atSync }, atSync * 131 + draw, draw));
    }
    // A clean run syncs about 40 times (the journal, snapshots, the leases' and blobs' files; the listing row is a cache, unsynced).
    assert.ok(results.length >= 120, `${results.length} points`);
    assert.deepEqual(failures(results).slice(0, 5), []);
    assert.equal(
      results.reduce((n, r) => n + r.duplicates + r.lostAcknowledged, 0),
      0,
    );
    assert.ok(results.filter((r) => r.resumes > 0).length > results.length / 2, 'most points resumed an existing run');
    const refused = results.filter((r) => r.refused).length;
    assert.ok(refused < results.length / 4, `${refused} of ${results.length} points refused as damaged`);
  });

  for (const code of FAULT_CODES) {
    it(`${code} at every operation of a run (sticky until cleared): the run pauses naming ${code}, then resumes to completion`, async () => {
      const results: AgentPointResult[] = [];
      for (let atOp = 1; atOp <= ops; atOp++) results.push(await ioErrorAgentPoint(atOp, code, true));
      assert.deepEqual(failures(results).slice(0, 5), []);
    });
  }

  it('EIO once (not sticky) at every operation: the same holds', async () => {
    const results: AgentPointResult[] = [];
    for (let atOp = 1; atOp <= ops; atOp++) results.push(await ioErrorAgentPoint(atOp, 'EIO', false));
    assert.deepEqual(failures(results).slice(0, 5), []);
  });

  it('self-check: the harness catches a duplicate when run_command is wrongly labelled idempotent', async () => {
    const mislabelled = BUILTIN_TOOLS.map((tool) =>
      tool.name === 'run_command' ? { ...tool, idempotency: 'idempotent' as const, replayPolicy: 'auto' as const } : tool,
    );
    const tools = createToolRegistry({ tools: mislabelled });
    let duplicates = 0;
    for (let atSync = 1; atSync <= syncs && duplicates === 0; atSync++)
      duplicates += (await powerLossAgentPoint({ atSync }, atSync, 0, { tools })).duplicates;
    assert.ok(duplicates > 0, 'a cut between tool_started and tool_finished re-runs a mislabelled command');
  });
});
