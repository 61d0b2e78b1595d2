import { strict as assert } from 'node:assert';
import { buildRunView } from '../../../src/host/vscode/timeline/view-build';
import { navigate } from '../../../src/webview/keyboard';
import { flatten, indexOfKey, rowKey, type FlatRow } from '../../../src/webview/tree';
import { maxScrollTop, pageSize, revealScrollTop, rowAt, rowOffsets, visibleWindow } from '../../../src/webview/virtual';

const uniform = (count: number) => rowOffsets(new Array<number>(count).fill(22));
import { sampleRun } from './fixtures';

const runA = buildRunView(sampleRun(6, { runId: 'a' }).state, sampleRun(6).live, false);
const runB = buildRunView(sampleRun(3, { runId: 'b' }).state, new Map(), false);

describe('webview tree: flatten', () => {
  it('shows only runs when nothing is expanded', () => {
    const rows = flatten([runA, runB], new Set());
    assert.deepEqual(
      rows.map((r) => [r.kind, r.level, r.posinset, r.setsize, r.expanded]),
      [
        ['run', 1, 1, 2, false],
        ['run', 1, 2, 2, false],
      ],
    );
  });

  it('nests steps, calls, effects and patches under expanded parents, with parents and positions', () => {
    const expanded = new Set([
      rowKey.run('a'),
      rowKey.step('a', 1),
      rowKey.call('a', 'toolu_1'),
      rowKey.step('a', 3),
      rowKey.call('a', 'toolu_3'),
    ]);
    const rows = flatten([runA], expanded);
    const shape = rows.map((r) => `${'  '.repeat(r.level - 1)}${r.kind}`);
    assert.deepEqual(shape.slice(0, 7), ['run', '  step', '  step', '    call', '      patch', '  step', '  step']);
    const effect = rows.find((r) => r.kind === 'effect')!;
    assert.equal(effect.call!.toolName, 'http_post');
    assert.equal(rows[effect.parent]!.key, rowKey.call('a', 'toolu_3'));
    const patch = rows.find((r) => r.kind === 'patch')!;
    assert.equal(rows[patch.parent]!.kind, 'call');
    assert.equal(rows.filter((r) => r.kind === 'step').length, 7);
    assert.ok(rows.every((r) => r.posinset >= 1 && r.posinset <= r.setsize));
    assert.equal(indexOfKey(rows, rowKey.step('a', 6)), rows.length - 1);
    assert.equal(indexOfKey(rows, null), -1);
  });

  it('does not expand a step without calls even if asked', () => {
    const rows = flatten([runA], new Set([rowKey.run('a'), rowKey.step('a', 0)]));
    assert.equal(rows[1]!.expandable, false);
    assert.equal(rows[1]!.expanded, false);
  });
});

describe('webview tree: keyboard', () => {
  const rows: FlatRow[] = flatten([runA, runB], new Set([rowKey.run('a'), rowKey.step('a', 1)]));
  const call = rows.findIndex((r) => r.kind === 'call');

  it('moves with arrows, Home, End and pages, within bounds', () => {
    assert.deepEqual(navigate(rows, 0, 'ArrowDown', 5), { kind: 'select', index: 1 });
    assert.deepEqual(navigate(rows, 0, 'ArrowUp', 5), { kind: 'select', index: 0 });
    assert.deepEqual(navigate(rows, 3, 'Home', 5), { kind: 'select', index: 0 });
    assert.deepEqual(navigate(rows, 0, 'End', 5), { kind: 'select', index: rows.length - 1 });
    assert.deepEqual(navigate(rows, 0, 'PageDown', 5), { kind: 'select', index: 5 });
    assert.deepEqual(navigate(rows, rows.length - 1, 'ArrowDown', 5), { kind: 'select', index: rows.length - 1 });
    assert.deepEqual(navigate(rows, -1, 'ArrowDown', 5), { kind: 'select', index: 0 });
    assert.deepEqual(navigate([], 0, 'ArrowDown', 5), { kind: 'none' });
  });

  it('Right expands then enters; Left collapses then goes to the parent', () => {
    const collapsedRun = rows.length - 1;
    assert.deepEqual(navigate(rows, collapsedRun, 'ArrowRight', 5), { kind: 'expand', index: collapsedRun, expand: true });
    assert.deepEqual(navigate(rows, 0, 'ArrowRight', 5), { kind: 'select', index: 1 });
    assert.deepEqual(navigate(rows, 0, 'ArrowLeft', 5), { kind: 'expand', index: 0, expand: false });
    assert.deepEqual(navigate(rows, call, 'ArrowLeft', 5), { kind: 'select', index: rows[call]!.parent });
    assert.deepEqual(navigate(rows, collapsedRun, 'ArrowLeft', 5), { kind: 'none' });
  });

  it('Enter activates, Space toggles', () => {
    assert.deepEqual(navigate(rows, call, 'Enter', 5), { kind: 'activate', index: call });
    assert.deepEqual(navigate(rows, 0, ' ', 5), { kind: 'expand', index: 0, expand: false });
    assert.deepEqual(navigate(rows, 0, 'x', 5), { kind: 'none' });
  });
});

describe('webview tree: virtual window', () => {
  it('keeps only the rows near the viewport', () => {
    const rows = uniform(10_000);
    assert.deepEqual(visibleWindow(0, 220, rows, 5), { start: 0, end: 16 });
    assert.deepEqual(visibleWindow(22_000, 220, rows, 5), { start: 995, end: 1016 });
    assert.deepEqual(visibleWindow(1e9, 220, rows, 5), { start: 9994, end: 10_000 });
    assert.deepEqual(visibleWindow(0, 220, uniform(0), 5), { start: 0, end: 0 });
    assert.deepEqual(visibleWindow(0, 220, uniform(3), 5), { start: 0, end: 3 });
  });

  it('finds rows of different heights by position', () => {
    const offsets = rowOffsets([40, 58, 22, 22, 58]);
    assert.deepEqual(offsets, [0, 40, 98, 120, 142, 200]);
    assert.equal(rowAt(offsets, 0), 0);
    assert.equal(rowAt(offsets, 39), 0);
    assert.equal(rowAt(offsets, 40), 1);
    assert.equal(rowAt(offsets, 141), 3);
    assert.equal(rowAt(offsets, 10_000), 4);
    assert.deepEqual(visibleWindow(100, 30, offsets, 0), { start: 2, end: 4 });
    assert.equal(revealScrollTop(4, 0, 100, offsets), 100);
    assert.equal(maxScrollTop(offsets, 50), 150);
  });

  it('reveals a row by scrolling as little as possible', () => {
    const rows = uniform(100);
    assert.equal(revealScrollTop(5, 0, 220, rows), 0);
    assert.equal(revealScrollTop(20, 0, 220, rows), 22 * 21 - 220);
    assert.equal(revealScrollTop(2, 440, 220, rows), 44);
    assert.equal(maxScrollTop(rows, 220), 2200 - 220);
    assert.equal(maxScrollTop(uniform(3), 220), 0);
    assert.equal(pageSize(220, 22), 9);
    assert.equal(pageSize(10, 22), 1);
  });
});
