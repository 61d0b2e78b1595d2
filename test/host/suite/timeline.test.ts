import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import type { LiveState } from '../../../src/core/patches/schema';
import type { RunState } from '../../../src/core/store/contract';
import { HostToWebview, SnapshotMessage } from '../../../src/protocol/messages';
import type { TimelineBackend, TimelineChange } from '../../../src/host/vscode/timeline/backend';
import { BeforeContentProvider, beforeUri } from '../../../src/host/vscode/timeline/beforeContent';
import { TimelineViewProvider } from '../../../src/host/vscode/timeline/provider';
import { RequestHandler } from '../../../src/host/vscode/timeline/requests';
import { TimelineSync } from '../../../src/host/vscode/timeline/sync';
import { sampleRun } from '../../unit/webview/fixtures';
import { fakeConversation } from '../../unit/protocol/fake-conversation';

const BEFORE_TEXT = 'export const before = true;\n';
const TEST_SCHEME = 'agent-checkpoints-before-test';

function fakeBackend(getState: () => RunState, live: Map<string, LiveState>) {
  const changes = new vscode.EventEmitter<TimelineChange>();
  const backend: TimelineBackend = {
    onDidChange: changes.event,
    onDidSelect: () => ({ dispose() {} }),
    selectedRun: () => undefined,
    select: () => undefined,
    listRuns: async () => [
      {
        runId: getState().run.runId,
        task: getState().run.task,
        createdAt: getState().run.createdAt,
        status: getState().status,
        updatedAt: 0,
        steps: getState().stepId,
        leased: false,
      },
    ],
    readRun: async () => getState(),
    liveStates: async () => live,
    readBlob: async () => new TextEncoder().encode(BEFORE_TEXT),
    fileUri: () => undefined,
    restoreCheckpoint: async () => ({ files: [] }),
    accept: async () => {},
    rollbackPatch: async () => ({ revertedHunks: 1, conflictHunks: 0 }),
    undoLastRestore: async () => ({ files: [] }),
    fork: async () => 'fork-1',
    resume: async () => 'Run resumed.',
    takeOver: async () => false,
    cancel: async () => {},
    failureAction: async () => 'done',
  };
  return { backend, changes };
}

function fakeView() {
  const received = new vscode.EventEmitter<unknown>();
  const disposed = new vscode.EventEmitter<void>();
  const posted: unknown[] = [];
  const webview = {
    options: {} as vscode.WebviewOptions,
    html: '',
    cspSource: 'https://test.vscode-cdn.net',
    asWebviewUri: (uri: vscode.Uri) => uri,
    postMessage: async (message: unknown) => {
      posted.push(message);
      return true;
    },
    onDidReceiveMessage: received.event,
  };
  const visibility = new vscode.EventEmitter<void>();
  const view = {
    webview,
    onDidDispose: disposed.event,
    onDidChangeVisibility: visibility.event,
    visible: true,
  } as unknown as vscode.WebviewView;
  return { view, webview, posted, send: (m: unknown) => received.fire(m) };
}

