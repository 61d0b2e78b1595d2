import { strict as assert } from 'node:assert';
import { reviewFile } from '../../../src/core/patches/review';
import { reviewHunksOf } from '../../../src/core/patches/review-hunks';
import type { Patch } from '../../../src/core/patches/schema';
import { markLines } from '../../../src/host/vscode/review/mark-lines';

const patch = { patchId: 'p', runId: 'r', stepId: 1, path: 'f', state: 'pending' } as Patch;
const BEFORE = Array.from({ length: 30 }, (_, i) => `l${i}\n`).join('');

function marks(after: string, live = after) {
  const views = reviewFile(live, [{ patch, hunks: reviewHunksOf('f', BEFORE, after) }]);
  return markLines(views, live.split('\n').length - 2).map((m) => `${m.kind}@${m.line}${m.removedCount ? `x${m.removedCount}` : ''}`);
}

describe('review: lines to mark', () => {
  it('added, changed (a hunk that also removed lines) and removed lines, each on its live line', () => {
    const after = BEFORE.replace('l2\n', 'l2\nnew\n').replace('l12\n', 'L12\n').replace('l22\nl23\n', '');
    assert.deepEqual(marks(after), ['added@3', 'modified@13', 'removed@23x2']);
  });

  it('a removal and the first line of a replacement carry the first line removed, to show without a hover', () => {
    const after = BEFORE.replace('l12\n', 'L12\n').replace('l22\nl23\n', '');
    const views = reviewFile(after, [{ patch, hunks: reviewHunksOf('f', BEFORE, after) }]);
    const shown = markLines(views, after.split('\n').length - 2).map((m) => `${m.kind}:${m.removedFirst ?? '-'}`);
    assert.deepEqual(shown, ['modified:l12\n', 'removed:l22\n']);
  });

  it('an edited hunk is one edited mark; a deletion at the end of the file marks the last line', () => {
    const after = BEFORE.replace('l12\n', 'L12\n').replace('l28\nl29\n', '');
    assert.deepEqual(marks(after, after.replace('L12', 'mine')), ['edited@12', 'removed@27x2']);
  });
});
