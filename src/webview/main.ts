// Timeline webview entry (bundled to dist/webview.js). Talks to the host only through the
// zod-checked protocol; keeps expanded rows, scroll and selection with vscode.setState.
import * as z from 'zod/mini';
import type { WebviewToHost } from '../protocol/messages';
import { Composer } from './composer';
import { ConversationPanel, focusOf } from './conversation';
import { dispatchHostMessage } from './dispatch';
import { FilterBar, isFindKey } from './filterBar';
import { keyBanner } from './keyBanner';
import { TimelineModel } from './model';
import { openRestoreDialog } from './restoreDialog';
import type { ActionId } from './rowContent';
import { Rpc } from './rpc';
import { loadState } from './state';
import type { FlatRow } from './tree';
import { runTitle } from '../words/run-title';
import { TimelineView } from './view';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

// The CSP forbids eval: tell zod up front instead of letting it probe with `new Function`.
z.config({ jitless: true });

const vscode = acquireVsCodeApi();
const post = (message: WebviewToHost) => vscode.postMessage(message);

function element<K extends keyof HTMLElementTagNameMap>(tag: K, className: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  return node;
}

const app = document.getElementById('app') ?? document.body;
const status = element('div', 'status');
status.setAttribute('role', 'status');
status.setAttribute('aria-live', 'polite');
const tree = element('div', 'tree');
tree.setAttribute('role', 'tree');
tree.setAttribute('aria-label', 'Agent runs: steps, tool calls and patches');
tree.tabIndex = 0;
const empty = element('div', 'empty');
// Until the host's first list arrives, an empty tree means "not read yet", not "no runs".
empty.textContent = 'Loading runs…';
const NO_RUNS = 'No agent runs yet. Describe a task below, or use the "Agent: Run" command.';
const detail = element('div', 'detail');
detail.setAttribute('role', 'region');
detail.setAttribute('aria-label', 'The open step: what the agent said and did');
detail.tabIndex = 0;
// The run's conversation: its pinned plan (painted by the panel) above `detail`, the part that scrolls.
const conversation = element('div', 'conversation');
conversation.append(detail);
const approvals = element('div', 'approvals');
approvals.setAttribute('role', 'region');
approvals.setAttribute('aria-label', 'Tool calls waiting for your decision');

let statusTimer: ReturnType<typeof setTimeout> | undefined;
function notice(level: 'info' | 'error', text: string): void {
  status.textContent = text;
  status.className = `status visible tone-${level === 'error' ? 'error' : 'plain'}`;
  if (statusTimer !== undefined) clearTimeout(statusTimer);
  statusTimer = setTimeout(() => (status.className = 'status'), level === 'error' ? 15_000 : 6_000);
}

const model = new TimelineModel();
const rpc = new Rpc(post);

/** The restore dialog for a save point (the tree's rows and the conversation's restore points). */
async function restoreTo(runId: string, checkpointId: string, where: string): Promise<void> {
  const outcome = await openRestoreDialog(app, rpc, { runId, checkpointId, title: `Restore to ${where}` });
  if (outcome) notice('info', outcome.message);
}

async function forkAt(runId: string, step: number): Promise<void> {
  if (step < 1) return;
  notice('info', (await rpc.request('fork', { runId, step })).message);
}

async function runAction(id: ActionId, row: FlatRow): Promise<void> {
  const runId = row.run.runId;
  const patchId = row.patch?.patchId;
  switch (id) {
    case 'restore': {
      const checkpointId = row.kind === 'call' ? row.call?.checkpointId : row.step?.checkpointId;
      if (!checkpointId) return;
      const where =
        (row.kind === 'call' ? row.call?.restorePoint : row.step?.restorePoint) ??
        (row.kind === 'call' ? `before ${row.call!.toolName} (step ${row.step!.stepId})` : `start of step ${row.step!.stepId}`);
      return restoreTo(runId, checkpointId, where);
    }
    case 'fork':
      if (row.step) await forkAt(runId, row.step.stepId);
      return;
    case 'compare': {
      if (!row.run.parent) return;
      // The parent on the left (the original), the fork on the right.
      notice('info', (await rpc.request('compare', { runId: row.run.parent.runId, otherRunId: runId })).message);
      return;
    }
    case 'openDiff':
    case 'accept':
    case 'rollback': {
      if (!patchId) return;
      const method = id === 'rollback' ? 'rollbackPatch' : id;
      notice('info', (await rpc.request(method, { runId, patchId })).message);
      return;
    }
    case 'openProblem': {
      const problem = row.problem;
      if (problem) await rpc.request('openProblem', { path: problem.path, line: problem.line });
      return;
    }
    case 'undoRestore':
      notice('info', (await rpc.request('undoLastRestore', { runId })).message);
      return;
    case 'allowHosts': {
      const hosts = row.call?.refusedHosts;
      if (hosts) notice('info', (await rpc.request('allowHosts', { hosts })).message);
      return;
    }
    case 'resume':
    case 'takeOver':
    case 'cancel':
      notice('info', (await rpc.request(id, { runId })).message);
      return;
  }
}