async function until(predicate: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

export function timelineSuite(): void {
  describe('timeline view', () => {
    let sample = sampleRun(20);
    const { backend, changes } = fakeBackend(() => sample.state, sample.live);
    const logs: string[] = [];
    const sync = new TimelineSync(backend);
    const requests = new RequestHandler({
      backend,
      conversation: fakeConversation(),
      state: (id) => sync.state(id),
      openDiff: async () => {},
      newId: () => `p${Date.now()}`,
    });
    const extensionUri = vscode.Uri.file('/ext');
    const provider = new TimelineViewProvider(extensionUri, sync, requests, (m) => logs.push(m), 20);
    // As registerTimeline does: backend changes reach the provider.
    const forwarding = changes.event((change) => provider.change(change));
    after(() => {
      forwarding.dispose();
      provider.dispose();
    });

    it('resolves with scripts on and resources limited to dist/ and media/', () => {
      const fake = fakeView();
      let resolved = false;
      provider.onDidResolve(() => (resolved = true));
      provider.resolveWebviewView(fake.view);
      assert.ok(resolved);
      assert.equal(fake.webview.options.enableScripts, true);
      assert.deepEqual(
        fake.webview.options.localResourceRoots?.map((u) => u.path),
        ['/ext/dist', '/ext/media'],
      );
    });

    it('serves HTML with a strict CSP, a fresh nonce and no inline script', () => {
      const nonces = [fakeView(), fakeView()].map((fake) => {
        provider.resolveWebviewView(fake.view);
        const html = fake.webview.html;
        const nonce = /script-src 'nonce-([^']+)'/.exec(html)?.[1];
        assert.ok(nonce && nonce.length >= 24, 'nonce present');
        assert.ok(
          html.includes(
            `default-src 'none'; script-src 'nonce-${nonce}'; style-src https://test.vscode-cdn.net; font-src https://test.vscode-cdn.net; img-src https://test.vscode-cdn.net`,
          ),
        );
        const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
        assert.equal(scripts.length, 1);
        assert.ok(scripts[0]![1]!.includes(`nonce="${nonce}"`) && scripts[0]![1]!.includes('dist/webview.js'));
        assert.equal(scripts[0]![2]!.trim(), '');
        assert.doesNotMatch(html, /<style|\sstyle=|\son[a-z]+=/i);
        return nonce;
      });
      assert.notEqual(nonces[0], nonces[1]);
    });

    it('answers ready with a snapshot and pushes appended steps', async () => {
      const fake = fakeView();
      provider.resolveWebviewView(fake.view);
      fake.send({ type: 'ready' });
      await until(() => fake.posted.length === 1);
      const snapshot = SnapshotMessage.parse(fake.posted[0]);
      assert.equal(snapshot.runs[0]!.steps.length, 21);
      sample = sampleRun(21);
      changes.fire({ kind: 'records', runId: 'run-1' });
      await until(() => fake.posted.length === 2, 1000);
      const delta = HostToWebview.parse(fake.posted[1]);
      assert.equal(delta.type, 'runDelta');
    });

    it("answers ready with the selected run alone, then the others whole in one message, newest first; a second ready stops the first's", async () => {
      const base = sampleRun(3).state;
      const runOf = (runId: string, createdAt: number): RunState => ({ ...base, run: { ...base.run, runId, createdAt } });
      const runs = [runOf('old', 1), runOf('mid', 2), runOf('new', 3)];
      const many = fakeBackend(() => base, new Map()).backend;
      const reads: string[] = [];
      const manyBackend: TimelineBackend = {
        ...many,
        selectedRun: () => 'mid',
        listRuns: async () =>
          runs.map((r) => ({
            runId: r.run.runId,
            task: r.run.task,
            createdAt: r.run.createdAt,
            status: r.status,
            updatedAt: 0,
            steps: 3,
            leased: false,
          })),
        readRun: async (runId) => (reads.push(runId), runs.find((r) => r.run.runId === runId)!),
      };
      const opening = new TimelineViewProvider(
        extensionUri,
        new TimelineSync(manyBackend),
        requests,
        (m) => logs.push(m),
        20,
        undefined,
        manyBackend,
      );
      try {
        const fake = fakeView();
        opening.resolveWebviewView(fake.view);
        fake.send({ type: 'ready' });
        await until(() => fake.posted.some((m) => HostToWebview.parse(m).type === 'runsListed'));
        const sent = fake.posted.map((m) => HostToWebview.parse(m));
        const ids = (m: HostToWebview) => (m.type === 'snapshot' || m.type === 'runsListed' ? m.runs.map((r) => r.header.runId) : []);
        assert.deepEqual(
          sent.map((m) => `${m.type} ${ids(m).join(',')}`.trim()),
          ['snapshot mid', 'selected', 'runsListed new,old'],
        );
        assert.deepEqual(reads, ['mid', 'new', 'old'], 'each run read once');
        const again = fakeView();
        opening.resolveWebviewView(again.view);
        again.send({ type: 'ready' });
        again.send({ type: 'ready' });
        await until(() => again.posted.filter((m) => HostToWebview.parse(m).type === 'runsListed').length === 1);
        await new Promise((r) => setTimeout(r, 100));
        assert.equal(
          again.posted.filter((m) => HostToWebview.parse(m).type === 'runsListed').length,
          1,
          "the first ready's runs are not sent",
        );
      } finally {
        opening.dispose();
      }
    });

    it('pushes the first change after a quiet spell at once, and the burst after it as one delta', async () => {
      let grown = sampleRun(20);
      const own = fakeBackend(() => grown.state, grown.live);
      const ownSync = new TimelineSync(own.backend);
      const debounced = new TimelineViewProvider(extensionUri, ownSync, requests, (m) => logs.push(m), 1500);
      const forward = own.changes.event((change) => debounced.change(change));
      try {
        const fake = fakeView();
        debounced.resolveWebviewView(fake.view);
        fake.send({ type: 'ready' });
        await until(() => fake.posted.length === 1);
        grown = sampleRun(21);
        own.changes.fire({ kind: 'records', runId: 'run-1' });
        // Well before the 1.5 s debounce: the first change does not wait for it.
        await until(() => fake.posted.length === 2, 1000);
        grown = sampleRun(22);
        own.changes.fire({ kind: 'records', runId: 'run-1' });
        grown = sampleRun(23);
        own.changes.fire({ kind: 'records', runId: 'run-1' });
        await new Promise((r) => setTimeout(r, 300));
        assert.equal(fake.posted.length, 2, 'changes right after a push wait for the debounce');
        await until(() => fake.posted.length === 3, 4000);
        const delta = HostToWebview.parse(fake.posted[2]);
        assert.equal(delta.type, 'runDelta');
        assert.deepEqual(
          delta.type === 'runDelta' ? delta.steps.map((s) => s.stepId).slice(-2) : [],
          [22, 23],
          'both changes in one delta',
        );
      } finally {
        forward.dispose();
        debounced.dispose();
      }
    });

    it('rejects a malformed message: logged, no reply, nothing done', async () => {
      const fake = fakeView();
      provider.resolveWebviewView(fake.view);
      const rejectedBefore = provider.rejectedMessages;
      fake.send({ type: 'request', method: 'accept', params: { runId: 'run-1', patchId: 'patch-1' } });
      fake.send({ type: 'request', requestId: 'w1', method: 'format', params: {} });
      fake.send('<script>alert(1)</script>');
      await until(() => provider.rejectedMessages === rejectedBefore + 3);
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(fake.posted, []);
      assert.match(logs.at(-1)!, /rejected webview message: malformed message/);
    });

    it('replies to a well-formed request with its id', async () => {
      const fake = fakeView();
      provider.resolveWebviewView(fake.view);
      fake.send({ type: 'request', requestId: 'w7', method: 'rollbackPatch', params: { runId: 'run-1', patchId: 'patch-1' } });
      await until(() => fake.posted.length === 1);
      assert.deepEqual(HostToWebview.parse(fake.posted[0]), {
        type: 'reply',
        requestId: 'w7',
        ok: true,
        result: { revertedHunks: 1, conflictHunks: 0, message: 'Rolled back 1 hunk.' },
      });
    });
  });

  describe('timeline before-content documents', () => {
    it('serve a patch’s before content, read-only, for the diff', async () => {
      const sample = sampleRun(3);
      const patch = { ...sample.state.patches[0]!, beforeBlob: 'c'.repeat(64) };
      const provider = new BeforeContentProvider({
        findPatch: async (_r, id) => (id === patch.patchId ? patch : undefined),
        readBlob: async () => new TextEncoder().encode(BEFORE_TEXT),
      });
      const registration = vscode.workspace.registerTextDocumentContentProvider(TEST_SCHEME, provider);
      try {
        const document = await vscode.workspace.openTextDocument(beforeUri(patch, { scheme: TEST_SCHEME }));
        assert.equal(document.getText(), BEFORE_TEXT);
        assert.ok(document.uri.path.endsWith(patch.path));
        const empty = await vscode.workspace.openTextDocument(beforeUri(patch, { scheme: TEST_SCHEME, empty: true }));
        assert.equal(empty.getText(), '');
      } finally {
        registration.dispose();
      }
    });
  });
}
