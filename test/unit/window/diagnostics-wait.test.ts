import { strict as assert } from 'node:assert';
import { EventEmitter } from 'node:events';
import { diagnosticsWaitOf, untilQuiet, type ChangeNotices } from '../../../src/host/vscode/run/diagnostics-wait';

// The wait for the editor's language services after a write: until their reports about the written
// files have been quiet for a spell, or the longest wait. The times are what is tested here.

function notices(): { source: ChangeNotices; emit(): void; listening(): number } {
  const events = new EventEmitter();
  return {
    source: (listen) => {
      events.on('change', listen);
      return { dispose: () => events.off('change', listen) };
    },
    emit: () => events.emit('change'),
    listening: () => events.listenerCount('change'),
  };
}

describe('diagnostics wait: until the language services are quiet', () => {
  it('ends a quiet spell after the last report, not after the first', async () => {
    const n = notices();
    const start = Date.now();
    let ended = 0;
    const done = untilQuiet(n.source, { quietMs: 80, maxWaitMs: 5000 }, new AbortController().signal).then(() => (ended = Date.now()));
    for (let i = 0; i < 5; i++) {
      await new Promise((resolve) => setTimeout(resolve, 40));
      assert.equal(ended, 0, `still waiting after report ${i}`);
      n.emit();
    }
    const lastReport = Date.now();
    await done;
    assert.ok(ended - lastReport >= 70, `waited ${ended - lastReport} ms after the last report`);
    assert.ok(ended - start < 2000);
    assert.equal(n.listening(), 0, 'the listener is gone');
  });

  it('ends at the longest wait while reports keep coming, and at once on a cancel', async () => {
    const n = notices();
    const busy = setInterval(() => n.emit(), 10);
    try {
      const start = Date.now();
      await untilQuiet(n.source, { quietMs: 50, maxWaitMs: 200 }, new AbortController().signal);
      const took = Date.now() - start;
      assert.ok(took >= 190 && took < 2000, `took ${took} ms`);
      const cancel = new AbortController();
      const waiting = untilQuiet(n.source, { quietMs: 50, maxWaitMs: 60_000 }, cancel.signal);
      const cancelledAt = Date.now();
      cancel.abort();
      await waiting;
      assert.ok(Date.now() - cancelledAt < 1000);
      assert.equal(n.listening(), 0);
    } finally {
      clearInterval(busy);
    }
  });

  it('reads the settings with defaults, and names a bad one', () => {
    assert.deepEqual(diagnosticsWaitOf({ quietMs: undefined, maxWaitMs: undefined }), { quietMs: 500, maxWaitMs: 3000 });
    assert.deepEqual(diagnosticsWaitOf({ quietMs: 1500, maxWaitMs: 20_000 }), { quietMs: 1500, maxWaitMs: 20_000 });
    assert.throws(() => diagnosticsWaitOf({ quietMs: -1, maxWaitMs: undefined }), /agentCheckpoints\.diagnostics\.quietMs is invalid/);
    assert.throws(() => diagnosticsWaitOf({ quietMs: 1, maxWaitMs: 'long' }), /agentCheckpoints\.diagnostics\.maxWaitMs is invalid/);
  });
});
