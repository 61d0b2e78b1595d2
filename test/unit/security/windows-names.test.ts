import { strict as assert } from 'node:assert';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { ABSENT } from '../../../src/core/patches/hash';
import { prepareWrite } from '../../../src/core/patches/record';
import { PathRefusedError } from '../../../src/core/ports';
import { createToolRegistry } from '../../../src/core/tools/registry';
import type { ToolContext } from '../../../src/core/tools/types';
import { createNodeCommandRunner } from '../../../src/host/node/command-runner';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { windowsNameProblem } from '../../../src/host/node/path-rules';
import { tempDir } from '../runtime/harness';

const REFUSED = [
  'CON',
  'con',
  'NUL',
  'nul.txt',
  'aux.txt',
  'Aux.tar.gz',
  'PRN',
  'COM1',
  'com9.log',
  'LPT1',
  'lpt3.txt',
  'notes.',
  'notes ',
  'a.txt:stream',
  'a.txt::$DATA',
  'a<b',
  'a>b',
  'a"b',
  'a|b',
  'a?b',
  'a*b',
  'tab\there',
];
const ALLOWED = ['console.log', 'nullable.ts', 'auxiliary.txt', 'COM10', 'LPT', 'com', 'falcon.txt', '.gitignore', 'a b.txt', 'notes.txt'];

describe('names Windows refuses are refused for a write, on every platform, before anything is written', () => {
  let root: string;
  let ws: NodeWorkspace;
  beforeEach(() => {
    root = tempDir('win-names');
    ws = new NodeWorkspace({ roots: [root] });
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('the name rule: device names with any extension and in any case, trailing dot or space, streams, <>"|?* and control characters', () => {
    for (const name of REFUSED) assert.ok(windowsNameProblem(name) !== undefined, name);
    for (const name of ALLOWED) assert.equal(windowsNameProblem(name), undefined, name);
    assert.match(windowsNameProblem('aux.txt')!, /device name AUX on Windows/);
    assert.match(windowsNameProblem('a.txt:s')!, /NTFS stream/);
    assert.match(windowsNameProblem('x.')!, /ends with a dot or a space/);
  });

  it('the workspace refuses each one as a file, a folder on the way, or through `\\`, and writes nothing', async () => {
    for (const name of REFUSED) {
      for (const path of [name, `sub/${name}/f.txt`, `sub\\${name}`]) {
        await assert.rejects(ws.write(path, new TextEncoder().encode('x'), ABSENT), (error: unknown) => {
          assert.ok(error instanceof PathRefusedError, `${path}: ${String(error)}`);
          assert.match(error.message, /Windows refuses this name, so it is never written/);
          return true;
        });
        await assert.rejects(ws.normalize(path, 'write'), PathRefusedError, path);
        await assert.rejects(prepareWrite(ws, path, new Uint8Array([1])), PathRefusedError, path);
      }
    }
    assert.deepEqual(readdirSync(root), []);
    for (const name of ALLOWED) await ws.write(`ok/${name}`, new TextEncoder().encode('x'), ABSENT);
    assert.equal(readdirSync(`${root}/ok`).length, ALLOWED.length);
  });

  it('write_file and edit_file fail in prepare with a clear error; a read and a delete of such a file still work', async () => {
    writeFileSync(`${root}/aux.txt`, 'made elsewhere\n');
    const registry = createToolRegistry();
    let applied = 0;
    const ctx: ToolContext = {
      runId: 'r',
      callId: 'c',
      stepId: 1,
      workspace: ws,
      commands: createNodeCommandRunner(),
      signal: new AbortController().signal,
      applyWrite: () => {
        applied += 1;
        return Promise.reject(new Error('nothing may be applied'));
      },
    };
    const write = registry.get('write_file')!;
    await assert.rejects(write.prepare!(write.input.parse({ path: 'NUL', content: 'x' }), ctx), /device name NUL on Windows/);
    const edit = registry.get('edit_file')!;
    const editInput = edit.input.parse({ path: 'aux.txt', old_string: 'made', new_string: 'changed' });
    await assert.rejects(edit.prepare!(editInput, ctx), /device name AUX on Windows/);
    assert.equal(applied, 0);
    assert.deepEqual(readdirSync(root), ['aux.txt']);
    assert.equal((await ws.read('aux.txt'))?.path, 'aux.txt');
    const del = registry.get('delete_file')!;
    const prepared = await del.prepare!(del.input.parse({ path: 'aux.txt' }), ctx);
    assert.equal(prepared.length, 1);
  });
});
