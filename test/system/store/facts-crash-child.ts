// Child process for run-facts.test.ts: appends to a run and is killed (SIGKILL) right before it
// renames `dieAt` (state.json or pending.json) into place, or appends to it, after the journal append is durable.
import { NodeStoreFs } from '../../../src/host/node/node-store-fs';
import { openFileStore } from '../../../src/host/node/store-factory';
import type { DecisionRecord } from '../../../src/core/store/contract';
import type { StoreFileHandle } from '../../../src/core/store/fs-port';
import type { NewRecord } from '../../../src/core/store/records';

class DyingFs extends NodeStoreFs {
  armed = false;
  constructor(private readonly dieAt: string) {
    super();
  }
  override rename(from: string, to: string): Promise<void> {
    if (this.armed && to.endsWith(this.dieAt)) process.kill(process.pid, 'SIGKILL');
    return super.rename(from, to);
  }
  override write(handle: StoreFileHandle, bytes: Uint8Array): Promise<void> {
    if (this.armed && handle.path.endsWith(this.dieAt)) process.kill(process.pid, 'SIGKILL');
    return super.write(handle, bytes);
  }
}

async function main(): Promise<void> {
  const [root, runId, dieAt, json] = process.argv.slice(2) as [string, string, string, string];
  const fs = new DyingFs(dieAt);
  const store = openFileStore(root, { fs, timers: undefined });
  const { records, decisions } = JSON.parse(json) as { records?: NewRecord[]; decisions?: DecisionRecord[] };
  fs.armed = true;
  if (decisions) await store.appendDecisions(runId, decisions);
  else await (await store.openWriter(runId)).append(records!);
  process.stdout.write('NOT KILLED\n');
}

void main();
