import { strict as assert } from 'node:assert';
import { rmSync } from 'node:fs';
import Module from 'node:module';
import { join } from 'node:path';
import { openFileStore } from '../../../src/host/node/store-factory';
import type { RunEvent, RunModel as RunModelType } from '../../../src/host/vscode/window/run-model';
import { tempDir } from '../runtime/harness';
import { checkpoint, message, runInput } from '../store/fixtures';

// The window's run model in plain Node: `vscode` is the bench's fake (an event emitter and
// disposables), the stores are real file stores; a second store object on the same folder is
// another holder, as another window or process is.
const resolve = (Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string })._resolveFilename;
(Module as unknown as { _resolveFilename: typeof resolve })._resolveFilename = function (request: string, ...rest: unknown[]) {
  return resolve.call(this, request === 'vscode' ? join(__dirname, '../../bench/fake-vscode.ts') : request, ...rest);
};

class Memory {
  readonly values = new Map<string, unknown>();
  get(key: string): unknown {
    return this.values.get(key);
  }
  update(key: string, value: unknown): Promise<void> {
    this.values.set(key, value);
    return Promise.resolve();
  }
}

function nextEvent(model: RunModelType, kind: RunEvent['kind']): Promise<RunEvent> {
  return new Promise((done) => {
    const subscription = model.onDidChange((event) => {
      if (event.kind !== kind) return;
      subscription.dispose();
      done(event);
    });
  });
}

describe('the window run model', () => {
  let RunModel: typeof RunModelType;
  let root: string;
  let model: RunModelType;
  before(() => {
    // Loaded once the fake is in place (a static import would load the real `vscode` first).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    ({ RunModel } = require('../../../src/host/vscode/window/run-model') as { RunModel: typeof RunModelType });
  });
  beforeEach(() => {
    root = tempDir('run-model');
  });
  afterEach(() => {
    model?.dispose();
    rmSync(root, { recursive: true, force: true });
  });

  it("publishes this window's appends with their records, and counts journal reads by the contract's read methods only", async () => {
    model = new RunModel(openFileStore(root));
    const events: RunEvent[] = [];
    model.onDidChange((e) => events.push(e));
    const writer = await model.store.createRun(runInput('r1'));
    await writer.append([checkpoint('c1', 1, 'before_model', 0)]);
    await writer.close();
    assert.deepEqual(
      events.map((e) => e.kind),
      ['runs', 'records', 'runs'],
    );
    const records = events[1]!.kind === 'records' ? events[1]!.records : undefined;
    assert.equal(records?.length, 1);
    assert.equal(model.journalReads, 0, 'creating and appending reads no journal');
    await model.store.listRuns();
    await model.store.getBlob(await model.store.putBlob(new Uint8Array([1]))).catch(() => undefined);
    assert.equal(model.journalReads, 0, 'a listing and a blob are no journal read');
    await model.store.readRun('r1');
    await model.store.readRecords('r1');
    await model.store.readResumeState('r1');
    await model.store.verify('r1');
    await (await model.store.openWriter('r1')).close();
    assert.equal(model.journalReads, 5);
  });

  it("tells another holder's appends, and who holds a run from the store's lease notice; a heartbeat is no event and reads no journal", async () => {
    const other = openFileStore(root);
    await (await other.createRun(runInput('r2'))).close();
    model = new RunModel(openFileStore(root));
    await model.listRuns();
    model.watch();
    const events: RunEvent[] = [];
    model.onDidChange((e) => events.push(e));
    const taken = nextEvent(model, 'runs');
    const writer = await other.openWriter('r2');
    await taken;
    const appended = nextEvent(model, 'records');
    await writer.append([message(0, 0, 'user', 'from elsewhere')]);
    assert.deepEqual(
      await appended,
      { kind: 'records', runId: 'r2' },
      "another holder's records are not carried: the run is read when needed",
    );
    await writer.renewLease();
    await writer.renewLease();
    const released = nextEvent(model, 'runs');
    await writer.close();
    await released;
    await model.settled();
    assert.deepEqual(
      events.map((e) => e.kind),
      ['runs', 'records', 'runs'],
      'the take, the append, the release: the heartbeats between told nothing',
    );
    assert.equal(model.journalReads, 0);
  });

  it('keeps the selected run across a reload (workspaceState, checked by its schema) and selects a fork made here', async () => {
    const memory = new Memory();
    model = new RunModel(openFileStore(root), Promise.resolve(), memory);
    assert.equal(model.selected, undefined);
    const selected: (string | undefined)[] = [];
    model.onDidSelect((runId) => selected.push(runId));
    const writer = await model.store.createRun(runInput('parent'));
    await writer.append([checkpoint('c1', 1, 'before_model', 0), message(0, 1, 'user', 'go'), checkpoint('c2', 2, 'before_model', 1)]);
    await writer.close();
    model.select('parent');
    const fork = await model.store.forkRun('parent', { runId: 'the-fork', step: 2, files: 'keep' });
    assert.equal(fork.runId, 'the-fork');
    assert.equal(model.selected, 'the-fork');
    assert.deepEqual(selected, ['parent', 'the-fork']);
    model.dispose();

    const reloaded = new RunModel(openFileStore(root), Promise.resolve(), memory);
    assert.equal(reloaded.selected, 'the-fork', 'the next window of this workspace starts on the same run');
    reloaded.dispose();
    memory.values.set('agentCheckpoints.selectedRun', { v: 1, runId: 42 });
    model = new RunModel(openFileStore(root), Promise.resolve(), memory);
    assert.equal(model.selected, undefined, 'a stored value that does not parse selects nothing');
  });

  it('gathers live changes into one event, and tells a change of the review counts once', async () => {
    model = new RunModel(openFileStore(root));
    const live = nextEvent(model, 'live');
    model.liveChanged('a.ts');
    model.liveChanged('lib/b.ts');
    model.liveChanged('a.ts');
    assert.deepEqual(await live, { kind: 'live', paths: ['a.ts', 'lib/b.ts'] });
    const events: RunEvent[] = [];
    model.onDidChange((e) => events.push(e));
    model.setReviewCounts(new Map([['r1', 2]]));
    model.setReviewCounts(new Map([['r1', 2]]));
    model.setReviewCounts(new Map());
    assert.deepEqual(events, [{ kind: 'review' }, { kind: 'review' }]);
    assert.equal(model.reviewCount('r1'), 0);
  });
});
