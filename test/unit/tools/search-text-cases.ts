import { strict as assert } from 'node:assert';
import { rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FileQuery, TextSearchQuery, TextSearchResult } from '../../../src/core/ports';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { comparePaths } from '../../../src/host/node/search/walk';
import { tempDir, writeFiles } from '../runtime/harness';
import { ripgrepOrSkip, runTool } from './search-support';

const FIXTURE: Record<string, string> = {
  '.gitignore': 'build/\n*.log\n!keep.log\n',
  '.ignore': 'secret-dir/\n',
  '.hidden/h.txt': 'alpha hidden\n',
  'src/a.ts': 'const alpha = 1;\n// TODO alpha\nexport {};\n',
  'src/b.ts': 'Alpha upper\n',
  'src/nested/.gitignore': 'gen.ts\n',
  'src/nested/gen.ts': 'alpha generated\n',
  'src/nested/c.ts': 'line1\nline2\nalpha here\nline4\nline5\nline6\nline7\nalpha again\n',
  'build/out.js': 'alpha built\n',
  'x.log': 'alpha log\n',
  'keep.log': 'alpha kept\n',
  'secret-dir/s.txt': 'alpha secret\n',
  'crlf.txt': 'alpha\r\nbeta\r\n',
};

function query(over: Partial<TextSearchQuery> = {}): TextSearchQuery {
  return {
    dir: '.',
    pattern: 'alpha',
    regex: false,
    caseSensitive: true,
    include: [],
    exclude: [],
    contextLines: 0,
    maxMatches: 100,
    ...over,
  };
}

function fixture(): string {
  const root = tempDir('search');
  writeFiles(root, FIXTURE);
  writeFileSync(join(root, 'bin.dat'), Buffer.concat([Buffer.from('alpha\n'), Buffer.from([0, 1, 2]), Buffer.from('alpha\n')]));
  writeFileSync(join(root, 'big.txt'), `alpha\n${'x'.repeat(1024 * 1024)}\n`);
  return root;
}

