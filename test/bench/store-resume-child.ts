// One resume of a big run, as a new process (an extension host or CLI that starts) makes it:
// the writer's lease taken, the journal read and the run's state materialised, as resumeRun does.
// Prints one JSON object; store.bench.ts bundles it (as the extension ships) and runs it.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { openFileStore } from '../../src/host/node/store-factory';

async function main(): Promise<void> {
  const [root, runId, steps] = process.argv.slice(2);
  if (!root || !runId || !steps) throw new Error('usage: store-resume-child <store root> <run id> <steps>');
  // The longest the event loop waited while the resume ran: how long one piece of it held the loop.
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const started = performance.now();
  const store = openFileStore(root);
  const writer = await store.openWriter(runId);
  const state = await store.readRun(runId);
  const resumeMs = performance.now() - started;
  loop.disable();
  if (state.stepId !== Number(steps) || state.ledger.length === 0) throw new Error(`resume read ${state.stepId} steps`);
  const messages = state.messages;
  const withMessagesMs = performance.now() - started;
  if (messages.length !== 2 * Number(steps) || messages[messages.length - 1]!.role !== 'user')
    throw new Error('resume read the wrong messages');
  await writer.close();
  console.log(JSON.stringify({ resume_ms: resumeMs, resume_with_messages_ms: withMessagesMs, resume_eventloop_max_ms: loop.max / 1e6 }));
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
