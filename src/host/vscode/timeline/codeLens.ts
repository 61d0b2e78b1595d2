import * as vscode from 'vscode';
import type { Patch } from '../../../core/patches/schema';
import { locateHunks, type LiveHunk } from './hunks';

export const COMMANDS = {
  openDiff: 'agentCheckpoints.openDiff',
  acceptPatch: 'agentCheckpoints.acceptPatch',
  rollbackPatch: 'agentCheckpoints.rollbackPatch',
  rollbackHunk: 'agentCheckpoints.rollbackHunk',
} as const;

export interface LensSource {
  /** Workspace-relative path of a live document, when the agent could have written it. */
  relativePath(uri: vscode.Uri): string | undefined;
  pendingPatchesOf(path: string): Promise<Patch[]>;
}

function hunkLens(patch: Patch, hunk: LiveHunk): vscode.CodeLens {
  const range = new vscode.Range(hunk.line, 0, hunk.line, 0);
  const ref = { runId: patch.runId, patchId: patch.patchId, hunk: hunk.index };
  const name = `hunk ${hunk.index + 1} (+${hunk.added} −${hunk.removed})`;
  if (hunk.state === 'applied') {
    return new vscode.CodeLens(range, {
      title: `Roll back ${name}`,
      command: COMMANDS.rollbackHunk,
      arguments: [ref],
      tooltip: 'Undo only this hunk; your other edits stay',
    });
  }
  if (hunk.state === 'conflict') {
    return new vscode.CodeLens(range, {
      title: `$(warning) Conflict in ${name}: edited since the agent wrote it`,
      command: COMMANDS.openDiff,
      arguments: [ref],
      tooltip: 'These lines no longer match what the agent wrote, so rolling back leaves them alone. Open the diff to compare.',
    });
  }
  return new vscode.CodeLens(range, {
    title: `${name} already rolled back`,
    command: '',
    tooltip: 'The lines are as they were before the agent wrote them',
  });
}

/** Lenses of one pending patch against the live text: the whole patch, then each hunk. */
export function patchLenses(patch: Patch, liveText: string): vscode.CodeLens[] {
  const hunks = locateHunks(patch.diff, liveText);
  const top = new vscode.Range(hunks[0]?.line ?? 0, 0, hunks[0]?.line ?? 0, 0);
  const ref = { runId: patch.runId, patchId: patch.patchId };
  const conflicts = hunks.filter((h) => h.state === 'conflict').length;
  const label = `Agent step ${patch.stepId}${conflicts > 0 ? ` · ${conflicts} hunk(s) in conflict` : ''}:`;
  const lenses = [
    new vscode.CodeLens(top, {
      title: `${label} Accept`,
      command: COMMANDS.acceptPatch,
      arguments: [ref],
      tooltip: 'Keep the agent’s change as it is',
    }),
    new vscode.CodeLens(top, {
      title: 'Roll back',
      command: COMMANDS.rollbackPatch,
      arguments: [ref],
      tooltip: 'Undo the agent’s change; hunks in conflict are left alone',
    }),
    new vscode.CodeLens(top, { title: 'Open diff', command: COMMANDS.openDiff, arguments: [ref] }),
  ];
  if (hunks.length > 1 || conflicts > 0) lenses.push(...hunks.map((h) => hunkLens(patch, h)));
  return lenses;
}

export class PatchCodeLensProvider implements vscode.CodeLensProvider {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;

  constructor(private readonly source: LensSource) {}

  refresh(): void {
    this.changed.fire();
  }

  async provideCodeLenses(document: vscode.TextDocument): Promise<vscode.CodeLens[]> {
    const path = this.source.relativePath(document.uri);
    if (path === undefined) return [];
    const patches = await this.source.pendingPatchesOf(path);
    const text = document.getText();
    return patches.flatMap((patch) => patchLenses(patch, text));
  }

  dispose(): void {
    this.changed.dispose();
  }
}
