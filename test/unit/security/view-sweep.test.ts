import { strict as assert } from 'node:assert';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sweepViews } from '../../../src/host/node/sandbox/index';
import { recoverView, releaseView } from '../../../src/host/node/sandbox/overlay';
import { tempDir } from '../runtime/harness';

// Views of dead processes go at the next sweep; only a view marked with a call id waits for its run's resume.

describe('sweepViews', () => {
  it("removes a dead process's view whose random part starts with c (no call mark), and keeps one marked with a call", () => {
    const views = tempDir('sweep');
    try {
      const dead = 4194304; // never a live pid: pids are below pid_max, at most 2^22
      const born = Date.now().toString(36);
      for (const name of [`${dead}-${born}-c73027ad`, `${dead}-${born}-0a1b2c3d`, `${dead}-${born}-0a1b2c3d-ctoolu_1`])
        mkdirSync(join(views, name));
      sweepViews(views);
      assert.deepEqual(readdirSync(views), [`${dead}-${born}-0a1b2c3d-ctoolu_1`]);
    } finally {
      rmSync(views, { recursive: true, force: true });
    }
  });

  it("leaves a live process's view of a call to it until that process releases it (its apply failed as its window closed)", () => {
    const views = tempDir('sweep');
    try {
      const dir = join(views, `${process.ppid}-${Date.now().toString(36)}-0a1b2c3d-ctoolu_1`);
      mkdirSync(dir);
      writeFileSync(join(dir, 'view.json'), JSON.stringify({ roots: ['/w'], startedAt: 1 }));
      assert.equal(recoverView(views, 'toolu_1'), undefined, 'its process lives and holds it');
      releaseView(dir);
      assert.equal(recoverView(views, 'toolu_1')?.dir, dir);
      assert.equal(recoverView(views, 'toolu_2'), undefined, "another call's view is not this one");
    } finally {
      rmSync(views, { recursive: true, force: true });
    }
  });
});
