import { strict as assert } from 'node:assert';
import { answer, byTurn, harness, SETTINGS } from '../runtime/harness';

describe('a run whose commands have no sandbox says so at its start', () => {
  it('sandbox off or none on this machine: a warning note (the Timeline header, the CLI, the log); sandboxed: none', async () => {
    for (const sandbox of ['off', 'unavailable'] as const) {
      const h = await harness({ script: byTurn([answer('done')]) });
      const done = await h.runtime().start({ task: 't', settings: { ...SETTINGS, commands: { sandbox, network: 'on' } } });
      const notes = (await h.records(done.runId)).filter((r) => r.type === 'note' && r.kind === 'warning');
      assert.equal(notes.length, 1, sandbox);
      assert.match(
        JSON.stringify(notes[0]),
        /commands in this run run WITHOUT a sandbox \((the sandbox is switched off|this machine has no sandbox for them)\)/,
      );
      await h.close();
    }
    const h = await harness({ script: byTurn([answer('done')]) });
    const sandboxed = await h.runtime().start({ task: 't', settings: { ...SETTINGS, commands: { sandbox: 'bwrap', network: 'on' } } });
    assert.equal((await h.records(sandboxed.runId)).filter((r) => r.type === 'note').length, 0);
    await h.close();
  });
});
