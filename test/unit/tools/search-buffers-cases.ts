import { strict as assert } from 'node:assert';
import { rmSync } from 'node:fs';
import type { TextSearchQuery } from '../../../src/core/ports';
import type { BufferText } from '../../../src/host/node/search/buffers';
import { workspaceFind, workspaceSearch, workspaceTree, type Located } from '../../../src/host/node/search/workspace-search';
import { tempDir, writeFiles } from '../runtime/harness';

function query(over: Partial<TextSearchQuery> = {}): TextSearchQuery {
  return {
    dir: '.',
    pattern: 'zebra',
    regex: false,
    caseSensitive: true,
    include: [],
    exclude: [],
    contextLines: 0,
    maxMatches: 100,
    ...over,
  };
}

/** The cases of one engine: the unit layer runs them with the Node fallback, the system layer with ripgrep. */
export function searchBuffersCases(engine: string, rgPath: string | null): void {
  describe(`search over unsaved editor buffers (${engine})`, () => {
    let root: string;
    let at: Located;
    beforeEach(() => {
      root = tempDir('buffers');
      writeFiles(root, {
        '.gitignore': 'out/\n',
        'a.txt': 'zebra on disk\n',
        'b.txt': 'nothing\n',
        'src/c.txt': 'zebra c\n',
        'out/x.txt': '',
      });
      at = { rootAbs: root, base: '', prefix: '' };
    });
    afterEach(() => rmSync(root, { recursive: true, force: true }));

    it("searches a dirty buffer's text instead of its file, and a file that exists only in an editor", async () => {
      const buffers: BufferText[] = [
        { path: 'a.txt', text: 'edited, no stripes\n', onDisk: true },
        { path: 'b.txt', text: 'typed zebra here\n', onDisk: true },
        { path: 'src/new.txt', text: 'one\nzebra new\n', onDisk: false },
        { path: 'out/ignored.txt', text: 'zebra ignored\n', onDisk: false },
      ];
      const result = await workspaceSearch(at, query(), { rgPath, buffers });
      assert.deepEqual(
        result.files.map((f) => [f.path, f.lines.map((l) => l.line)]),
        [
          ['b.txt', [1]],
          ['src/c.txt', [1]],
          ['src/new.txt', [2]],
        ],
      );
      assert.equal(result.matches, 3);
      assert.equal(result.stopped, undefined);
    });

    it('keeps the cap in path order across disk and buffers, and says where it stopped', async () => {
      const buffers: BufferText[] = [{ path: 'b.txt', text: 'zebra\nzebra\n', onDisk: true }];
      const result = await workspaceSearch(at, query({ maxMatches: 2 }), { rgPath, buffers });
      assert.deepEqual(
        result.files.map((f) => f.path),
        ['a.txt', 'b.txt'],
      );
      assert.equal(result.matches, 2);
      assert.equal(result.stopped?.reason, 'max_matches');
      assert.equal(result.stopped?.lastPath, 'b.txt');
    });

    it('matches a buffer alike with plain text (in this thread) and a regular expression (in a worker that stops a runaway pattern)', async () => {
      const buffers: BufferText[] = [{ path: 'b.txt', text: 'one\r\nZebra two\r\nthree\r\nzebra\u0000x\n', onDisk: true }];
      const shown = (result: { files: readonly { path: string; lines: readonly { line: number; text: string; match: boolean }[] }[] }) =>
        result.files.filter((f) => f.path === 'b.txt').flatMap((f) => f.lines.map((l) => `${l.line}${l.match ? ':' : '-'}${l.text}`));
      const plain = await workspaceSearch(at, query({ caseSensitive: false, contextLines: 1 }), { rgPath, buffers });
      const regex = await workspaceSearch(at, query({ regex: true, pattern: '[Zz]ebr.', contextLines: 1 }), { rgPath, buffers });
      assert.deepEqual(shown(plain), [], 'a buffer holding a NUL is binary, as a file is');
      const text: BufferText[] = [{ path: 'b.txt', text: 'one\r\nZebra two\r\nthree\r\n', onDisk: true }];
      const plainText = await workspaceSearch(at, query({ caseSensitive: false, contextLines: 1 }), { rgPath, buffers: text });
      const regexText = await workspaceSearch(at, query({ regex: true, pattern: '[Zz]ebr.', contextLines: 1 }), { rgPath, buffers: text });
      assert.deepEqual(shown(plainText), ['1-one', '2:Zebra two', '3-three']);
      assert.deepEqual(shown(regexText), shown(plainText));
      assert.deepEqual(shown(regex), []);
      const runaway: BufferText[] = [{ path: 'b.txt', text: `${'a'.repeat(5000)}!\n`, onDisk: true }];
      await assert.rejects(
        workspaceSearch(at, query({ regex: true, pattern: '(a+)+$' }), { rgPath, buffers: runaway }),
        /backtracks catastrophically/,
      );
    });

    it('find_files and list_dir show a file that exists only in an editor, with its size', async () => {
      const buffers: BufferText[] = [
        { path: 'src/new.txt', text: 'hello\n', onDisk: false },
        { path: 'a.txt', text: 'much longer than before\n', onDisk: true },
        { path: 'out/hidden.txt', text: 'x', onDisk: false },
      ];
      const found = await workspaceFind(at, { dir: '.', glob: '*.txt', exclude: [], max: 10 }, { rgPath, buffers });
      assert.deepEqual(found.paths, ['a.txt', 'b.txt', 'src/c.txt', 'src/new.txt']);
      const tree = await workspaceTree(at, { dir: '.', depth: 2, maxEntries: 50 }, { rgPath, buffers });
      const files = tree.entries.filter((e) => e.kind === 'file').map((e) => [e.path, e.size]);
      assert.deepEqual(files, [
        ['.gitignore', 5],
        ['a.txt', 24],
        ['b.txt', 8],
        ['src/c.txt', 8],
        ['src/new.txt', 6],
      ]);
      const shallow = await workspaceTree(at, { dir: '.', depth: 1, maxEntries: 50 }, { rgPath, buffers });
      assert.ok(!shallow.entries.some((e) => e.path === 'src/new.txt'), 'not past the depth asked for');
    });
  });
}
