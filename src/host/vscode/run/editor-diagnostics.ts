import * as vscode from 'vscode';
import type { Diagnostic, Diagnostics } from '../../../core/ports';
import type { WorkspacePaths } from '../../node/path-rules';
import { fileUriOf } from '../window/workspace-path';
import { SETTINGS_SECTION } from '../window/settings-read';
import { diagnosticsWaitOf, untilQuiet, type DiagnosticsWait } from './diagnostics-wait';

// The Diagnostics port over VS Code's problems (`vscode.languages`): what the language services
// report for the files a call wrote, once `onDidChangeDiagnostics` has been quiet for them.

type Rules = Pick<WorkspacePaths, 'workspacePathOf' | 'lexical' | 'roots'>;

/** Most written files a call opens for the services (a command may write hundreds); others count only if an editor holds them. */
const MAX_OPENED = 20;

/** The person's wait settings, read at each write (a workspace may set them: they only shape a wait). */
function waitNow(): DiagnosticsWait {
  const config = vscode.workspace.getConfiguration(`${SETTINGS_SECTION}.diagnostics`);
  return diagnosticsWaitOf({ quietMs: config.get('quietMs'), maxWaitMs: config.get('maxWaitMs') });
}

function codeText(code: vscode.Diagnostic['code']): string | undefined {
  if (code === undefined) return undefined;
  return String(typeof code === 'object' ? code.value : code);
}

/** The files the editor's tabs show (a diff's both sides). */
function tabUris(): Set<string> {
  const keys = new Set<string>();
  for (const tab of vscode.window.tabGroups.all.flatMap((group) => group.tabs)) {
    if (tab.input instanceof vscode.TabInputText) keys.add(tab.input.uri.toString());
    if (tab.input instanceof vscode.TabInputTextDiff) for (const uri of [tab.input.original, tab.input.modified]) keys.add(uri.toString());
  }
  return keys;
}

export class EditorDiagnostics implements Diagnostics {
  constructor(
    private readonly rules: Rules,
    private readonly wait: () => DiagnosticsWait = waitNow,
  ) {}

  /**
   * Before a write: what is reported now. A file no document holds has had no service look at it:
   * it is `unchecked` (unless it is not there yet), so its problems after the write are marked as
   * maybe older. Opening it here and waiting would cost every such write, and would not help
   * TypeScript or JSON: VS Code's services check only the files open in an editor tab.
   */
  async snapshot(paths: readonly string[]): Promise<{ reported: readonly Diagnostic[]; unchecked: readonly string[] }> {
    const open = new Set(vscode.workspace.textDocuments.map((doc) => doc.uri.toString()));
    const unchecked: string[] = [];
    for (const path of paths) {
      const uri = fileUriOf(this.rules, path);
      if (uri === undefined || open.has(uri.toString())) continue;
      const there = await vscode.workspace.fs.stat(uri).then(
        () => true,
        () => false,
      );
      if (there) unchecked.push(path);
    }
    return { reported: paths.flatMap((path) => this.reported(path)), unchecked };
  }

  /**
   * A written file no editor holds is opened (not shown) so the language services look at it: most
   * report on open documents only. Listening starts first, so their first report counts.
   */
  async settled(paths: readonly string[], signal: AbortSignal): Promise<{ reported: readonly Diagnostic[]; unchecked: readonly string[] }> {
    const uris = paths.map((path) => fileUriOf(this.rules, path)).filter((uri) => uri !== undefined);
    const watched = new Set(uris.map((uri) => uri.toString()));
    const heard = new Set<string>();
    const quiet = untilQuiet(
      (listen) =>
        vscode.languages.onDidChangeDiagnostics((event) => {
          const ours = event.uris.map((uri) => uri.toString()).filter((key) => watched.has(key));
          for (const key of ours) heard.add(key);
          if (ours.length > 0) listen();
        }),
      this.wait(),
      signal,
    );
    const open = new Set(vscode.workspace.textDocuments.map((doc) => doc.uri.toString()));
    // A file that cannot be opened as text (binary, too large, deleted since) has no problems to wait for.
    await Promise.all(
      uris
        .slice(0, MAX_OPENED)
        .filter((uri) => !open.has(uri.toString()))
        .map((uri) => vscode.workspace.openTextDocument(uri).then(undefined, () => undefined)),
    );
    await quiet;
    // VS Code's TypeScript checks only files open in a tab: one in none that no service spoke of was not looked at.
    const tabbed = tabUris();
    const unchecked = paths.filter((path) => {
      const key = fileUriOf(this.rules, path)?.toString();
      return key !== undefined && !tabbed.has(key) && !heard.has(key) && this.reported(path).length === 0;
    });
    return { reported: paths.flatMap((path) => this.reported(path)), unchecked };
  }

  private reported(path: string): Diagnostic[] {
    const uri = fileUriOf(this.rules, path);
    if (uri === undefined) return [];
    const found: Diagnostic[] = [];
    for (const d of vscode.languages.getDiagnostics(uri)) {
      if (d.severity !== vscode.DiagnosticSeverity.Error && d.severity !== vscode.DiagnosticSeverity.Warning) continue;
      const code = codeText(d.code);
      found.push({
        path,
        line: d.range.start.line + 1,
        severity: d.severity === vscode.DiagnosticSeverity.Error ? 'error' : 'warning',
        message: d.message,
        ...(code !== undefined ? { code } : {}),
        ...(d.source !== undefined ? { source: d.source } : {}),
      });
    }
    return found;
  }
}
