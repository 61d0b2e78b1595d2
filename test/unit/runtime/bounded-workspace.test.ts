import { strict as assert } from 'node:assert';
import type { Workspace } from '../../../src/core/ports';
import { createToolRegistry } from '../../../src/core/tools/registry';
import { boundedWorkspace, EditorTimeoutError } from '../../../src/host/vscode/window/bounded-workspace';

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
    assert.ok(Date.now() - began < 10_000, 'it failed at its limit, not never');
    await assert.rejects(ws.write('a.txt', new Uint8Array(), 'absent'), /did not answer writing a\.txt/);
    assert.deepEqual(await ws.list('.'), []);
    assert.equal(await ws.normalize('b'), 'b');
    assert.equal(ws.isDirty, undefined, 'optional methods stay absent');
  });

  it('passes the listing and search capabilities on, each under the read limit, so list_dir, search_text and find_files stay offered', async () => {
    const served: Workspace = {
      ...hanging,
      searchText: async () => ({ matches: [], filesSearched: 0, complete: true }) as never,
      findFiles: async () => ({ paths: ['a.txt'], total: 1 }) as never,
      listTree: () => never,
    };
    const ws = boundedWorkspace(served, { readMs: 50, writeMs: 80 });
    assert.deepEqual(await ws.findFiles!({ dir: '.', glob: '*', exclude: [], max: 10 }), { paths: ['a.txt'], total: 1 });
    assert.ok(
      await ws.searchText!({
        dir: '.',
        pattern: 'x',
        regex: false,
        caseSensitive: false,
        include: [],
        exclude: [],
        contextLines: 0,
        maxMatches: 1,
      }),
    );
    await assert.rejects(ws.listTree!({ dir: 'src', depth: 1, maxEntries: 10 }), /did not answer listing src within 50 ms/);
    const offered = createToolRegistry({ workspace: ws })
      .list()
      .map((t) => t.name);
    for (const name of ['list_dir', 'search_text', 'find_files']) assert.ok(offered.includes(name), `${name} is offered`);
    const bare = createToolRegistry({ workspace: boundedWorkspace(hanging) })
      .list()
      .map((t) => t.name);
    for (const name of ['list_dir', 'search_text', 'find_files'])
      assert.ok(!bare.includes(name), `${name} is not offered without its capability`);
    assert.ok(bare.includes('read_file'));
  });
});
