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

export class EditorDiagnostics implements Diagnostics {
  constructor(
    private readonly rules: Rules,
    private readonly wait: () => DiagnosticsWait = waitNow,
  ) {}

  /**
   * Before a write. A file no editor holds has no problems reported yet (most services look at open
   * documents only): it is opened, unshown, and given the same wait as after the write, so what it
   * already had is not counted as new. One the services said nothing of in that time is `unchecked`.
   * A file that cannot be opened (not there yet, binary) had none; plain text has no service to wait for.
   */
  async snapshot(
    paths: readonly string[],
    signal: AbortSignal,
  ): Promise<{ reported: readonly Diagnostic[]; unchecked: readonly string[] }> {
    const closed = this.unopened(paths).slice(0, MAX_OPENED);
    let heard = new Set<string>();
    if (closed.length > 0) {
      heard = await this.openAndSettle(
        closed.map((c) => c.uri),
        signal,
        (docs) => docs.some((doc) => doc?.languageId !== undefined && doc.languageId !== 'plaintext'),
      );
    }
    return {
      reported: paths.flatMap((path) => this.reported(path)),
      unchecked: closed.filter((c) => !heard.has(c.uri.toString())).map((c) => c.path),
    };
  }

  /** After the writes: a written file no editor holds is opened (not shown) so the services look at it, then the wait. */
  async settled(paths: readonly string[], signal: AbortSignal): Promise<readonly Diagnostic[]> {
    const watched = paths.map((path) => fileUriOf(this.rules, path)).filter((uri) => uri !== undefined);
    const closed = new Set(this.unopened(paths).map((c) => c.uri.toString()));
    await this.openAndSettle(
      watched.slice(0, MAX_OPENED).filter((uri) => closed.has(uri.toString())),
      signal,
      () => true,
      watched,
    );
    return paths.flatMap((path) => this.reported(path));
  }

  /** The files of `paths` no document holds, with their URIs. */
  private unopened(paths: readonly string[]): { path: string; uri: vscode.Uri }[] {
    const open = new Set(vscode.workspace.textDocuments.map((doc) => doc.uri.toString()));
    return paths.flatMap((path) => {
      const uri = fileUriOf(this.rules, path);
      return uri !== undefined && !open.has(uri.toString()) ? [{ path, uri }] : [];
    });
  }

  /**
   * Opens `toOpen` (unshown) and waits until the services are quiet about `watched` (listening from
   * before the open, so a first report counts); not at all when `worthWaiting` says the opened
   * documents have nothing to wait for. Resolves with the files the services spoke of meanwhile.
   */
  private async openAndSettle(
    toOpen: readonly vscode.Uri[],
    signal: AbortSignal,
    worthWaiting: (docs: readonly (vscode.TextDocument | undefined)[]) => boolean,
    watched: readonly vscode.Uri[] = toOpen,
  ): Promise<Set<string>> {
    const keys = new Set(watched.map((uri) => uri.toString()));
    const heard = new Set<string>();
    const skip = new AbortController();
    const quiet = untilQuiet(
      (listen) =>
        vscode.languages.onDidChangeDiagnostics((event) => {
          const ours = event.uris.map((uri) => uri.toString()).filter((key) => keys.has(key));
          for (const key of ours) heard.add(key);
          if (ours.length > 0) listen();
        }),
      this.wait(),
      AbortSignal.any([signal, skip.signal]),
    );
    // A file that cannot be opened as text (binary, too large, absent) has no problems to wait for.
    const docs = await Promise.all(toOpen.map((uri) => vscode.workspace.openTextDocument(uri).then(undefined, () => undefined)));
    if (!worthWaiting(docs)) skip.abort();
    await quiet;
    return heard;
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
