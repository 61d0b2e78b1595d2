import { strict as assert } from 'node:assert';
import { RECOVERY_NOTE_MARKER } from '../../../src/core/runtime';
import { openFileStore } from '../../../src/host/node/store-factory';
import {
  extensionApi,
  finalAnswer,
  readOrEmpty,
  startHeadlessRun,
  toolUse,
  useFakeModel,
  waitFor,
  workspaceCounter,
  writtenInView,
} from './helpers';

export function interruptedSuite(): void {
  describe('a run interrupted outside the window', () => {
    it('is offered on activation and resumes without repeating its non-idempotent call', async () => {
      const api = await extensionApi();
      const counter = await workspaceCounter('interrupted');
      const fake = await useFakeModel(api, [
        toolUse('toolu_cli_cmd', 'run_command', { command: `echo ran >> "${counter}"; sleep 3` }),
        finalAnswer('Done after the interruption.'),
      ]);
      try {
        const cli = startHeadlessRun(api, fake, 'Append to the counter once');
        // The command writes in its copy-on-write view; the workspace gets it once it ended (or at the resume).
        await waitFor(
          `the headless run to start the command\n${cli.output()}`,
          async () => (await writtenInView(api.storagePath, counter)) === 'ran\n',
        );
        assert.equal(await readOrEmpty(counter), '', 'nothing reaches the workspace while the command runs');
        cli.proc.kill('SIGKILL');
        await cli.closed;

        const store = openFileStore(api.storagePath);
        const find = async () => (await store.listRuns()).find((r) => r.task === 'Append to the counter once');
        assert.ok(await find(), `the headless run is in the extension's store:\n${cli.output()}`);
        // The re-executed CLI (the holder) kills itself once it sees its launcher gone: a moment later.
        const killed = await waitFor(
          "the killed writer's lease to be stale (its process dead)",
          async () => {
            const run = await find();
            return run && !run.leased ? run : undefined;
          },
          5_000,
        );
        assert.equal(killed.status, 'running');

        fake.prompts.answer(/was interrupted at step/, 'Resume');
        const offers = await api.offerInterruptedRuns();
        const offer = offers.find((o) => o.runId === killed.runId);
        assert.deepEqual(offer, { runId: killed.runId, choice: 'resume', resumed: true }, JSON.stringify(fake.prompts.messages));
        const outcome = await api.whenIdle();
        assert.equal(outcome?.status, 'completed', `${JSON.stringify(outcome)}\n${api.logText()}`);
        // Its view held what it wrote before the kill: settled from it (applied as a patch of the call), not run again, nobody asked.
        assert.ok(!fake.prompts.saw(/may or may not have taken effect/), JSON.stringify(fake.prompts.messages));
        assert.equal(await readOrEmpty(counter), 'ran\n', 'the non-idempotent command ran once; what it wrote was applied once');

        const state = await store.readRun(killed.runId);
        const entry = state.ledger.find((e) => e.callId === 'toolu_cli_cmd');
        assert.equal(entry?.status, 'uncertain', 'cut mid-command: its status is unknown, its writes applied');
        assert.equal(entry?.patchIds?.length, 1, JSON.stringify(entry));
        const lastRequest = JSON.stringify(fake.server.requests.at(-1)?.body ?? {});
        assert.ok(lastRequest.includes(RECOVERY_NOTE_MARKER), 'the model got a recovery note');
        assert.equal(fake.server.requests.length, 2, 'one model call by the killed runner, one after the resume');
      } finally {
        await fake.dispose();
      }
    });
  });
}
