import { strict as assert } from 'node:assert';
import type { Workspace } from '../../../src/core/ports';
import { boundedWorkspace, EditorTimeoutError } from '../../../src/host/vscode/bounded-workspace';

describe('a workspace call never waits forever on the editor', () => {
  const never = new Promise<never>(() => undefined);
  const hanging: Workspace = {
    roots: ['/ws'],
    normalize: async (p) => p,
    read: () => never,
    write: () => never,
    delete: () => never,
    list: async () => [],
    stat: async () => null,
  };

  it('a read the editor never answers fails within its limit with a clear error; answered calls pass through', async () => {
    const ws = boundedWorkspace(hanging, { readMs: 50, writeMs: 80 });
    const began = Date.now();
    await assert.rejects(
      ws.read('a.txt'),
      (e: unknown) => e instanceof EditorTimeoutError && /reading a\.txt within 50 ms/.test(e.message),
    );
    assert.ok(Date.now() - began < 1000);
    await assert.rejects(ws.write('a.txt', new Uint8Array(), 'absent'), /did not answer writing a\.txt/);
    assert.deepEqual(await ws.list('.'), []);
    assert.equal(await ws.normalize('b'), 'b');
    assert.equal(ws.isDirty, undefined, 'optional methods stay absent');
  });
});
