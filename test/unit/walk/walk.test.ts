import { strict as assert } from 'node:assert';
import { describeFailure, runWalk, Sequence } from '../../support/walk/walk';

// The random walk of every way on (test/support/walk): a few hundred seeded sequences, each step
// checked. WALK_SEQUENCES and WALK_SEED change the count and the first seed; a failure prints
// the seed and steps of each failing sequence (replay one with WALK_SEED=<seed> WALK_SEQUENCES=1).

const SEQUENCES = Number(process.env['WALK_SEQUENCES'] ?? 200);
const SEED = Number(process.env['WALK_SEED'] ?? 29_031);
const LENGTH = 14;

describe('random walk: run, kill -9, resume, restore, rollback, Keep/Undo, new instruction, compaction, fork', function () {
  // About 0.15 s of CPU per sequence (30 s for 200); the timeout is wall time on a busy machine.
  this.timeout(900_000);

  it(`${SEQUENCES} sequences of ${LENGTH} steps: every request valid, no undone call reused as done, files as the journals say, every changed file named`, async () => {
    const { summary, failures } = await runWalk(SEQUENCES, SEED, LENGTH);
    assert.deepEqual(failures.map(describeFailure), []);
    assert.equal(summary.steps, SEQUENCES * LENGTH);
    assert.equal(summary.invalid_requests + summary.ledger_mismatches + summary.file_mismatches + summary.note_mismatches, 0);
    assert.ok(summary.kills >= summary.steps / 10, `${summary.kills} kills in ${summary.steps} steps`);
    assert.ok(summary.requests >= summary.steps / 4, `${summary.requests} model requests in ${summary.steps} steps`);
  });

  it('self-check: a file written behind the journals is a file mismatch', async () => {
    const sequence = new Sequence(5);
    await sequence.world.prepare();
    await sequence.tracker.start();
    await sequence.step();
    await sequence.world.workspace.write('zz.txt', new TextEncoder().encode('unrecorded\n'), 'absent');
    await sequence.step();
    assert.ok(sequence.result().fileMismatches > 0, sequence.result().problems.join('\n'));
  });

  it('self-check: a file change the walk knows of and the runtime was not told of is a note mismatch', async () => {
    for (let seed = 1; seed < 40; seed++) {
      const sequence = new Sequence(seed);
      await sequence.world.prepare();
      await sequence.tracker.start();
      await sequence.step();
      const runId = sequence.runs[0];
      if (runId === undefined) continue;
      // The walk believes a file changed that nothing in the journal names.
      sequence.tracker.pending.set(runId, new Set(['never-told.txt']));
      for (let i = 0; i < 6 && (sequence.tracker.pending.get(runId)?.size ?? 0) > 0; i++) await sequence.step();
      if (sequence.result().noteMismatches > 0) return;
    }
    assert.fail('no sequence sent a request after the change');
  });

  it('self-check: every kind of step is taken', async () => {
    const sequence = new Sequence(SEED);
    await sequence.world.prepare();
    await sequence.tracker.start();
    for (let i = 0; i < 80; i++) await sequence.step();
    const text = sequence.steps.join('\n');
    for (const kind of [
      /^run /m,
      /^resume /m,
      /compaction/,
      /^new instruction/m,
      /^restore files/m,
      /^restore session/m,
      /^restore both/m,
      /^rollback /m,
      /^undo the last restore/m,
      /^keep hunk/m,
      /^undo hunk/m,
      /^fork /m,
      /kill -9/,
    ])
      assert.match(text, kind);
  });
});
