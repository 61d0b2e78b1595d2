import { strict as assert } from 'node:assert';
import { encodeText, hashContent } from '../../../src/core/patches/hash';
import type { StoredRecord } from '../../../src/core/store/records';
import { MemWorkspace } from '../../support/faults/mem-world';
import { FileTracker } from '../../support/walk/tracker';
import { describeFailure, runWalk, Sequence } from '../../support/walk/walk';
import { WALK_SETTINGS } from '../../support/walk/world';

// The random walk of every way on (test/support/walk): a few hundred seeded sequences, each step
// checked. WALK_SEQUENCES and WALK_SEED change the count and the first seed; a failure prints
// the seed and steps of each failing sequence (replay one with WALK_SEED=<seed> WALK_SEQUENCES=1).

const SEQUENCES = Number(process.env['WALK_SEQUENCES'] ?? 200);
const SEED = Number(process.env['WALK_SEED'] ?? 29_031);
const LENGTH = 14;

describe('random walk: run, kill -9, resume, restore, rollback, Keep/Undo, new instruction, compaction, fork', function () {
  // About 0.15 s of CPU per sequence (30 s for 200); the timeout is wall time on a busy machine.
  this.timeout(900_000);

  it(`${SEQUENCES} sequences of ${LENGTH} steps, answers from the documented table among them: every request valid, no undone call reused as done, files as the journals say, every changed file named, no run stranded`, async () => {
    const { summary, failures } = await runWalk(SEQUENCES, SEED, LENGTH);
    assert.deepEqual(failures.map(describeFailure), []);
    assert.equal(summary.steps, SEQUENCES * LENGTH);
    assert.equal(summary.invalid_requests + summary.ledger_mismatches + summary.file_mismatches + summary.note_mismatches, 0);
    assert.ok(summary.kills >= summary.steps / 10, `${summary.kills} kills in ${summary.steps} steps`);
    assert.ok(summary.requests >= summary.steps / 4, `${summary.requests} model requests in ${summary.steps} steps`);
    // A tenth of the answers or more come from the table of documented answers; none strands a run.
    assert.ok(summary.drawn_share >= 0.1, `${summary.drawn_answers} answers drawn from the table (${summary.drawn_share})`);
    assert.equal(summary.stranded_runs, 0);
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

  it('self-check: a person change the runtime records before its request in the same step is owed to that request, not the next (seed 4494526)', async () => {
    const sequence = new Sequence(3);
    await sequence.world.prepare();
    await sequence.tracker.start();
    const { world } = sequence;
    sequence.acting = 'walk-r';
    await world.runtime().start({ runId: 'walk-r', task: 'Tidy the text files.', settings: WALK_SETTINGS, system: 'You tidy files.' });
    await sequence.check();
    const patch = (await world.process.store.readRun('walk-r')).patches[0];
    assert.ok(patch, 'the walk model of seed 3 writes a file in its first run');
    // As the runtime settling a cut inline Undo does: the record, then the request that names its file, in one step.
    const writer = await world.process.store.openWriter('walk-r');
    await writer.append([{ type: 'review', decision: 'undo', hunks: [{ patchId: patch.patchId, hunk: 0 }], paths: [patch.path] }]);
    await writer.close();
    await world.runtime().continue('walk-r', 'Now tidy them again.', new AbortController().signal, { moreTurns: 3 });
    await sequence.check();
    assert.deepEqual(sequence.problems, []);
    assert.deepEqual([...(sequence.tracker.pending.get('walk-r') ?? [])], [], 'the request named it: nothing is owed');
  });

  it('self-check: a file a cut restore left as it was is not owed, though another run wrote it before the restore settled (seed 11296947)', async () => {
    const workspace = new MemWorkspace({ 'a.txt': 'one\n' });
    const tracker = new FileTracker(workspace);
    await tracker.start();
    const hash = (text: string) => hashContent(encodeText(text, false));
    const at = { v: 3, at: 1 };
    const restore = { ...at, seq: 5, type: 'restore', restoreId: 'r1', kind: 'rollback_files', patchIds: [], confirm: true };
    const file = { path: 'a.txt', replacedHash: hash('one\n'), writtenHash: hash('zero\n') };
    await tracker.take('parent', [{ ...restore, files: [file] } as unknown as StoredRecord]);
    assert.deepEqual([...(tracker.pending.get('parent') ?? [])], ['a.txt']);
    // The process was killed before the restore wrote a.txt; a fork's agent writes it; the parent settles the restore.
    const patch = { patchId: 'p9', path: 'a.txt', afterHash: hash('two\n') };
    await tracker.take('fork', [{ ...at, seq: 6, type: 'patch', patch } as unknown as StoredRecord]);
    const left = [{ path: 'a.txt', reason: 'the restore was cut, and the file changed since; it was left as it is' }];
    await tracker.take('parent', [{ ...at, seq: 6, type: 'restore_done', restoreId: 'r1', written: [], left, cut: true } as StoredRecord]);
    assert.deepEqual([...(tracker.pending.get('parent') ?? [])], [], 'the restore did not change a.txt: the parent is not owed it');
  });
});
