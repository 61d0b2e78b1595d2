import { strict as assert } from 'node:assert';
import { useToolFixture } from '../../support/tool-fixture';
import { ToolError } from '../../../src/core/tools/errors';

describe('tools', () => {
  const f = useToolFixture();

  it('read_file, list_dir and search_text read the workspace', async () => {
    assert.equal((await f.run('read_file', { path: 'a.txt' })).output.content, 'alpha beta\nbeta\n');
    assert.equal((await f.run('read_file', { path: 'a.txt', offset: 2, limit: 1 })).output.content, 'beta\n[lines 2-2 of 2; end of file]');
    assert.equal((await f.run('list_dir', {})).output.content, 'a.txt  16 B\ndir/');
    assert.match(
      (await f.run('search_text', { pattern: 'beta' })).output.content,
      /^a\.txt\n {2}1: alpha beta\n {2}2: beta\n\[2 matching lines in 1 file; complete/,
    );
    assert.match((await f.run('search_text', { pattern: '^gam', regex: true })).output.content, /^dir\/b\.txt\n {2}1: gamma\n/);
    assert.equal((await f.run('find_files', { pattern: '*.txt' })).output.content, 'a.txt\ndir/b.txt\n[2 files; complete]');
    await assert.rejects(f.run('read_file', { path: 'missing.txt' }), ToolError);
  });

  it('run_command reports exit code and output, with errors flagged', async () => {
    const ok = await f.run('run_command', { command: 'echo out; echo err 1>&2' });
    assert.match(ok.output.content, /^exit code 0 after \d+ ms\n--- stdout ---\nout\n\n--- stderr ---\nerr\n$/);
    assert.ok(!ok.output.isError);
    const failed = await f.run('run_command', { command: 'exit 3' });
    assert.match(failed.output.content, /^exit code 3/);
    assert.equal(failed.output.isError, true);
  });
});
