import * as vscode from 'vscode';
import { z } from 'zod';
import { BEFORE_SCHEME, patchRefOf, type PatchRef } from './beforeContent';

/** What a patch command gets: CodeLens arguments, a webview context-menu object, or nothing. */
const PatchArgs = z.looseObject({ runId: z.string().min(1), patchId: z.string().min(1), hunk: z.number().int().nonnegative().optional() });

export type PatchCommandArgs = PatchRef & { readonly hunk?: number };

/** The patch of the active diff editor opened by the Timeline (editor title actions pass no args). */
function activeDiffPatch(scheme: string): PatchRef | undefined {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  if (input instanceof vscode.TabInputTextDiff && input.original.scheme === scheme) return patchRefOf(input.original);
  return undefined;
}

export function patchArgsOf(arg: unknown, scheme = BEFORE_SCHEME): PatchCommandArgs | undefined {
  const parsed = PatchArgs.safeParse(arg);
  if (parsed.success)
    return parsed.data.hunk === undefined
      ? { runId: parsed.data.runId, patchId: parsed.data.patchId }
      : { runId: parsed.data.runId, patchId: parsed.data.patchId, hunk: parsed.data.hunk };
  return activeDiffPatch(scheme);
}

/** Keeps `agentCheckpoints.patchDiffActive` true while a Timeline patch diff is the active tab. */
export function trackDiffContext(scheme = BEFORE_SCHEME): vscode.Disposable {
  const update = () =>
    void vscode.commands.executeCommand('setContext', 'agentCheckpoints.patchDiffActive', activeDiffPatch(scheme) !== undefined);
  update();
  return vscode.Disposable.from(vscode.window.tabGroups.onDidChangeTabs(update), vscode.window.tabGroups.onDidChangeTabGroups(update));
}
