import { strict as assert } from 'node:assert';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NO_LANGUAGE_SERVICE } from '../../../src/core/runtime/diagnostics';
import { startFakeAnthropic } from '../../support/fake-anthropic/server';
import { sharedCli, startCli } from '../../support/cli-process';
import { tempDir } from '../../unit/runtime/harness';

// The CLI has no language service: the model hears so with the first write's result of a session,
// once, and not with a read's.

/** The tool_result texts of the last request, by tool_use id. */
function lastResults(requests: readonly { body: unknown }[]): Map<string, string> {
  const messages = (requests[requests.length - 1]!.body as { messages: { content: unknown }[] }).messages;
  const results = new Map<string, string>();
  for (const message of messages) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content as { type: string; tool_use_id?: string; content?: unknown }[]) {
      if (block.type !== 'tool_result') continue;
      const text = typeof block.content === 'string' ? block.content : JSON.stringify(block.content);
      results.set(block.tool_use_id!, text);
    }
  }
  return results;
}

describe('headless CLI: no language service', function () {
  this.timeout(30_000);
  let scratch: string;
  before(() => (scratch = tempDir('cli-diagnostics')));
  after(() => rmSync(scratch, { recursive: true, force: true }));

  it('the first write of a run says the editor is not there to check it; the next write and a read do not', async () => {
    const fake = await startFakeAnthropic([
      {
        content: [
          { type: 'tool_use', id: 'toolu_read', name: 'read_file', input: { path: 'a.ts' } },
          { type: 'tool_use', id: 'toolu_edit', name: 'edit_file', input: { path: 'a.ts', old_string: '1', new_string: '2' } },
          { type: 'tool_use', id: 'toolu_write', name: 'write_file', input: { path: 'b.ts', content: 'export {};\n' } },
        ],
        stop_reason: 'tool_use',
      },
      { content: [{ type: 'text', text: 'Done.' }], stop_reason: 'end_turn' },
    ]);
    try {
      const ws = join(scratch, 'ws');
      mkdirSync(ws, { recursive: true });
      writeFileSync(join(ws, 'a.ts'), 'export const a = 1;\n');
      const args = [
        'run',
        '--workspace',
        ws,
        '--store',
        join(scratch, 'store'),
        '--base-url',
        fake.url,
        '--task',
        'Edit',
        '--yes',
        '--trust',
      ];
      const result = await startCli(await sharedCli(), args, {
        PATH: process.env['PATH'],
        HOME: scratch,
        ANTHROPIC_API_KEY: 'sk-diag-test',
      }).done;
      assert.equal(result.code, 0, result.stderr);
      const results = lastResults(fake.requests);
      assert.equal(results.get('toolu_edit'), `edited a.ts\n\n${NO_LANGUAGE_SERVICE}`);
      assert.ok(!results.get('toolu_write')!.includes(NO_LANGUAGE_SERVICE), results.get('toolu_write'));
      assert.ok(!results.get('toolu_read')!.includes(NO_LANGUAGE_SERVICE), results.get('toolu_read'));
    } finally {
      await fake.close();
    }
  });
});
