import type { LedgerEntry } from '../../../core/ledger/schema';
import type { RunState } from '../../../core/store/contract';
import type { CheckpointRecord } from '../../../core/store/records';
import type { CallRow } from '../../../protocol/viewModel';

// A run's and its calls' facts in words for the view model (view-build.ts): the commands' network,
// the point before a call, which calls undo which, the problems a call's writes left.

/** The new problems the editor reported after a call's writes (ledger `diagnostics`), as its row carries them. */
export function problemsOf(entry: LedgerEntry): Pick<CallRow, 'problems' | 'moreProblems' | 'notChecked'> {
  const found = entry.diagnostics;
  const notChecked = found?.notChecked !== undefined ? { notChecked: found.notChecked } : {};
  if (found === undefined || found.items.length === 0) return notChecked;
  const problems = found.items.map((d) => {
    const origin = [d.source, d.code].filter((part) => part !== undefined && part !== '').join(' ');
    const problem = { path: d.path, line: d.line, severity: d.severity, message: d.message };
    return { ...problem, ...(origin !== '' ? { origin } : {}), ...(d.unchecked ? { unchecked: true } : {}) };
  });
  return { problems, ...(found.more > 0 ? { moreProblems: found.more } : {}), ...notChecked };
}

/** How the run's commands reached the network, in words (undefined for a run that recorded nothing of it). */
export function networkWords(commands: RunState['run']['settings']['commands']): string | undefined {
  if (commands === undefined) return undefined;
  if (commands.network === 'on') return "Commands' network: on, unrestricted (agentCheckpoints.commandNetwork: on)";
  if (commands.network === 'off') return "Commands' network: off";
  return `Commands' network: through the allowlist proxy; allowed at the start: ${commands.allowlist ?? 'not recorded'}`;
}

/** Which point "before this call" is, in words: "after step 3's model reply, before read_file". */
export function pointBeforeCall(before: CheckpointRecord, stepId: number, toolName: string): string {
  if (before.label === 'after_model') return `after step ${stepId}'s model reply, before ${toolName}`;
  return `in step ${stepId}, after the call before it, before ${toolName}`;
}

/** Which calls undo which (ledger `compensates`), both ways, in words: "create_issue (toolu_1)". */
export function compensationLinks(entries: readonly LedgerEntry[]): Map<string, Pick<CallRow, 'undoes' | 'undoneBy'>> {
  const named = new Map(entries.map((e) => [e.callId, `${e.toolName} (${e.callId})`]));
  const links = new Map<string, { undoes?: string[]; undoneBy?: string[] }>();
  const link = (callId: string) => links.get(callId) ?? links.set(callId, {}).get(callId)!;
  for (const entry of entries) {
    for (const original of entry.compensates ?? []) {
      (link(entry.callId).undoes ??= []).push(named.get(original) ?? original);
      (link(original).undoneBy ??= []).push(named.get(entry.callId)!);
    }
  }
  return links;
}
