import { strict as assert } from 'node:assert';
import { classifyEach, classifyPatch, classifyPatches, planFiles, readLiveState } from '../../../src/core/patches/classify';
import { classifyLatestPatches } from '../../../src/core/runtime/resume';
import { ABSENT, encodeText, hashContent } from '../../../src/core/patches/hash';
import type { LiveFile } from '../../../src/core/ports';
import type { Patch } from '../../../src/core/patches/schema';
import { MemoryWorkspace, utf8 } from './fakes';

const h = (s: string) => hashContent(utf8(s));
const live = (s: string): LiveFile => ({ path: 'f', bytes: utf8(s), hash: h(s), source: 'disk', dirty: false });
const patch = (id: string, path: string, before: string | null, after: string | null): Patch => ({
  patchId: id,
  runId: 'r',
  stepId: 0,
  toolCallId: 'c',
  path,
  op: before === null ? 'create' : after === null ? 'delete' : 'modify',
  beforeHash: before === null ? ABSENT : h(before),
  afterHash: after === null ? ABSENT : h(after),
  added: 0,
  removed: 0,
  binary: false,
  createdAt: 0,
  state: 'pending',
});

/** A workspace with file modes: the executable bit per path (absent file: null). */
class ModesWorkspace extends MemoryWorkspace {
  readonly modes = new Map<string, boolean>();
  reads = 0;
  async executable(path: string): Promise<boolean | null> {
    this.reads++;
    return this.files.has(path) ? (this.modes.get(path) ?? false) : null;
  }
}

describe('patches/classify', () => {
  it('modify: applied, not_applied, conflict, missing', () => {
    const p = patch('p', 'f', 'a', 'b');
    assert.equal(classifyPatch(p, live('b')), 'applied');
    assert.equal(classifyPatch(p, live('a')), 'not_applied');
    assert.equal(classifyPatch(p, live('c')), 'conflict');
    assert.equal(classifyPatch(p, null), 'missing');
  });

  it('create and delete', () => {
    const create = patch('c', 'f', null, 'x');
    assert.equal(classifyPatch(create, live('x')), 'applied');
    assert.equal(classifyPatch(create, null), 'not_applied');
    assert.equal(classifyPatch(create, live('other')), 'conflict');
    const del = patch('d', 'f', 'x', null);
    assert.equal(classifyPatch(del, null), 'applied');
    assert.equal(classifyPatch(del, live('x')), 'not_applied');
    assert.equal(classifyPatch(del, live('y')), 'conflict');
  });

  it('a BOM on disk still classifies as the buffer text', () => {
    const p = patch('p', 'f', 'a', 'b\r\n');
    const disk = encodeText('b\r\n', true);
    assert.equal(classifyPatch(p, { ...live('b\r\n'), bytes: disk, hash: hashContent(disk) }), 'applied');
  });

  it('a mode-only patch (a chmod +x: the same bytes): the live bit decides, bytes alone never do', () => {
    const chmod = { ...patch('m', 'f', 'a', 'a'), execBefore: false, execAfter: true };
    assert.equal(classifyPatch(chmod, live('a'), true), 'applied');
    assert.equal(classifyPatch(chmod, live('a'), false), 'not_applied', 'the bit put back: undone');
    assert.equal(classifyPatch(chmod, live('b'), true), 'conflict');
    assert.equal(classifyPatch(chmod, live('b'), false), 'conflict');
    assert.equal(classifyPatch(chmod, null, null), 'missing');
    assert.equal(classifyPatch(chmod, live('a')), 'applied', 'a host without modes: bytes only, as before');
  });

  it('a write that also changes the bit: each side needs its bytes and its bit, else a conflict', () => {
    const both = { ...patch('w', 'f', 'a', 'b'), execBefore: false, execAfter: true };
    assert.equal(classifyPatch(both, live('b'), true), 'applied');
    assert.equal(classifyPatch(both, live('a'), false), 'not_applied');
    assert.equal(classifyPatch(both, live('b'), false), 'conflict', "the bytes are the agent's, the bit is not");
    assert.equal(classifyPatch(both, live('a'), true), 'conflict');
    const created = { ...patch('c', 'f', null, 'x'), execAfter: true };
    assert.equal(classifyPatch(created, live('x'), true), 'applied');
    assert.equal(classifyPatch(created, live('x'), false), 'conflict');
    assert.equal(classifyPatch(created, null, null), 'not_applied');
    const deleted = { ...patch('d', 'f', 'x', null), execBefore: true };
    assert.equal(classifyPatch(deleted, null, null), 'applied');
    assert.equal(classifyPatch(deleted, live('x'), true), 'not_applied');
    assert.equal(classifyPatch(deleted, live('x'), false), 'conflict');
  });

  it('read from the workspace: the bit is read for a patch that holds one, and a resume sees a bit put back as not_applied', async () => {
    const ws = new ModesWorkspace();
    ws.files.set('run.sh', { disk: utf8('a') });
    const chmod = { ...patch('m', 'run.sh', 'a', 'a'), execBefore: false, execAfter: true };
    ws.modes.set('run.sh', true);
    assert.equal(await readLiveState(ws, chmod), 'applied');
    ws.modes.set('run.sh', false);
    assert.equal(await readLiveState(ws, chmod), 'not_applied');
    assert.deepEqual(
      (await classifyLatestPatches(ws, [chmod])).map((f) => f.live),
      ['not_applied'],
    );
    ws.reads = 0;
    assert.equal(await readLiveState(ws, patch('p', 'run.sh', 'b', 'a')), 'applied');
    assert.equal(ws.reads, 0, 'no bit read for a patch that does not change it');
    assert.equal(await readLiveState(new MemoryWorkspace(), chmod), 'missing');
  });

  it('per-file plan of a chain: the newest decides applied, an intermediate state is located', () => {
    const chain = [patch('1', 'f', 'a', 'b'), patch('2', 'f', 'b', 'c'), patch('3', 'g', null, 'z')];
    const plans = planFiles(chain, new Map([['f', h('b')]]));
    assert.equal(plans.length, 2);
    assert.deepEqual([plans[0]!.state, plans[0]!.appliedCount], ['conflict', 1]);
    assert.deepEqual([plans[1]!.state, plans[1]!.appliedCount], ['not_applied', 0]);
    assert.equal(planFiles(chain, new Map([['f', h('c')]]))[0]!.state, 'applied');
    assert.equal(planFiles(chain, new Map([['f', h('a')]]))[0]!.state, 'not_applied');
  });

  it('classifies 1,000 patches reading each file once', async () => {
    const ws = new MemoryWorkspace();
    const patches: Patch[] = [];
    for (let i = 0; i < 1000; i++) {
      const path = `f${i % 100}.txt`;
      patches.push(patch(`p${i}`, path, `v${i}`, `v${i + 100}`));
      ws.userSave(path, utf8(`v${i + 100}`));
    }
    let reads = 0;
    const read = ws.read.bind(ws);
    ws.read = (p: string) => (reads++, read(p));
    const plans = await classifyPatches(ws, patches);
    assert.equal(reads, 100);
    assert.equal(plans.length, 100);
    const each = classifyEach(patches, new Map(plans.map((p) => [p.path, p.liveHash])));
    assert.equal(each.get('p999'), 'applied');
    assert.equal(each.get('p0'), 'conflict');
  });
});