const panel = new ConversationPanel(conversation, detail, approvals, model, {
  openLink: (url) => void rpc.request('openLink', { url }).catch(reportError),
  copy: (text) =>
    void rpc
      .request('copyText', { text })
      .then((o) => notice('info', o.message))
      .catch(reportError),
  openDiff: (runId, patchId) => void rpc.request('openDiff', { runId, patchId }).catch(reportError),
  restore: (runId, checkpointId, where) => void restoreTo(runId, checkpointId, where).catch(reportError),
  fork: (runId, stepId) => void forkAt(runId, stepId).catch(reportError),
  showInTree: (runId, stepId) => view.showStep(runId, stepId),
  failureAction: (runId, action) =>
    void rpc
      .request('failureAction', { runId, action })
      .then((o) => notice('info', o.message))
      .catch(reportError),
  decide: (approval, decision, reason) =>
    void rpc
      .request('decide', { runId: approval.runId, callId: approval.callId, decision, ...(reason !== undefined ? { reason } : {}) })
      .catch(reportError),
});

function reportError(error: Error): void {
  notice('error', error.message);
}

const view = new TimelineView(
  tree,
  empty,
  {
    model,
    action: (id, row) => void runAction(id, row).catch((error: Error) => notice('error', error.message)),
    save: (state) => vscode.setState(state),
    now: () => Date.now(),
    selected: (row) => {
      if (row) choose(row.run.runId);
      panel.show(focusOf(row));
      composer.refresh();
    },
  },
  loadState(vscode.getState()),
);

/**
 * The run the tree, the composer and the panel follow: the window's selected run, which the host
 * keeps (across reloads, for every Timeline view of the window): the one the person picked last,
 * or the one started or forked here since (after it ends, a new instruction continues it).
 */
let target: string | undefined;
const running = () => model.list().find((r) => r.header.active && r.header.status === 'running' && !r.header.heldElsewhere)?.header;

/** The person picked a row of another run: the window selects it. */
function choose(runId: string): void {
  if (runId === target) return;
  target = runId;
  void rpc.request('select', { runId }).catch(reportError);
}

/** A selected run whose row the tree did not have yet: selected once it arrives. */
let treeFollows: string | undefined;

/** The host's selected run: the tree selects it (unless a row of it is selected), the panel and the composer show it. */
function follow(runId: string | null): void {
  target = runId ?? undefined;
  treeFollows = undefined;
  if (runId === null) return composer.refresh();
  if (!view.showRun(runId)) treeFollows = runId;
  if (panel.shownRun() !== runId) panel.show({ runId });
  composer.refresh();
}

function followLiveRun(): void {
  const live = running();
  if (!live || live.runId === target) return;
  choose(live.runId);
  follow(live.runId);
}

const composer = new Composer({
  target: () => (target !== undefined ? model.get(target)?.header : undefined) ?? view.selectedRow?.run ?? model.list()[0]?.header,
  running,
  titleOf: (run) => runTitle(run, (runId) => model.get(runId)?.header),
  start: async (task, context) => {
    notice('info', (await rpc.request('startRun', { task, context: [...context] })).message);
    panel.show(undefined);
  },
  continueRun: async (runId, instruction) => {
    notice('info', (await rpc.request('continueRun', { runId, instruction })).message);
    panel.show({ runId });
  },
  cancel: (runId) => void rpc.request('cancel', { runId }).catch(reportError),
  pick: async (kind) => (await rpc.request('pickContext', { kind })).chips,
  report: reportError,
});
const filterBar = new FilterBar({
  apply: (query) => view.setFilter(query),
  firstMatch: () => view.selectFirstMatch(),
  leave: () => tree.focus(),
});
document.addEventListener('keydown', (event) => {
  if (!isFindKey(event)) return;
  event.preventDefault();
  filterBar.focus();
});
const banner = keyBanner(() => {
  rpc.request('setApiKey', {}).then((outcome) => notice('info', outcome.message), reportError);
});
app.append(status, banner.element, filterBar.element, tree, empty, conversation, approvals, composer.element);

window.addEventListener('message', (event: MessageEvent) => {
  dispatchHostMessage(event.data, {
    model,
    rpc,
    changed: (reason) => {
      if (reason === 'snapshot') empty.textContent = NO_RUNS;
      if (reason !== 'approvals') view.refresh(reason);
      if (treeFollows !== undefined && treeFollows === target && view.showRun(treeFollows)) treeFollows = undefined;
      if (reason !== 'approvals' && reason !== 'stream') filterBar.refresh(view.count);
      if (reason !== 'stream') followLiveRun();
      if (reason === 'stream') panel.streamed();
      else panel.refresh();
      if (reason !== 'stream') composer.refresh();
    },
    notice,
    selected: follow,
    keyState: (missing) => banner.show(missing),
    logError: (text) => console.error(text),
  });
});

post({ type: 'ready' });
