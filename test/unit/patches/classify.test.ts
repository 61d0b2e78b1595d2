import { strict as assert } from 'node:assert';
import { classifyEach, classifyPatch, classifyPatches, planFiles } from '../../../src/core/patches/classify';
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
