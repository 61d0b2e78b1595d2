import { strict as assert } from 'node:assert';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hashContent } from '../../../src/core/patches/hash';
import { applyPreparedWrite } from '../../../src/core/patches/record';
import type { Patch } from '../../../src/core/patches/schema';
import { silentLog } from '../../../src/core/ports';
import { createToolRegistry } from '../../../src/core/tools/registry';
import type { PreparedWrite, ToolContext } from '../../../src/core/tools/types';
import { createNodeCommandRunner } from '../../../src/host/node/command-runner';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { MemoryCheckpointStore } from '../../support/memory-store';
import { tempDir } from '../runtime/harness';

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

describe('edits keep line endings and a BOM (hashes are of the bytes)', () => {
  let root: string;
  let ctx: ToolContext;
  const registry = createToolRegistry();

  beforeEach(() => {
    root = tempDir('eol');
    const workspace = new NodeWorkspace({ roots: [root] });
    const store = new MemoryCheckpointStore();
    ctx = {
      runId: 'r',
      callId: 'c',
      stepId: 1,
      workspace,
      commands: createNodeCommandRunner(),
      signal: new AbortController().signal,
      applyWrite: (write: PreparedWrite): Promise<Patch> =>
        applyPreparedWrite(
          { workspace, blobs: store, clock: { now: () => 1 }, log: silentLog, newId: () => 'p1' },
          { runId: 'r', stepId: 1, toolCallId: 'c' },
          write,
        ),
    };
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  async function run(name: string, input: unknown): Promise<readonly PreparedWrite[]> {
    const tool = registry.get(name)!;
    const parsed = tool.input.parse(input);
    const prepared = await tool.prepare!(parsed, ctx);
    await tool.execute(parsed, ctx, prepared);
    return prepared;
  }

  const bytesOf = (name: string): Buffer => readFileSync(join(root, name));

  it('edit_file of a CRLF file: an old_string with \\n lines matches, the new lines are written as CRLF; LF and mixed files as asked', async () => {
    writeFileSync(join(root, 'win.txt'), 'one\r\ntwo\r\nthree\r\n');
    const prepared = await run('edit_file', { path: 'win.txt', old_string: 'one\ntwo\n', new_string: 'ONE\nTWO\nand more\n' });
    assert.equal(bytesOf('win.txt').toString('latin1'), 'ONE\r\nTWO\r\nand more\r\nthree\r\n');
    assert.equal(prepared[0]!.afterHash, hashContent(bytesOf('win.txt')));
    await run('edit_file', { path: 'win.txt', old_string: 'three\r\n', new_string: '3\r\n' });
    assert.equal(bytesOf('win.txt').toString('latin1'), 'ONE\r\nTWO\r\nand more\r\n3\r\n');
    // An LF file, or one whose line ends are mixed, gets exactly what was asked.
    writeFileSync(join(root, 'lf.txt'), 'a\nb\n');
    await run('edit_file', { path: 'lf.txt', old_string: 'a\nb', new_string: 'A\nB' });
    assert.equal(bytesOf('lf.txt').toString(), 'A\nB\n');
    writeFileSync(join(root, 'mixed.txt'), 'a\r\nb\nc\r\n');
    await run('edit_file', { path: 'mixed.txt', old_string: 'b\n', new_string: 'B\n' });
    assert.equal(bytesOf('mixed.txt').toString(), 'a\r\nB\nc\r\n');
  });

  it('edit_file of a CRLF file with a BOM keeps both', async () => {
    writeFileSync(join(root, 'bom.cs'), Buffer.concat([BOM, Buffer.from('class A\r\n{\r\n}\r\n')]));
    const prepared = await run('edit_file', { path: 'bom.cs', old_string: '{\n}', new_string: '{\n  int x;\n}' });
    assert.deepEqual(bytesOf('bom.cs'), Buffer.concat([BOM, Buffer.from('class A\r\n{\r\n  int x;\r\n}\r\n')]));
    assert.equal(prepared[0]!.afterHash, hashContent(bytesOf('bom.cs')));
  });

  it('write_file over a CRLF file keeps CRLF (unless the content has its own \\r) and the BOM', async () => {
    writeFileSync(join(root, 'w.txt'), Buffer.concat([BOM, Buffer.from('old\r\n')]));
    await run('write_file', { path: 'w.txt', content: 'new\nlines\n' });
    assert.deepEqual(bytesOf('w.txt'), Buffer.concat([BOM, Buffer.from('new\r\nlines\r\n')]));
    await run('write_file', { path: 'w.txt', content: 'as\r\ngiven\n' });
    assert.deepEqual(bytesOf('w.txt'), Buffer.concat([BOM, Buffer.from('as\r\ngiven\n')]));
    await run('write_file', { path: 'fresh.txt', content: 'x\ny\n' });
    assert.equal(bytesOf('fresh.txt').toString(), 'x\ny\n');
  });
});
