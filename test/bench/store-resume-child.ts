// One resume of a run, as a new process (an extension host or CLI that starts) makes it: the
// writer's lease taken, which reads the run's resume state (the newest snapshot and the journal
// after it), as resumeRun does. Prints one JSON object; store.bench.ts bundles it and runs it.
//   resume <root> <runId> <steps|killed>: resume; `killed` accepts whatever step a kill -9 left.
//   build <root> <runId> <steps>: writes the run step by step, printing each finished step, until
//     the bench kills it with SIGKILL (the run's writer never closes).
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { StoreFileHandle } from '../../src/core/store/fs-port';
import { NodeStoreFs } from '../../src/host/node/node-store-fs';
import { openFileStore } from '../../src/host/node/store-factory';
import { runInput, step, type History } from './store-steps';

async function resume(root: string, runId: string, steps: string): Promise<void> {
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
  if (steps !== 'killed' && (state.stepId !== Number(steps) || last?.role !== 'user' || state.budget.turns !== Number(steps)))
    throw new Error(`resume read step ${state.stepId}, ${state.messages.length} messages`);
  await writer.close();
  const rssMb = process.resourceUsage().maxRSS / 1024;
  console.log(
    JSON.stringify({
      resume_ms: resumeMs,
      resume_eventloop_max_ms: loop.max / 1e6,
      resume_rss_mb: rssMb,
      messages: state.messages.length,
      step: state.stepId,
    }),
  );
}

/** No fsync: a kill -9 keeps what the OS has; only the process dies. */
class UnsyncedFs extends NodeStoreFs {
  override async sync(_handle: StoreFileHandle): Promise<void> {}
  override async syncDir(_path: string): Promise<void> {}
}

async function build(root: string, runId: string, steps: number): Promise<void> {
  const store = openFileStore(root, { fs: new UnsyncedFs() });
  const writer = await store.createRun(runInput(runId));
  const history: History = { messages: 0, tokens: 0 };
  const sink = {
    commit: async (records: Parameters<typeof writer.append>[0]) => (await writer.append(records)).length,
    blob: (b: Uint8Array) => store.putBlob(b),
  };
  for (let n = 1; n <= steps; n++) {
    await step(sink, n, history);
    process.stdout.write(`${n}\n`);
  }
  await new Promise(() => undefined); // waits for its kill, the writer open
}

async function main(): Promise<void> {
  const [mode, root, runId, steps] = process.argv.slice(2);
  if (!root || !runId || !steps) throw new Error('usage: store-resume-child resume|build <store root> <run id> <steps|killed>');
  if (mode === 'build') return build(root, runId, Number(steps));
  return resume(root, runId, steps);
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
