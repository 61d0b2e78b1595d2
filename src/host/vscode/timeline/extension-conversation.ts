import { effectsToUndo, undoInstruction } from '../../../core/restore/compensation';
import { counted } from '../../../words/words';
import * as vscode from 'vscode';
import type { ApprovalChoice, ContextChip, PendingApproval } from '../../../protocol/messages';
import type { ConversationBackend, StreamChunk } from './backend';
import type { Services } from '../window/services';
import { RESTRICTED_MODE_MESSAGE } from '../window/trust';
import { NoApiKeyError } from '../run/agent-controller';
import { COMMANDS } from '../run/run-commands';
import { taskWithContext } from '../run/task-context';
import { workspacePathOf } from '../window/workspace-path';

const SET_API_KEY = 'Set API Key';

// The conversation half of the Timeline's backend: the model's text as it streams, the calls
// waiting for a decision, the composer's start and continue, links and copies.

export const OPEN_LINK = 'Open Link';

export class ExtensionConversation implements ConversationBackend, vscode.Disposable {
  private readonly reveals = new vscode.EventEmitter<void>();
  readonly onDidStream: vscode.Event<StreamChunk>;
  readonly onDidRequestReveal = this.reveals.event;
  readonly onDidChangeApprovals: vscode.Event<void>;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly s: Services) {
    this.onDidStream = s.model.onDidStream;
    this.onDidChangeApprovals = s.model.onDidChangeApprovals;
    this.disposables.push(
      this.reveals,
      s.controller.onDidStart(() => this.reveals.fire()),
    );
  }

  private relative(uri: vscode.Uri): string | undefined {
    return workspacePathOf(this.s.workspace.paths, uri);
  }

  pendingApprovals(): readonly PendingApproval[] {
    return this.s.approvals.pending();
  }

  decide(runId: string, callId: string, decision: ApprovalChoice, reason?: string): boolean {
    return this.s.approvals.decide(runId, callId, decision, reason);
  }

  async startRun(task: string, context: readonly ContextChip[]): Promise<string> {
    if (!this.s.isTrusted()) throw new Error(RESTRICTED_MODE_MESSAGE);
    const full = await taskWithContext(task, context, (chip) => this.selectionText(chip));
    const run = await this.s.controller.start(full).catch(async (error: unknown) => {
      // The first run with no key: ask for one, then start the same task.
      if (!(error instanceof NoApiKeyError)) throw error;
      const choice = await this.s.prompts.message('warning', `${error.message}.`, {}, SET_API_KEY);
      if (choice !== SET_API_KEY) throw error;
      await vscode.commands.executeCommand(COMMANDS.setApiKey);
      return this.s.controller.start(full);
    });
    void this.s.keys.refresh();
    return run.runId;
  }

  async continueRun(runId: string, instruction: string): Promise<string> {
    if (!this.s.isTrusted()) throw new Error(RESTRICTED_MODE_MESSAGE);
    const { raised } = await this.s.controller.continueRun(runId, instruction);
    return raised ? `Continuing with your instruction; ${raised}.` : 'Continuing with your instruction.';
  }

  async allowHosts(hosts: readonly string[]): Promise<string> {
    if (!this.s.isTrusted()) throw new Error(RESTRICTED_MODE_MESSAGE);
    return this.s.network.allow(hosts);
  }

  async undoEffects(runId: string, callIds: readonly string[]): Promise<string> {
    if (!this.s.isTrusted()) throw new Error(RESTRICTED_MODE_MESSAGE);
    const effects = effectsToUndo(await this.s.store.readRun(runId), callIds);
    await this.s.controller.continueRun(runId, undoInstruction(effects), callIds);
    return `Asked the agent to undo ${counted(effects.length, 'external effect')}; each call it makes waits for your approval as usual.`;
  }

  private async selectionText(chip: ContextChip): Promise<string | undefined> {
    const doc = vscode.workspace.textDocuments.find((d) => this.relative(d.uri) === chip.path);
    if (!doc || chip.startLine === undefined || chip.endLine === undefined) return undefined;
    const start = new vscode.Position(chip.startLine - 1, 0);
    const end = doc.lineAt(Math.min(doc.lineCount, chip.endLine) - 1).range.end;
    return doc.getText(new vscode.Range(start, end));
  }

  async pickContext(kind: ContextChip['kind']): Promise<ContextChip[]> {
    const editor = vscode.window.activeTextEditor;
    const path = editor ? this.relative(editor.document.uri) : undefined;
    if (kind === 'selection') {
      if (!editor || path === undefined || editor.selection.isEmpty)
        throw new Error('Select some lines in an editor of this workspace first.');
      return [{ kind, path, startLine: editor.selection.start.line + 1, endLine: editor.selection.end.line + 1 }];
    }
    if (kind === 'activeFile') {
      if (path === undefined) throw new Error('Open a file of this workspace in the editor first.');
      return [{ kind, path }];
    }
    const picked = await vscode.window.showOpenDialog({
      canSelectMany: true,
      openLabel: 'Attach',
      ...(vscode.workspace.workspaceFolders?.[0] ? { defaultUri: vscode.workspace.workspaceFolders[0].uri } : {}),
    });
    return (picked ?? []).flatMap((uri) => {
      const p = this.relative(uri);
      return p === undefined ? [] : [{ kind, path: p }];
    });
  }

  /**
   * A problem's file at its line. The path comes from the webview: the agent's path rules apply
   * (inside a workspace folder, not through a symlink out of it, not `.git/` or the store).
   */
  async openProblem(path: string, line: number): Promise<void> {
    const resolved = await this.s.workspace.paths.resolve(path);
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(resolved.lexical));
    // The file may have lost lines since the problem was reported: the last line then.
    const at = new vscode.Position(Math.min(line, doc.lineCount) - 1, 0);
    await vscode.window.showTextDocument(doc, { selection: new vscode.Range(at, at), preview: true });
  }

  /** Only http(s) and mailto links, each after the person saw the full address. */
  async openLink(url: string): Promise<boolean> {
    let uri: vscode.Uri;
    try {
      uri = vscode.Uri.parse(url, true);
    } catch {
      throw new Error(`Not a link: ${url}`);
    }
    if (!['http', 'https', 'mailto'].includes(uri.scheme))
      throw new Error(`Links of the ${uri.scheme}: kind are not opened from the Timeline.`);
    const choice = await this.s.prompts.message(
      'warning',
      `Open this link from the agent's text?`,
      { modal: true, detail: url },
      OPEN_LINK,
    );
    if (choice !== OPEN_LINK) return false;
    return vscode.env.openExternal(uri);
  }

  async copyText(text: string): Promise<void> {
    await vscode.env.clipboard.writeText(text);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
