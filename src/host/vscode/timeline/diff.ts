import * as vscode from 'vscode';
import type { Patch } from '../../../core/patches/schema';
import { beforeUri } from './beforeContent';

async function exists(uri: vscode.Uri): Promise<boolean> {
  try {
    await vscode.workspace.fs.stat(uri);
    return true;
  } catch {
    return false;
  }
}

/** Opens `vscode.diff` between the patch's before content and the live file. */
export async function openPatchDiff(patch: Patch, liveUri: vscode.Uri | undefined, scheme?: string): Promise<void> {
  if (patch.binary) throw new Error(`${patch.path} is binary: no text diff`);
  if (!liveUri) throw new Error(`${patch.path} is outside the workspace folders`);
  const open = vscode.workspace.textDocuments.some((d) => d.uri.toString() === liveUri.toString());
  const right = open || (await exists(liveUri)) ? liveUri : beforeUri(patch, { scheme, empty: true });
  const name = patch.path.split('/').pop() ?? patch.path;
  const title = `${name} (before step ${patch.stepId} ↔ now)`;
  await vscode.commands.executeCommand('vscode.diff', beforeUri(patch, { scheme }), right, title, { preview: true });
}
