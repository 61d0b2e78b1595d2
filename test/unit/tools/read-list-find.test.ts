import { strict as assert } from 'node:assert';
import { rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_PAGE_BYTES } from '../../../src/core/tools/read-file';
import { tempDir, writeFiles } from '../runtime/harness';
import { runTool } from './search-support';

describe('read_file pages, regular files only', () => {
  let root: string;
  const read = (input: unknown) => runTool(root, 'read_file', input, null);
  beforeEach(() => (root = tempDir('read')));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('returns a page of lines and says how to read on', async () => {
    writeFiles(root, { 'long.txt': Array.from({ length: 3000 }, (_, i) => `line ${i + 1}`).join('\n') + '\n' });
    const first = (await read({ path: 'long.txt' })).content;
    assert.ok(first.startsWith('line 1\nline 2\n'));
    assert.ok(first.endsWith('line 2000\n[lines 1-2000 of 3000; more: read_file with offset 2001]'));
    const last = (await read({ path: 'long.txt', offset: 2001 })).content;
    assert.ok(last.startsWith('line 2001\n'));
    assert.ok(last.endsWith('line 3000\n[lines 2001-3000 of 3000; end of file]'));
    await assert.rejects(read({ path: 'long.txt', offset: 3001 }), /has 3000 lines; offset 3001 is past its end/);
  });

  it('caps a page in bytes, cutting a line longer than a page', async () => {
    writeFiles(root, { 'wide.txt': Array.from({ length: 100 }, () => 'x'.repeat(1000)).join('\n'), 'one.txt': 'y'.repeat(200_000) });
    const wide = (await read({ path: 'wide.txt' })).content;
    assert.ok(wide.length <= MAX_PAGE_BYTES + 200);
    assert.match(wide, /\n\[lines 1-65 of 100; more: read_file with offset 66\]$/);
    const one = (await read({ path: 'one.txt' })).content;
    assert.match(one, /^y{65536}\n\[lines 1-1 of 1 \(line 1 is longer than a page and was cut at 65536 bytes\); end of file\]$/);
  });

  it('refuses a file over the read cap before reading it', async () => {
    const fd = join(root, 'huge.bin');
    writeFileSync(fd, '');
    truncateSync(fd, 64 * 1024 * 1024);
    await assert.rejects(read({ path: 'huge.bin' }), /is 67108864 bytes, more than read_file takes/);
  });
});

describe('find_files and list_dir', () => {
  let root: string;
  beforeEach(() => {
    root = tempDir('find');
    writeFiles(root, {
      '.gitignore': 'build/\n*.log\n',
      'README.md': '# r\n',
      'docs/guide.md': 'g\n',
      'docs/deep/more.md': 'm\n',
      'src/a.ts': 'export const a = 1;\n',
      'src/a.test.ts': 'a\n',
      'build/out.md': 'o\n',
      'run.log': 'l\n',
    });
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('find_files: glob, ignore files honoured, sorted by path, capped with an "N more" line', async () => {
    assert.equal(
      (await runTool(root, 'find_files', { pattern: '*.md' }, null)).content,
      'README.md\ndocs/deep/more.md\ndocs/guide.md\n[3 files; complete]',
    );
    assert.equal((await runTool(root, 'find_files', { pattern: 'src/**/*.test.ts' }, null)).content, 'src/a.test.ts\n[1 file; complete]');
    assert.equal(
      (await runTool(root, 'find_files', { pattern: '*.md', path: 'docs' }, null)).content,
      'docs/deep/more.md\ndocs/guide.md\n[2 files; complete]',
    );
    const capped = (await runTool(root, 'find_files', { pattern: '*', max_results: 2 }, null)).content;
    assert.equal(
      capped,
      '.gitignore\nREADME.md\n[4 more files match (6 in all) and are not listed: narrow pattern or path, or raise max_results (at most 2000)]',
    );
    assert.match((await runTool(root, 'find_files', { pattern: '*.rs' }, null)).content, /^no files match \*\.rs/);
  });

  it('list_dir: a depth, sizes, ignored folders marked and not expanded', async () => {
    const listed = (await runTool(root, 'list_dir', { depth: 2 }, null)).content;
    assert.equal(
      listed,
      [
        '.gitignore  13 B',
        'README.md  4 B',
        'build/  (ignored, not expanded)',
        'docs/',
        '  deep/',
        '  guide.md  2 B',
        'run.log  2 B  (ignored)',
        'src/',
        '  a.test.ts  2 B',
        '  a.ts  20 B',
      ].join('\n'),
    );
    assert.equal((await runTool(root, 'list_dir', { path: 'docs', depth: 3 }, null)).content, 'deep/\n  more.md  2 B\nguide.md  2 B');
    await assert.rejects(runTool(root, 'list_dir', { path: 'README.md' }, null), /is not a folder/);
  });

  it('list_dir caps a large folder with the count of what it did not list', async () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < 520; i++) many[`many/f${String(i).padStart(3, '0')}.txt`] = '';
    writeFiles(root, many);
    const listed = (await runTool(root, 'list_dir', { path: 'many' }, null)).content.split('\n');
    assert.equal(listed.length, 501);
    assert.equal(listed[500], '[20 more entries not listed (cap 500): list a subfolder, or lower depth]');
  });
});
