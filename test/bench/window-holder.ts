// bench:window's other process: holds one run (its lease) and heartbeats until killed.
import { openFileStore } from '../../src/host/node/store-factory';

const [root, runId, everyMs] = process.argv.slice(2) as [string, string, string];

void (async () => {
  const writer = await openFileStore(root, { timers: undefined }).openWriter(runId);
  process.stdout.write('holding\n');
  setInterval(() => void writer.renewLease().then(() => process.stdout.write('beat\n')), Number(everyMs));
})();
