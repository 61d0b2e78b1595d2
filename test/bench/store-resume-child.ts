// One resume of a run, as a new process (an extension host or CLI that starts) makes it: the
// writer's lease taken, which reads the run's resume state (the newest snapshot and the journal
// after it), as resumeRun does. Prints one JSON object; store.bench.ts bundles it and runs it.
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
  const state = writer.resumeState;
  const resumeMs = performance.now() - started;
  loop.disable();
  const last = state.messages.at(-1);
  if (state.stepId !== Number(steps) || last?.role !== 'user' || state.budget.turns !== Number(steps))
    throw new Error(`resume read step ${state.stepId}, ${state.messages.length} messages`);
  await writer.close();
  const rssMb = process.resourceUsage().maxRSS / 1024;
  console.log(
    JSON.stringify({ resume_ms: resumeMs, resume_eventloop_max_ms: loop.max / 1e6, resume_rss_mb: rssMb, messages: state.messages.length }),
  );
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
