import { strict as assert } from 'node:assert';
import type { TimelineBackend } from '../../../src/host/vscode/timeline/backend';
import { RequestHandler } from '../../../src/host/vscode/timeline/requests';
import { HostToWebview, parseMessage } from '../../../src/protocol/messages';
import { dispatchHostMessage, type DispatchDeps } from '../../../src/webview/dispatch';
import { TimelineModel } from '../../../src/webview/model';
import { Rpc } from '../../../src/webview/rpc';
import { fakeConversation } from './fake-conversation';

// The no-key banner's messages: the host says whether a key is missing, the banner's button asks it to set one.

function handlerOver(backend: Partial<TimelineBackend>): RequestHandler {
  return new RequestHandler({
    backend: backend as TimelineBackend,
    conversation: fakeConversation(),
    state: async () => {
      throw new Error('not read');
    },
    openDiff: async () => {},
    newId: () => 'id',
  });
}

describe('protocol: the API key state', () => {
  it('the key state reaches the banner; a malformed one changes nothing', () => {
    const seen: boolean[] = [];
    const deps: DispatchDeps = {
      model: new TimelineModel(),
      rpc: new Rpc(() => {}),
      changed: () => {},
      notice: () => {},
      selected: () => {},
      keyState: (missing) => seen.push(missing),
      logError: () => {},
    };
    assert.ok(dispatchHostMessage({ type: 'keyState', missing: true }, deps));
    assert.ok(dispatchHostMessage({ type: 'keyState', missing: false }, deps));
    assert.equal(dispatchHostMessage({ type: 'keyState', missing: 'yes' }, { ...deps, logError: () => {} }), false);
    assert.deepEqual(seen, [true, false]);
    assert.equal(parseMessage(HostToWebview, { type: 'keyState' }).ok, false);
  });

  it("the banner's button runs Set API Key through the host, and says what came of it", async () => {
    let asked = 0;
    const backend: Partial<TimelineBackend> = {
      setApiKey: async () => {
        asked++;
        return 'API key set: describe a task below to start.';
      },
    };
    const reply = await handlerOver(backend).handle({ type: 'request', requestId: 'k1', method: 'setApiKey', params: {} });
    assert.deepEqual(reply, {
      type: 'reply',
      requestId: 'k1',
      ok: true,
      result: { message: 'API key set: describe a task below to start.' },
    });
    assert.equal(asked, 1);
    const without = await handlerOver({}).handle({ type: 'request', requestId: 'k2', method: 'setApiKey', params: {} });
    assert.equal(without.type === 'reply' && without.ok, false, 'a host that cannot set a key says so');
  });
});
