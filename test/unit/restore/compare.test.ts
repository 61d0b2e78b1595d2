import { strict as assert } from 'node:assert';
import { silentLog } from '../../../src/core/ports';
import type { Patch } from '../../../src/core/patches/schema';
import { hashContent } from '../../../src/core/patches/hash';
import { compareFiles, divergence, type ParentLink } from '../../../src/core/restore/compare';
import { RestoreActions } from '../../../src/host/vscode/restore/restore-actions';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { branchText } from '../../../src/host/vscode/restore/compare/branch-text';
import { buildSteps, runHeader } from '../../../src/host/vscode/timeline/view-build';
import type { Responder } from '../../support/fake-anthropic/server';
import { answer, harness, reply, SETTINGS, toolUse, type Harness } from '../runtime/harness';

// Comparing two branches: where two runs part (through any chain of forks), and what each one
// made of the files from there.

const links = (table: Record<string, ParentLink>) => (runId: string) => table[runId];

describe('compare branches: where two runs part', () => {
  const tree = links({
    f1: { runId: 'p', step: 3 },
    f2: { runId: 'p', step: 5 },
    g: { runId: 'f1', step: 6 },
  });

  it('a fork and its parent share the steps before the fork step, either way round', () => {
    assert.deepEqual(divergence('f1', 'p', tree), { base: 'p', step: 3 });
    assert.deepEqual(divergence('p', 'f1', tree), { base: 'p', step: 3 });
  });

  it('two forks of one run part at the earlier of their fork steps', () => {
    assert.deepEqual(divergence('f1', 'f2', tree), { base: 'p', step: 3 });
    assert.deepEqual(divergence('f2', 'f1', tree), { base: 'p', step: 3 });
  });

  it("a fork of a fork shares with its grandparent only what its parent shared (not the parent's later steps)", () => {
    assert.deepEqual(divergence('g', 'p', tree), { base: 'p', step: 3 });
    assert.deepEqual(divergence('g', 'f1', tree), { base: 'f1', step: 6 });
    assert.deepEqual(divergence('g', 'f2', tree), { base: 'p', step: 3 });
  });

  it('unrelated runs share nothing; a run is not compared with itself; a cycle in the listing ends the walk', () => {
    assert.deepEqual(divergence('p', 'q', tree), { step: 0 });
    assert.throws(() => divergence('p', 'p', tree), /cannot be compared with itself/);
    const cycle = links({ a: { runId: 'b', step: 2 }, b: { runId: 'a', step: 4 } });
    assert.deepEqual(divergence('a', 'c', cycle), { step: 0 });
    assert.deepEqual(divergence('a', 'b', cycle), { base: 'a', step: 4 }, 'b lists a as its parent from step 4');
  });
});

let n = 0;
function patch(path: string, stepId: number, before: string | null, after: string | null, extra: Partial<Patch> = {}): Patch {
  const hash = (text: string | null) => (text === null ? 'absent' : hashContent(new TextEncoder().encode(text)));
  return {
    patchId: `p${++n}`,
    runId: 'r',
    stepId,
    toolCallId: `c${n}`,
    path,
    op: before === null ? 'create' : after === null ? 'delete' : 'modify',
    beforeHash: hash(before),
    afterHash: hash(after),
    ...(before !== null ? { beforeBlob: hash(before) } : {}),
    ...(after !== null ? { afterBlob: hash(after) } : {}),
    added: 1,
    removed: 1,
    binary: false,
    createdAt: 0,
    state: 'pending',
    ...extra,
  };
}

