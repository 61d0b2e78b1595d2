import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { WebviewToHost, parseMessage, type HostToWebview } from '../../../protocol/messages';
import type { RunView } from '../../../protocol/viewModel';
import type { ConversationBackend, StreamChunk, TimelineBackend, TimelineChange } from './backend';
import { timelineHtml } from './html';
import type { RequestHandler } from './requests';
import { ChangeQueue, type TimelineSync } from './sync';
import { errorText } from '../../../core/error-text';

export const TIMELINE_VIEW_ID = 'agentCheckpoints.timeline';

/** How long one task of the opening reads runs before it sends them. */
const LISTED_BATCH_MS = 100;

export function newNonce(): string {
  return randomBytes(24).toString('base64');
}

/**
 * The Timeline webview view. Hidden views are disposed by VS Code (no retainContextWhenHidden):
 * the webview keeps its own state with setState and asks for a snapshot with `ready`.
 */
export class TimelineViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private ready = false;
  private readonly queue = new ChangeQueue();
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** When changes were last pushed (performance.now()). */
  private lastPush = -Infinity;
  private work: Promise<void> = Promise.resolve();
  private viewSubscriptions: vscode.Disposable[] = [];
  private readonly resolvedEmitter = new vscode.EventEmitter<vscode.WebviewView>();
  readonly onDidResolve = this.resolvedEmitter.event;
  private readonly visibilityEmitter = new vscode.EventEmitter<void>();
  /** The view came into view or went out of it. */
  readonly onDidChangeVisibility = this.visibilityEmitter.event;
  /** Messages refused because they did not parse (for tests and diagnostics). */
  rejectedMessages = 0;
  /** How many times the view asked for its runs (`ready`): the runs still to send of an older ask are not sent. */
  private openings = 0;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly sync: TimelineSync,
    private readonly requests: RequestHandler,
    private readonly log: (message: string) => void,
    private readonly debounceMs = 150,
    private readonly conversation?: Pick<ConversationBackend, 'pendingApprovals'>,
    private readonly selection?: Pick<TimelineBackend, 'selectedRun' | 'keyMissing'>,
  ) {}

  /** The window's selected run changed: the tree, the conversation and the composer follow it. */
  selected(runId: string | undefined): void {
    if (!this.view || !this.ready) return;
    void this.serialise(() => this.post({ type: 'selected', runId: runId ?? null }));
  }

  /** The key or the provider setting changed: the view shows or hides its no-key banner. */
  keyChanged(): void {
    if (!this.view || !this.ready) return;
    void this.serialise(() => this.postKeyState());
  }

  private async postKeyState(): Promise<void> {
    const missing = await this.selection?.keyMissing?.();
    if (missing !== undefined) await this.post({ type: 'keyState', missing });
  }

  /** The view is on screen now. */
  visible(): boolean {
    return this.view?.visible ?? false;
  }

  /** Brings the view into view without taking the focus from the editor. */
  reveal(): void {
    if (this.view) this.view.show(true);
    else void vscode.commands.executeCommand(`${TIMELINE_VIEW_ID}.focus`).then(undefined, () => undefined);
  }

  /** The model's text as it arrives: posted at once, not debounced (the webview paints per frame). */
  stream(chunk: StreamChunk): void {
    if (!this.view || !this.ready) return;
    void this.post({ type: 'stream', ...chunk });
  }

  /** The calls waiting for a decision changed: the webview gets the whole (short) list. */
  approvalsChanged(): void {
    this.paintBadge();
    if (!this.view || !this.ready || !this.conversation) return;
    void this.post({ type: 'approvals', pending: [...this.conversation.pendingApprovals()] });
  }

  /** The view's icon counts the calls waiting for a decision, so none waits unseen. */
  private paintBadge(): void {
    if (!this.view || !this.conversation) return;
    const n = this.conversation.pendingApprovals().length;
    this.view.badge = n > 0 ? { value: n, tooltip: `${n} tool call${n === 1 ? '' : 's'} waiting for your approval` } : undefined;
  }

  /** The badge shown on the view's icon now (tests). */
  badge(): vscode.ViewBadge | undefined {
    return this.view?.badge;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.disposeView();
    this.view = view;
    this.ready = false;
    this.paintBadge();
    const webview = view.webview;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    webview.options = { enableScripts: true, localResourceRoots: [dist, media] };
    webview.html = timelineHtml({
      nonce: newNonce(),
      cspSource: webview.cspSource,
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js')).toString(),
      styleUris: [vscode.Uri.joinPath(dist, 'codicons', 'codicon.css'), vscode.Uri.joinPath(media, 'timeline.css')].map((u) =>
        webview.asWebviewUri(u).toString(),
      ),
    });
    this.viewSubscriptions = [
      webview.onDidReceiveMessage((data: unknown) => this.serialise(() => this.receive(data))),
      view.onDidDispose(() => {
        if (this.view === view) this.disposeView();
      }),
      view.onDidChangeVisibility(() => this.visibilityEmitter.fire()),
    ];
    this.resolvedEmitter.fire(view);
  }

  /**
   * Gathers a change. The first one after a quiet spell goes out at once (the next turn of the
   * event loop, so the rest of its commit group comes along); those after it within `debounceMs`
   * of a push wait for the next push: at most one push per `debounceMs`, the first without delay.
   */
  change(change: TimelineChange): void {
    // Folded at once (cheap), built into messages when pushed.
    if (change.kind === 'records') this.sync.recordsChanged(change.runId, change.records);
    this.queue.add(change);
    if (this.timer !== undefined) return;
    const wait = Math.max(0, this.lastPush + this.debounceMs - performance.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.lastPush = performance.now();
      void this.serialise(() => this.flush());
    }, wait);
  }

  private serialise(task: () => Promise<void>): Promise<void> {
    this.work = this.work.then(task).catch((error: unknown) => this.log(`timeline: ${errorText(error)}`));
    return this.work;
  }

  private async receive(data: unknown): Promise<void> {
    const parsed = parseMessage(WebviewToHost, data);
    if (!parsed.ok) {
      this.rejectedMessages++;
      this.log(`timeline: rejected webview message: ${parsed.error}`);
      return;
    }
    const message = parsed.value;
    if (message.type === 'ready') {
      this.ready = true;
      this.queue.drain();
      const selected = this.selection?.selectedRun();
      const opening = await this.sync.opening(selected).catch((error: Error) => ({
        messages: [
          { type: 'snapshot', runs: [] },
          { type: 'notice', level: 'error', text: `Could not read the runs: ${error.message}` },
        ] satisfies HostToWebview[],
        rest: [],
      }));
      for (const part of opening.messages) await this.post(part);
      if (this.selection) await this.post({ type: 'selected', runId: selected ?? null });
      await this.postKeyState();
      this.approvalsChanged();
      this.sendRest(opening.rest, ++this.openings);
      return;
    }
    await this.post(await this.requests.handle(message));
  }

  /**
   * The opening's other runs, whole, in serialised tasks of about LISTED_BATCH_MS of reading each
   * (one message, one repaint of the view each): changes that come meanwhile go out between them.
   * A newer opening stops it.
   */
  private sendRest(rest: readonly string[], opening: number): void {
    if (rest.length === 0) return;
    void this.serialise(async () => {
      if (opening !== this.openings || !this.view) return;
      const started = performance.now();
      const runs: RunView[] = [];
      let next = 0;
      while (next < rest.length && performance.now() - started < LISTED_BATCH_MS) {
        const runId = rest[next++]!;
        const view = await this.sync
          .listed(runId)
          .catch((error: unknown) => this.log(`timeline: run ${runId} not shown: ${errorText(error)}`));
        if (view) runs.push(view);
      }
      if (runs.length > 0) await this.post({ type: 'runsListed', runs });
      this.sendRest(rest.slice(next), opening);
    });
  }

  private async flush(): Promise<void> {
    if (this.queue.empty) return;
    const batch = this.queue.drain();
    if (!this.view || !this.ready) {
      this.sync.invalidate(batch);
      return;
    }
    for (const message of await this.sync.apply(batch)) await this.post(message);
  }

  private async post(message: HostToWebview): Promise<void> {
    if (this.view) await this.view.webview.postMessage(message);
  }

  private disposeView(): void {
    for (const d of this.viewSubscriptions) d.dispose();
    this.viewSubscriptions = [];
    this.view = undefined;
    this.ready = false;
  }

  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.disposeView();
    this.resolvedEmitter.dispose();
    this.visibilityEmitter.dispose();
  }
}