/** The search_text cases of one engine: the unit layer runs them with the Node fallback, the system layer with ripgrep. */
export function searchTextCases(engine: string, rgPath: string | null): void {
  describe(`search_text (${engine})`, () => {
    let root: string;
    const search = (over: Partial<TextSearchQuery> = {}) => new NodeWorkspace({ roots: [root], ripgrep: rgPath }).searchText(query(over));
    beforeEach(() => (root = fixture()));
    afterEach(() => rmSync(root, { recursive: true, force: true }));

    it('answers with the engine it names', async () => {
      assert.equal((await search()).engine, rgPath === null ? 'node' : 'ripgrep');
    });

    it('honours .gitignore (nested, negated), .ignore; skips binary, oversized and ignored files; groups hits by file in path order', async () => {
      const result = await search();
      assert.deepEqual(
        result.files.map((f) => [f.path, f.lines.map((l) => l.line)]),
        [
          ['.hidden/h.txt', [1]],
          ['crlf.txt', [1]],
          ['keep.log', [1]],
          ['src/a.ts', [1, 2]],
          ['src/nested/c.ts', [3, 8]],
        ],
      );
      assert.equal(result.files[1]!.lines[0]!.text, 'alpha', 'the CR of a CRLF line is not part of its text');
      assert.equal(result.matches, 7);
      assert.equal(result.stopped, undefined);
    });

    it('takes context lines, case-insensitivity, include and exclude globs, and regular expressions', async () => {
      const withContext = await search({ dir: 'src/nested', contextLines: 2 });
      assert.deepEqual(
        withContext.files[0]!.lines.map((l) => `${l.line}${l.match ? ':' : '-'}${l.text}`),
        ['1-line1', '2-line2', '3:alpha here', '4-line4', '5-line5', '6-line6', '7-line7', '8:alpha again'],
      );
      const insensitive = await search({ caseSensitive: false, include: ['*.ts'] });
      assert.deepEqual(
        insensitive.files.map((f) => f.path),
        ['src/a.ts', 'src/b.ts', 'src/nested/c.ts'],
      );
      const excluded = await search({ include: ['src/**'], exclude: ['nested'] });
      assert.deepEqual(
        excluded.files.map((f) => f.path),
        ['src/a.ts'],
      );
      const regex = await search({ regex: true, pattern: '^al.ha$' });
      assert.deepEqual(
        regex.files.map((f) => f.path),
        ['crlf.txt'],
      );
    });

    it('finds the only match after 6,000 other files', async function () {
      this.timeout(60_000);
      const many: Record<string, string> = {};
      for (let i = 0; i < 6000; i++) many[`d${String(Math.floor(i / 100)).padStart(2, '0')}/f${i}.txt`] = `nothing here ${i}\n`;
      many['zz/last.txt'] = 'the needle\n';
      writeFiles(root, many);
      const result = await search({ pattern: 'needle' });
      assert.deepEqual(
        result.files.map((f) => f.path),
        ['zz/last.txt'],
      );
      assert.equal(result.stopped, undefined);
    });

    it('reports a cap exactly where it stopped; reaching it with nothing after is complete', async () => {
      writeFiles(root, { 'm/f1.txt': 'hit\nhit\nhit\n', 'm/f2.txt': 'hit\nhit\nhit\n', 'm/f3.txt': 'hit\n' });
      const inside = await search({ dir: 'm', pattern: 'hit', maxMatches: 4 });
      assert.deepEqual(inside.stopped, { reason: 'max_matches', lastPath: 'm/f2.txt', lastLine: 1 });
      assert.equal(inside.matches, 4);
      const after = await search({ dir: 'm', pattern: 'hit', maxMatches: 3 });
      assert.deepEqual(after.stopped, { reason: 'max_matches', lastPath: 'm/f1.txt' });
      const exact = await search({ dir: 'm', pattern: 'hit', maxMatches: 7 });
      assert.equal(exact.stopped, undefined);
      assert.equal(exact.matches, 7);
      const tool = await runTool(root, 'search_text', { pattern: 'hit', path: 'm', max_results: 4 }, rgPath);
      assert.match(tool.content, /^m\/f1\.txt\n {2}1: hit\n/);
      assert.match(
        tool.content,
        /INCOMPLETE: stopped at max_results=4 inside m\/f2\.txt at line 1; files after that point \(in path order\) were not searched\. Narrow with path, include or exclude/,
      );
      const complete = await runTool(root, 'search_text', { pattern: 'hit', path: 'm' }, rgPath);
      assert.match(complete.content, /\[7 matching lines in 3 files; complete: every text file under "m" was searched/);
    });

    it(".git/info/exclude of the folder is honoured by search and find; a nested repository's is not read", async () => {
      writeFiles(root, {
        '.git/info/exclude': 'private-notes.txt\n',
        'private-notes.txt': 'alpha private\n',
        'vendor/lib/.git/info/exclude': 'inner.txt\n',
        'vendor/lib/inner.txt': 'alpha inner\n',
      });
      const result = await search({ include: ['*.txt'] });
      assert.ok(!result.files.some((f) => f.path === 'private-notes.txt'));
      assert.ok(result.files.some((f) => f.path === 'vendor/lib/inner.txt'));
      const found = await new NodeWorkspace({ roots: [root], ripgrep: rgPath }).findFiles({
        dir: '.',
        glob: '**/*.txt',
        exclude: [],
        max: 100,
      });
      assert.ok(!found.paths.includes('private-notes.txt'));
      assert.ok(found.paths.includes('vendor/lib/inner.txt'));
    });

    it('hits spread over many folders come in path order, the first ones up to the cap; a file with more lines than the cap stops inside it', async () => {
      // Folder names that a plain string sort puts elsewhere ("a.b/" and "a-b.txt" before "a/").
      const spread: Record<string, string> = {
        's/d9/many.txt': 'hit\n'.repeat(20),
        's/a/x.txt': 'hit\n',
        's/a.b/y.txt': 'hit\n',
        's/a-b.txt': 'hit\n',
      };
      for (let i = 0; i < 40; i++) spread[`s/d${i % 8}/f${String(i).padStart(2, '0')}.txt`] = 'hit\n';
      const inOrder = Object.keys(spread).sort(comparePaths);
      const singles = inOrder.length - 1;
      writeFiles(root, spread);
      const all = await search({ dir: 's', pattern: 'hit', maxMatches: singles + 20 });
      assert.deepEqual(
        all.files.map((f) => f.path),
        inOrder,
      );
      assert.equal(all.matches, singles + 20);
      assert.equal(all.stopped, undefined);
      const first = await search({ dir: 's', pattern: 'hit', maxMatches: 25 });
      assert.deepEqual(
        first.files.map((f) => f.path),
        inOrder.slice(0, 25),
      );
      assert.deepEqual(first.stopped, { reason: 'max_matches', lastPath: inOrder[24] });
      const inside = await search({ dir: 's', pattern: 'hit', maxMatches: singles + 5 });
      assert.deepEqual(inside.stopped, { reason: 'max_matches', lastPath: 's/d9/many.txt', lastLine: 5 });
      assert.deepEqual(
        inside.files.at(-1)!.lines.map((l) => l.line),
        [1, 2, 3, 4, 5],
      );
      const one = await search({ dir: 's/d9', pattern: 'hit', maxMatches: 3 });
      assert.deepEqual(one.stopped, { reason: 'max_matches', lastPath: 's/d9/many.txt', lastLine: 3 });
      assert.equal(one.matches, 3);
    });

    it('a catastrophic pattern gets an error or an answer at once, never a hang', async () => {
      writeFiles(root, { 'evil.txt': `${'a'.repeat(5000)}!\n` });
      const started = Date.now();
      const outcome = await search({ regex: true, pattern: '(a+)+$' }).then(
        (result) => `answered with ${result.matches} matches`,
        (error: Error) => error.message,
      );
      assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
      if (rgPath === null) assert.match(outcome, /backtracks catastrophically/);
      else assert.match(outcome, /^answered with \d+ matches$/, 'a linear-time engine answers');
    });

    it('never searches, finds or lists the checkpoint store when it lies inside the folder', async () => {
      writeFiles(root, { '.store/runs/r1.jsonl': 'alpha in the journal\n' });
      const workspace = new NodeWorkspace({ roots: [root], storeDir: join(root, '.store'), ripgrep: rgPath });
      const result = await workspace.searchText(query());
      assert.ok(!result.files.some((f) => f.path.startsWith('.store')));
      const found = await workspace.findFiles({ dir: '.', glob: '*.jsonl', exclude: [], max: 10 });
      assert.equal(found.total, 0);
      const tree = await workspace.listTree({ dir: '.', depth: 1, maxEntries: 100 });
      assert.ok(!tree.entries.some((e) => e.path === '.store'));
    });

    it('a cancelled search fails instead of answering with part of the folder', async () => {
      const controller = new AbortController();
      controller.abort();
      await assert.rejects(new NodeWorkspace({ roots: [root], ripgrep: rgPath }).searchText(query(), controller.signal), /cancelled/);
    });

    it('refuses a bad pattern and a path that is not a folder with a clear error', async () => {
      await assert.rejects(
        runTool(root, 'search_text', { pattern: '(', regex: true }, rgPath),
        /invalid regular expression|regex parse error/,
      );
      await assert.rejects(runTool(root, 'search_text', { pattern: 'x', path: 'src/a.ts' }, rgPath), /is not a folder/);
      await assert.rejects(runTool(root, 'search_text', { pattern: 'x', path: '../' }, rgPath), /escapes the workspace/);
    });
  });
}

/** ripgrep and the Node fallback side by side (ripgrep runs as a child process: the system layer). */
export function enginesAgree(): void {
  describe('search_text engines agree', () => {
    it('ripgrep is at hand, so the engine cases ran with both engines', function () {
      ripgrepOrSkip(this);
    });

    let root: string;
    beforeEach(() => (root = fixture()));
    afterEach(() => rmSync(root, { recursive: true, force: true }));

    it('ripgrep and the Node fallback give the same results on the fixture', async function () {
      const rgPath = ripgrepOrSkip(this);
      const queries: Partial<TextSearchQuery>[] = [
        {},
        { contextLines: 1 },
        { caseSensitive: false },
        { include: ['*.ts', '*.txt'], exclude: ['.hidden'] },
        { regex: true, pattern: 'al[p]ha\\s+\\w+' },
        { maxMatches: 3 },
        { dir: 'src' },
      ];
      for (const over of queries) {
        const [node, rg]: TextSearchResult[] = await Promise.all([
          new NodeWorkspace({ roots: [root], ripgrep: null }).searchText(query(over)),
          new NodeWorkspace({ roots: [root], ripgrep: rgPath }).searchText(query(over)),
        ]);
        assert.equal(rg!.engine, 'ripgrep');
        assert.deepEqual({ ...rg!, engine: 'node' }, node, JSON.stringify(over));
      }
    });

    it("find_files lists the same files through ripgrep's walk as through the Node walk", async function () {
      const rgPath = ripgrepOrSkip(this);
      symlinkSync('src/a.ts', join(root, 'link.ts'));
      symlinkSync('src', join(root, 'linked-dir'));
      writeFiles(root, {
        '.store/run.jsonl': '{}\n',
        'build/deep/x.ts': 'x\n',
        'node_modules/p/.gitignore': 'gen/\n',
        'node_modules/p/gen/g.ts': 'g\n',
        'node_modules/p/i.ts': 'i\n',
      });
      const queries: Partial<FileQuery>[] = [
        {},
        { glob: '*.ts' },
        { glob: 'src/**/*.ts' },
        { glob: 'c.ts' },
        { glob: '**/nested/c.ts' },
        { glob: 'i.ts', dir: 'node_modules' },
        { glob: 'h.txt' },
        { glob: '{a,b}.ts', dir: 'src' },
        { glob: '*', exclude: ['.hidden', 'src/nested'] },
        { glob: '*.ts', dir: 'build' },
        { glob: '*', dir: 'node_modules' },
        { glob: '*', max: 3 },
      ];
      for (const over of queries) {
        const find = { dir: '.', glob: '*', exclude: [], max: 100, ...over };
        const [node, rg] = await Promise.all([
          new NodeWorkspace({ roots: [root], ripgrep: null, storeDir: join(root, '.store') }).findFiles!(find),
          new NodeWorkspace({ roots: [root], ripgrep: rgPath, storeDir: join(root, '.store') }).findFiles!(find),
        ]);
        assert.ok(node.total > 0, JSON.stringify(over));
        assert.deepEqual(rg, node, JSON.stringify(over));
      }
    });

    it('a pattern ripgrep cannot run (look-around) is run by the fallback', async function () {
      const rgPath = ripgrepOrSkip(this);
      const result = await new NodeWorkspace({ roots: [root], ripgrep: rgPath }).searchText(
        query({ regex: true, pattern: 'alpha(?= here)' }),
      );
      assert.equal(result.engine, 'node');
      assert.deepEqual(
        result.files.map((f) => f.path),
        ['src/nested/c.ts'],
      );
    });
  });
}
