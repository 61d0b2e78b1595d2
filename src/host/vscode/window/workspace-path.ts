import * as nodePath from 'node:path';
import * as vscode from 'vscode';
import type { WorkspacePaths } from '../../node/path-rules';

// The one conversion between an editor's URI and a workspace path (the journal's form: `x.ts` in
// the first folder, `folderName/x.ts` in another), both ways, by the agent's path rules
// (path-rules.ts). Every surface of the window uses these: the Timeline, the review, the
// conversation's context chips, the live-change events.

type Rules = Pick<WorkspacePaths, 'workspacePathOf' | 'lexical' | 'roots'>;

/**
 * The workspace path of a document or file: undefined for an untitled buffer (or any scheme but
 * `file`), a file outside every folder, a folder itself, `.git/` and the store.
 */
export function workspacePathOf(rules: Rules, uri: vscode.Uri): string | undefined {
  return uri.scheme === 'file' ? rules.workspacePathOf(uri.fsPath) : undefined;
}

/** The file a workspace path names (never a folder itself or a path outside one). */
export function fileUriOf(rules: Rules, path: string): vscode.Uri | undefined {
  let absolute: string;
  try {
    absolute = rules.lexical(path);
  } catch {
    return undefined;
  }
  return rules.roots.some((root) => nodePath.resolve(root) === absolute) ? undefined : vscode.Uri.file(absolute);
}
