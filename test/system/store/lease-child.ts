// Child process for lease.test.ts: tries to become the writer of a run and reports what happened.
import { StoreError } from '../../../src/core/store/contract';
import { openFileStore } from '../../../src/host/node/store-factory';

async function main(): Promise<void> {
  const [root, runId, mode, timeout, startAt] = process.argv.slice(2) as [string, string, string, string, string];
  const store = openFileStore(root, { leaseTimeoutMs: Number(timeout) });
  // Racers start at the same instant, whatever their start-up time was.
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(startAt) - Date.now())));
  try {
    const writer = await store.openWriter(runId);
    await writer.append([{ type: 'note', kind: 'info', text: `writer ${process.pid}` }]);
    process.stdout.write(`WON ${writer.holderId}\n`);
    if (mode === 'die') process.exit(0); // leaves its lease behind, as a crash would
    // 'long': a tool call far longer than the lease timeout, with no append meanwhile.
    await new Promise((resolve) => setTimeout(resolve, mode === 'long' ? 4 * Number(timeout) : 1000));
    await writer.append([{ type: 'note', kind: 'info', text: `writer ${process.pid} again` }]);
    await writer.close();
  } catch (error) {
    process.stdout.write(error instanceof StoreError ? `${error.code.toUpperCase()}\n` : `CRASH ${String(error)}\n`);
  }
}

void main();
