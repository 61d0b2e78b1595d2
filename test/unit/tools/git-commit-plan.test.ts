import { strict as assert } from 'node:assert';
import { ABSENT, hashContent } from '../../../src/core/patches/hash';
import type { GitFileFacts, LiveFile } from '../../../src/core/ports';
import { planCommit, type PlanInput, type RunFile } from '../../../src/core/tools/git-commit-plan';

// What git_commit would commit: the run's kept files, nothing of the person's unless named.

const bytes = (text: string) => new TextEncoder().encode(text);
const h = (text: string) => hashContent(bytes(text));

function live(text: string | null, dirty = false): LiveFile | null {
  return text === null ? null : { path: '', bytes: bytes(text), hash: h(text), source: 'disk', dirty };
}

/** A run file written from `before` to `after` in one write. */
function written(path: string, before: string | null, after: string | null, waiting = 0): RunFile {
  return { path, befores: [before === null ? ABSENT : h(before)], lastAfter: after === null ? ABSENT : h(after), chained: true, waiting };
}

function input(
  runFiles: RunFile[],
  files: Record<string, { live: string | null; head: string | null; staged?: GitFileFacts['staged']; dirty?: boolean }>,
  extra: Partial<PlanInput> = {},
): PlanInput {
  const entries = Object.entries(files);
  return {
    runFiles,
    includeWaiting: false,
    live: new Map(entries.map(([p, f]) => [p, live(f.live, f.dirty)])),
    git: {
      head: 'c0',
      files: new Map(entries.map(([p, f]) => [p, { head: f.head === null ? null : bytes(f.head), staged: f.staged ?? 'none' }])),
    },
    ...extra,
  };
}

describe('git_commit: what goes in (core/tools/git-commit-plan)', () => {
  it('commits the kept files of the run; a file whose hunks still wait is named and left out', () => {
    const plan = planCommit(
      input(
        [
          written('a.txt', 'one\n', 'two\n'),
          written('new.txt', null, 'n\n'),
          written('gone.txt', 'g\n', null),
          written('w.txt', 'x\n', 'y\n', 2),
        ],
        {
          'a.txt': { live: 'two\n', head: 'one\n' },
          'new.txt': { live: 'n\n', head: null },
          'gone.txt': { live: null, head: 'g\n' },
          'w.txt': { live: 'y\n', head: 'x\n' },
        },
      ),
    );
    assert.deepEqual(plan.files, [
      { path: 'a.txt', deleted: false },
      { path: 'new.txt', deleted: false },
      { path: 'gone.txt', deleted: true },
    ]);
    assert.deepEqual(
      plan.leftOut.map((l) => l.path),
      ['w.txt'],
    );
    assert.match(plan.leftOut[0]!.why, /2 change\(s\) still wait for review/);
    assert.deepEqual(plan.refused, []);
  });

  it('takes the waiting hunks too when the person said so', () => {
    const plan = planCommit(
      input([written('w.txt', 'x\n', 'y\n', 1)], { 'w.txt': { live: 'y\n', head: 'x\n' } }, { includeWaiting: true }),
    );
    assert.deepEqual(
      plan.files.map((f) => f.path),
      ['w.txt'],
    );
  });

  it('refuses a file that would sweep in the person’s changes: edits since, changes from before the run, their staging, unsaved text', () => {
    const plan = planCommit(
      input(
        [
          written('edited.txt', 'one\n', 'two\n'),
          written('before.txt', 'mine\n', 'mine+agent\n'),
          written('staged.txt', 'one\n', 'two\n'),
          written('unsaved.txt', 'one\n', 'two\n'),
          { ...written('between.txt', 'one\n', 'three\n'), chained: false },
        ],
        {
          'edited.txt': { live: 'two + my edit\n', head: 'one\n' },
          'before.txt': { live: 'mine+agent\n', head: 'committed\n' },
          'staged.txt': { live: 'two\n', head: 'one\n', staged: 'other' },
          'unsaved.txt': { live: 'two\n', head: 'one\n', dirty: true },
          'between.txt': { live: 'three\n', head: 'one\n' },
        },
      ),
    );
    assert.deepEqual(plan.files, []);
    const why = new Map(plan.refused.map((r) => [r.path, r.why]));
    assert.match(why.get('edited.txt')!, /changed since the run wrote it/);
    assert.match(why.get('before.txt')!, /not committed before the run started/);
    assert.match(why.get('staged.txt')!, /you staged a different version/);
    assert.match(why.get('unsaved.txt')!, /unsaved changes/);
    assert.match(why.get('between.txt')!, /between the run’s writes/);
  });

  it('commits named paths as they are (the person named them), but never unsaved text or a file equal to HEAD', () => {
    const plan = planCommit(
      input(
        [written('a.txt', 'one\n', 'two\n')],
        {
          'mine.txt': { live: 'my change\n', head: 'old\n', staged: 'other' },
          'same.txt': { live: 's\n', head: 's\n' },
          'open.txt': { live: 'o\n', head: 'x\n', dirty: true },
        },
        { named: ['mine.txt', 'same.txt', 'open.txt'] },
      ),
    );
    assert.deepEqual(plan.files, [{ path: 'mine.txt', deleted: false }]);
    assert.deepEqual(
      plan.refused.map((r) => r.path),
      ['same.txt', 'open.txt'],
    );
  });

  it('after an earlier commit of the run, commits what the run wrote since; a committed file is left out', () => {
    const twice: RunFile = { path: 'a.txt', befores: [h('one\n'), h('two\n')], lastAfter: h('three\n'), chained: true, waiting: 0 };
    const done = written('b.txt', 'b\n', 'b2\n');
    const plan = planCommit(input([twice, done], { 'a.txt': { live: 'three\n', head: 'two\n' }, 'b.txt': { live: 'b2\n', head: 'b2\n' } }));
    assert.deepEqual(
      plan.files.map((f) => f.path),
      ['a.txt'],
    );
    assert.deepEqual(
      plan.leftOut.map((l) => [l.path, l.why]),
      [['b.txt', 'it does not differ from HEAD']],
    );
  });
});