describe('compare branches: the files each branch wrote', () => {
  it('each side holds its last write from the divergence on; a side that did not write a file holds it as it was there', () => {
    const shared = patch('a.txt', 1, 'zero', 'one');
    const left = [shared, patch('a.txt', 2, 'one', 'two'), patch('a.txt', 3, 'two', 'left'), patch('new.txt', 2, null, 'made')];
    const right = [shared, patch('a.txt', 2, 'one', 'right'), patch('b.txt', 4, 'b', null)];
    const files = compareFiles(left, right, 2);
    assert.deepEqual(
      files.map((f) => f.path),
      ['a.txt', 'b.txt', 'new.txt'],
    );
    const [a, b, made] = files;
    assert.equal(a!.left.hash, left[2]!.afterHash);
    assert.equal(a!.right.hash, right[1]!.afterHash);
    assert.equal(a!.same, false);
    assert.deepEqual(b!.left, { hash: right[2]!.beforeHash, blob: right[2]!.beforeBlob, binary: false, written: false });
    assert.deepEqual(b!.right, { hash: 'absent', binary: false, written: true }, 'a deleted file has no blob');
    assert.deepEqual(made!.right, { hash: 'absent', binary: false, written: false });
  });

  it('writes before the divergence are shared and not compared; equal ends are marked the same', () => {
    const left = [patch('a.txt', 1, 'x', 'y'), patch('c.txt', 2, 'c', 'd')];
    const right = [patch('a.txt', 1, 'x', 'y'), patch('c.txt', 3, 'c', 'd')];
    const files = compareFiles(left, right, 2);
    assert.deepEqual(
      files.map((f) => [f.path, f.same]),
      [['c.txt', true]],
    );
  });

  it('a rolled-back write still counts as what the branch made (a "Restore both" rolled the parent back)', () => {
    const left = [patch('a.txt', 2, 'one', 'two', { state: 'rolled_back' })];
    const files = compareFiles(left, [], 2);
    assert.equal(files[0]!.left.hash, left[0]!.afterHash);
    assert.equal(files[0]!.right.hash, left[0]!.beforeHash);
  });
});

/** Step 1 reads, step 2 edits a.txt to "two"; after "try three" it edits it to "three" instead. */
const script: Responder = (request) => {
  const messages = (request.body as { messages: { role: string; content: unknown }[] }).messages;
  const turn = messages.filter((m) => m.role === 'assistant').length;
  const retried = JSON.stringify(messages).includes('try three');
  if (turn === 0) return reply([toolUse('t1', 'read_file', { path: 'a.txt' })]);
  if (turn === 1)
    return reply([
      toolUse(retried ? 't3' : 't2', 'edit_file', { path: 'a.txt', old_string: 'one', new_string: retried ? 'three' : 'two' }),
    ]);
  return answer(retried ? 'made it three' : 'made it two');
};

describe('compare branches: a run and its fork through the runtime', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('a fork at step 2 with a new instruction: the steps from step 2 differ, a.txt holds "two" on one side and "three" on the other', async () => {
    h = await harness({ store: 'file', files: { 'a.txt': 'one\n' }, script });
    const parent = await h.runtime().start({ task: 'edit a.txt', settings: SETTINGS });
    const restore = new RestoreActions({
      store: h.store,
      workspace: new NodeWorkspace({ roots: [h.root] }),
      clock: { now: () => Date.now() },
      log: silentLog,
      isRunning: () => false,
    });
    const { fork } = await restore.fork(parent.runId, { step: 2 }, 'restore');
    const done = await h.runtime().continue(fork.runId, 'try three', new AbortController().signal, { moreTurns: 5 });
    assert.equal(done.status, 'completed', done.reason);

    const runs = await h.store.listRuns();
    const at = divergence(fork.runId, parent.runId, (id) => runs.find((r) => r.runId === id)?.parent);
    assert.deepEqual(at, { base: parent.runId, step: 2 });
    const [ofFork, ofParent] = [await h.store.readRun(fork.runId), await h.store.readRun(parent.runId)];
    const files = compareFiles(ofFork.patches, ofParent.patches, at.step);
    assert.equal(files.length, 1);
    const text = async (hash: string | undefined) => new TextDecoder().decode(await h!.store.getBlob(hash!));
    assert.equal(await text(files[0]!.left.blob), 'three\n');
    assert.equal(await text(files[0]!.right.blob), 'two\n');

    const forkText = branchText(runHeader(ofFork, false), buildSteps(ofFork, new Map()), parent.runId, at);
    const parentText = branchText(runHeader(ofParent, false), buildSteps(ofParent, new Map()), fork.runId, at);
    assert.match(forkText, new RegExp(`Fork of run ${parent.runId} from the start of step 2`));
    assert.match(forkText, /Shares step(s)? 1 .*shown from step 2 on/);
    assert.match(forkText, /Instruction: try three\n\s+Told the model: Files that changed [\s\S]*a\.txt: restored to the start of step 2/);
    assert.match(forkText, /made it three/);
    assert.match(parentText, /made it two/);
    assert.doesNotMatch(parentText, /Step 1\n/, 'the shared step is not shown');
    assert.doesNotMatch(forkText, /made it two/);
  });
});
