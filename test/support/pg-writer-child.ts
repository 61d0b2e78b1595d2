// A writer of a PostgreSQL store in a process of its own, standing for a worker on another host
// (its own hostname in the lease): it takes the run, says "held", then appends one record for
// each line it reads on stdin and says "appended N" or "refused <code>: <message>".
import { createInterface } from 'node:readline';
import { PgCheckpointStore } from '../../src/host/node/pg/pg-store';
import { StoreError } from '../../src/core/store/contract';

void (async () => {
  const [url, schema, runId, timeout] = process.argv.slice(2);
  const store = new PgCheckpointStore({
    url: url!,
    schema: schema!,
    leaseTimeoutMs: Number(timeout),
    process: { pid: process.pid, hostname: 'host-b', isAlive: () => true },
  });
  const writer = await store.openWriter(runId!);
  console.log('held');
  let n = 0;
  for await (const line of createInterface({ input: process.stdin })) {
    try {
      await writer.append([{ type: 'note', kind: 'info', text: `${line} ${++n}` }]);
      console.log(`appended ${n}`);
    } catch (error) {
      console.log(`refused ${error instanceof StoreError ? error.code : 'error'}: ${(error as Error).message}`);
    }
  }
  await store.dispose();
})();
