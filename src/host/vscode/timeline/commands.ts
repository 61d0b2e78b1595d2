import * as vscode from 'vscode';
import type { z } from 'zod';
import { BEFORE_SCHEME, patchRefOf, type PatchRef } from './beforeContent';
import type { PatchRefArg } from '../commands/command-args';

export type PatchCommandArgs = PatchRef & { readonly hunk?: number };

/** The patch of the active diff editor opened by the Timeline (editor title actions pass no args). */
function activeDiffPatch(scheme: string): PatchRef | undefined {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  if (input instanceof vscode.TabInputTextDiff && input.original.scheme === scheme) return patchRefOf(input.original);
  return undefined;
}

/** What a patch command gets (CodeLens arguments, a webview context-menu object), or the active patch diff's. */
export function patchArgsOf(arg: z.output<typeof PatchRefArg>, scheme = BEFORE_SCHEME): PatchCommandArgs | undefined {
  if (arg !== undefined)
    return arg.hunk === undefined ? { runId: arg.runId, patchId: arg.patchId } : { runId: arg.runId, patchId: arg.patchId, hunk: arg.hunk };
  return activeDiffPatch(scheme);
}

/** Keeps `agentCheckpoints.patchDiffActive` true while a Timeline patch diff is the active tab. */
export function trackDiffContext(scheme = BEFORE_SCHEME): vscode.Disposable {
  const update = () =>
    void vscode.commands.executeCommand('setContext', 'agentCheckpoints.patchDiffActive', activeDiffPatch(scheme) !== undefined);
  update();
  return vscode.Disposable.from(vscode.window.tabGroups.onDidChangeTabs(update), vscode.window.tabGroups.onDidChangeTabGroups(update));
}
