import { strict as assert } from 'node:assert';
import { planRetention, type RunUsage } from '../../../src/core/store/retention';
import type { RunStatus } from '../../../src/core/store/records';

// maxRuns is the most finished runs kept (the setting says so): paused and interrupted runs stay
// and are not counted, so a store full of them does not remove each run the moment it finishes.

const run = (runId: string, status: RunStatus, updatedAt: number): RunUsage => ({
  runId,
  status,
  updatedAt,
  bytes: 10,
  protected: false,
  blobs: new Set<string>(),
});

describe('retention plan', () => {
  it('counts finished runs only against maxRuns: the run just finished stays though older unfinished runs outnumber the limit', () => {
    const unfinished = [run('i1', 'interrupted', 1), run('i2', 'interrupted', 2), run('p1', 'paused', 3)];
    assert.deepEqual(planRetention([...unfinished, run('done', 'completed', 4)], new Map(), { maxRuns: 1 }), []);
    const finished = [run('old', 'failed', 0), run('mid', 'cancelled', 5), run('new', 'completed', 6)];
    assert.deepEqual(
      planRetention([...unfinished, ...finished], new Map(), { maxRuns: 1 }),
      ['old', 'mid'],
      'the oldest finished go first',
    );
  });

  it('under a byte quota the oldest finished runs go until it fits; unfinished runs never', () => {
    const runs = [run('i1', 'interrupted', 1), run('old', 'completed', 2), run('new', 'completed', 3)];
    assert.deepEqual(planRetention(runs, new Map(), { maxBytes: 20 }), ['old']);
    assert.deepEqual(planRetention(runs, new Map(), { maxBytes: 0 }), ['old', 'new']);
  });
});
