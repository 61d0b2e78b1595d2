import { strict as assert } from 'node:assert';
import { StoreError, type CheckpointStore } from '../../../src/core/store/contract';
import { UsageError } from '../../../src/host/cli/args';
import { resumeTarget } from '../../../src/host/cli/status';
import { MemoryCheckpointStore } from '../../support/memory-store';
import { checkpoint, message, runInput } from '../store/fixtures';

/** The store, refusing the whole reads a resume must not make (the run's whole journal, every record). */
function resumeReadsOnly(store: CheckpointStore): CheckpointStore {
  const refused = () => Promise.reject(new Error('a resume read the whole run'));
  return Object.assign(Object.create(store) as CheckpointStore, { readRun: refused, readRecords: refused });
}

async function pausedRun(store: CheckpointStore, runId: string, text: string): Promise<void> {
  const writer = await store.createRun(runInput(runId));
  await writer.append([message(0, 0, 'user', text), checkpoint(`${runId}-c1`, 0, 'run_start', 1)]);
  await writer.append([{ type: 'status', status: 'paused', reason: 'approval needed' }]);
  await writer.close();
}

describe('CLI resume: which run, and what it reads', () => {
  it('takes the newest resumable run (or the one named) from its resume state, never reading the whole run', async () => {
    const store = new MemoryCheckpointStore();
    await pausedRun(store, 'older', 'first task');
    // The newer run is stamped a later millisecond: wait for the clock to move, no longer.
    for (const now = Date.now(); Date.now() === now;) await new Promise((done) => setImmediate(done));
    await pausedRun(store, 'newer', 'second task');
    const newest = await resumeTarget(resumeReadsOnly(store), undefined, '/store');
    assert.equal(newest.run.runId, 'newer');
    assert.deepEqual(
      newest.messages.map((m) => (m.content as { text: string }[])[0]!.text),
      ['second task'],
    );
    assert.equal((await resumeTarget(resumeReadsOnly(store), 'older', '/store')).run.runId, 'older');
  });

  it('refuses a run another writer holds, and says so when there is nothing to resume', async () => {
    const store = new MemoryCheckpointStore();
    await assert.rejects(
      resumeTarget(store, undefined, '/store'),
      (e: unknown) => e instanceof UsageError && /no resumable run in \/store/.test(e.message),
    );
    const writer = await store.createRun(runInput('busy'));
    await assert.rejects(resumeTarget(store, 'busy', '/store'), (e: unknown) => e instanceof StoreError && e.code === 'lease_held');
    await writer.close();
    assert.equal((await resumeTarget(store, 'busy', '/store')).status, 'running');
  });
});
