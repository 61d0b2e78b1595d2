import { strict as assert } from 'node:assert';
import * as nodePath from 'node:path';
import { folderKey, workspaceStoreDir } from '../../../src/host/node/state-dir';
import { openFileStore } from '../../../src/host/node/store-factory';
import { TimelineSync } from '../../../src/host/vscode/timeline/sync';
import {
  extensionApi,
  finalAnswer,
  readOrEmpty,
  startHeadlessRun,
  toolUse,
  useFakeModel,
  waitFor,
  workspaceCounter,
  workspaceRoot,
  writtenInView,
} from './helpers';

export function takeOverSuite(): void {
  describe('a run held by another window', () => {
    it("the store is the workspace's one store under global storage, by the rule the CLI uses", async () => {
      const api = await extensionApi();
      const base = nodePath.dirname(nodePath.dirname(api.storagePath));
      assert.match(api.storagePath.replace(/\\/g, '/'), /\/globalStorage\/agent-checkpoints\.agent-checkpoints\/workspaces\/[0-9a-f]{64}$/);
      assert.equal(api.storagePath, workspaceStoreDir(base, [folderKey({ scheme: 'file', fsPath: workspaceRoot(), uri: '' })]));
    });

    it('is listed with its holder, taken over after confirmation, completes here, and its old writer stops with a clear message', async function () {
      this.timeout(90_000);
      const api = await extensionApi();
      const counter = await workspaceCounter('takeover');
      const fake = await useFakeModel(api, [
        toolUse('toolu_other_window', 'run_command', { command: `echo ran >> "${counter}"; sleep 6` }),
        finalAnswer('Finished in this window.'),
      ]);
      const other = startHeadlessRun(api, fake, 'Held by another window');
      try {
        // The command writes in its copy-on-write view; the workspace gets it once it ended.
        await waitFor(
          `the other writer to start its command\n${other.output()}`,
          async () => (await writtenInView(api.storagePath, counter)) === 'ran\n',
        );
        // The window's listing learns of another holder from the store's notice (or its refresh after 2 s).
        const summary = await waitFor('the listing to show the other holder', async () => {
          const found = (await api.timelineBackend.listRuns()).find((r) => r.task === 'Held by another window');
          return found?.leased && found.heldHere === false && found.holder ? found : undefined;
        });
        assert.ok(summary.holder, JSON.stringify(summary));
        const [snapshot] = await new TimelineSync(api.timelineBackend).snapshot();
        const header = snapshot.runs.find((r) => r.header.runId === summary.runId)?.header;
        assert.equal(header?.heldElsewhere?.pid, summary.holder.pid, 'the timeline shows who holds it');

        assert.equal(await api.timelineBackend.takeOver(summary.runId), false, 'dismissing the question takes nothing over');
        assert.ok(fake.prompts.saw(/Take over this run from another window \(pid \d+ on /));
        assert.equal(api.runningRunId(), undefined);

        fake.prompts.answer(/Take over this run from another window/, 'Take Over');
        fake.prompts.answer(/may or may not have taken effect/, 'Mark as done');
        assert.equal(await api.timelineBackend.takeOver(summary.runId), true);
        const outcome = await api.whenIdle();
        assert.equal(outcome?.status, 'completed', `${JSON.stringify(outcome)}\n${api.logText()}`);

        assert.notEqual(await other.closed, 0, other.output());
        assert.match(other.output(), /taken over .*this writer stopped writing|another process took over this run/, other.output());
        assert.equal(await readOrEmpty(counter), 'ran\n', 'the command ran once');
        const state = await openFileStore(api.storagePath).readRun(summary.runId);
        assert.equal(state.ended?.status, 'completed');
        assert.equal(state.ledger.find((e) => e.callId === 'toolu_other_window')?.status, 'succeeded');
      } finally {
        other.proc.kill('SIGKILL');
        await fake.dispose();
      }
    });
  });
}
