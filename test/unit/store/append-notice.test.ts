import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FileCheckpointStore } from '../../../src/core/store/file/file-store';
import { openFileStore } from '../../../src/host/node/store-factory';
import { checkpoint, runInput } from './fixtures';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(done: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !done(); waited += 20) {
    if (waited > 5000) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('file store change notice (watchAppends)', () => {
  let root: string;
  let here: FileCheckpointStore;
  let other: FileCheckpointStore;
  let told: string[];
  let notice: { close(): void };

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'store-notice-'));
    here = openFileStore(root, { timers: undefined });
    other = openFileStore(root, { timers: undefined });
    await (await here.createRun(runInput('r-here'))).close();
    told = [];
    notice = here.watchAppends((runId) => told.push(runId));
    await sleep(100); // the watcher is set up (a recursive fs.watch on Linux is set up asynchronously, with no event to await)
  });

  afterEach(() => {
    notice.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("tells another holder's new run and appends, once per change", async () => {
    const writer = await other.createRun(runInput('r-other'));
    await until(() => told.includes('r-other'), 'the new run');
    const before = told.length;
    await writer.append([checkpoint('c1', 1, 'before_model', 0)]);
    await until(() => told.length > before, 'the append');
    await writer.close();
    assert.deepEqual([...new Set(told)], ['r-other']);
  });

  it('never tells its own appends nor a lease heartbeat', async () => {
    const own = await here.openWriter('r-here');
    await own.append([checkpoint('c1', 1, 'before_model', 0)]);
    await own.close();
    const held = await other.openWriter('r-here');
    await held.renewLease();
    await held.renewLease();
    await sleep(300); // time for a notice to come; the test is that none does (nothing to await)
    assert.deepEqual(told, [], 'own writes and heartbeats are no change');
    // The notice still works: the other holder's append comes through.
    await held.append([checkpoint('c2', 1, 'after_model', 0)]);
    await until(() => told.length > 0, "the other holder's append");
    await held.close();
    assert.deepEqual([...new Set(told)], ['r-here']);
  });

  it('tells nothing once closed', async () => {
    notice.close();
    await (await other.createRun(runInput('r-late'))).close();
    await sleep(300); // as above: the test is that no notice comes
    assert.deepEqual(told, []);
  });
});
