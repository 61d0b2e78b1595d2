import { strict as assert } from 'node:assert';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewRecord } from '../../../src/core/store/records';
import { openFileStore } from '../../../src/host/node/store-factory';
import { bytesOf, checkpoint, ledgerEntry, message, runInput } from './fixtures';

const SECRET = 'sk-ant-test-SECRET';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}

describe('no secrets in the store', () => {
  it('schemas drop an apiKey carried by settings or any record; no byte under the root holds it', async () => {
    const root = mkdtempSync(join(tmpdir(), 'store-secret-'));
    try {
      const store = openFileStore(root);
      const run = runInput('r1');
      const writer = await store.createRun({ ...run, settings: { ...run.settings, apiKey: SECRET } as typeof run.settings });
      const withKey = (record: NewRecord) => ({ ...record, apiKey: SECRET }) as unknown as NewRecord;
      const ref = await store.putBlob(bytesOf('{"type":"tool_result","content":"ok"}'));
      await writer.append([
        withKey(checkpoint('c0', 0, 'run_start', 0)),
        withKey(message(0, 0, 'user', 'task')),
        withKey(ledgerEntry('k', 0, 'succeeded', ref)),
      ]);
      await writer.append([withKey({ type: 'status', status: 'paused' })]);
      await writer.close();
      const files = filesUnder(root);
      assert.ok(files.some((f) => f.endsWith('journal.jsonl')) && files.some((f) => f.endsWith('state.json')));
      const leaks = files.filter((f) => readFileSync(f).includes(Buffer.from(SECRET)));
      assert.deepEqual(leaks, []);
      assert.equal((await store.readRun('r1')).run.settings.model, 'claude-test');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
