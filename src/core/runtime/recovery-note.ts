import type { LedgerEntry } from '../ledger/schema';
import type { LiveState, Patch } from '../patches/schema';
import { EARLIER_EFFECTS, type FileChange } from '../store/resume-state';
import { INSTRUCTION_CHANGES_LEAD, instructionChangeNote } from './project-instructions';
import type { CallReport } from './reconcile';
import { UNDO_FACTS_MARKER } from '../restore/compensation';
import { PLAN_NOTE_MARKER } from '../store/plan';

export const RECOVERY_NOTE_MARKER = '[recovery note]';

/** The completed calls with external effects the note tells the model not to repeat: the latest EARLIER_EFFECTS up to `lastCompletedStep`. */
export function earlierEffects(ledger: readonly LedgerEntry[], lastCompletedStep: number): LedgerEntry[] {
  const done = ledger.filter((e) => e.idempotency === 'non_idempotent' && e.status === 'succeeded' && e.stepId <= lastCompletedStep);
  return done.slice(-EARLIER_EFFECTS);
}

export interface PatchLiveState {
  readonly patch: Patch;
  readonly live: LiveState;
}

export interface RecoveryFacts {
  /** The latest checkpoint the run resumed from. */
  readonly checkpointId: string;
  readonly checkpointLabel: string;
  /** The step whose model call and tool results were all recorded. */
  readonly lastCompletedStep: number;
  /** Reconciliation of the interrupted step (empty when nothing was in flight). */
  readonly reports: readonly CallReport[];
  /** Earlier non-idempotent calls of the run that finished: never to be repeated. */
  readonly earlierEffects: readonly LedgerEntry[];
  /** The latest patch per file, classified against live content now. */
  readonly files: readonly PatchLiveState[];
  /** Project instruction files changed since the run started, one line each (project-instructions.ts). */
  readonly instructionChanges?: readonly string[];
  /** Files restored, rolled back or undone since the model's last request. */
  readonly fileChanges?: readonly FileChange[];
  /** How the tools of this version differ from the run's recorded list (toolChangeLines). */
  readonly toolChanges?: readonly string[];
}

/**
 * The tools this version of the product (or its MCP servers) has that differ from those the run
 * started with. The run keeps sending its recorded list (a thinking block is bound to it), so the
 * change is said here, at the end of the conversation, never by changing `tools`.
 */
export function toolChangeLines(
  recorded: readonly { readonly name: string }[] | undefined,
  current: readonly { readonly name: string }[],
): string[] {
  if (recorded === undefined) return [];
  const now = new Set(current.map((t) => t.name));
  const before = new Set(recorded.map((t) => t.name));
  const gone = [...before].filter((name) => !now.has(name));
  const added = [...now].filter((name) => !before.has(name));
  if (gone.length === 0 && added.length === 0) return [];
  return [
    'The tools available changed since this run started (the run keeps the tool list it started with):',
    ...(gone.length > 0 ? [`- no longer available (a call to one returns an error): ${gone.join(', ')}`] : []),
    ...(added.length > 0 ? [`- new, not offered in this run: ${added.join(', ')}`] : []),
  ];
}

export const FILE_CHANGES_MARKER = '[files changed]';

/** True for a text block the runtime adds to a user message (these notes), not the person's words. */
export function isRuntimeNote(text: string): boolean {
  return [RECOVERY_NOTE_MARKER, FILE_CHANGES_MARKER, INSTRUCTION_CHANGES_LEAD, UNDO_FACTS_MARKER, PLAN_NOTE_MARKER].some((lead) =>
    text.startsWith(lead),
  );
}

/** The lines naming each file that changed under the model since it last saw it, and how. */
export function fileChangeLines(changes: readonly FileChange[]): string[] {
  if (changes.length === 0) return [];
  return [
    'Files that changed since you last saw them (what you read or wrote before may no longer hold; read them again before relying on it):',
    ...changes.map((c) => `- ${c.path}: ${c.what}`),
  ];
}

/**
 * The note that goes with a new instruction when files changed since the model's last request:
 * restored, rolled back or undone (`changes`), or changed by someone else since the agent wrote
 * them (`files`, the latest patch of each file classified against live content).
 */
export function fileChangesNote(changes: readonly FileChange[], files: readonly PatchLiveState[] = []): string | undefined {
  const lines = [...fileChangeLines(changes), ...userChangeLines(changes, files)];
  return lines.length === 0 ? undefined : [FILE_CHANGES_MARKER, ...lines].join('\n');
}

/** The files someone else changed since the agent wrote them, those `changes` name already left out. */
function userChangeLines(changes: readonly FileChange[], files: readonly PatchLiveState[]): string[] {
  const told = new Set(changes.map((c) => c.path));
  const changed = changedByUser(files.filter((f) => !told.has(f.patch.path)));
  if (changed.length === 0) return [];
  return [
    'Files changed by someone else since the agent wrote them (read them again before editing):',
    ...changed.map((line) => `- ${line}`),
  ];
}

const MUST_NOT_REPEAT = new Set(['reused', 'applied_before', 'marked_done']);

function changedByUser(files: readonly PatchLiveState[]): string[] {
  return files
    .filter(({ live }) => live !== 'applied')
    .map(({ patch, live }) => {
      if (live === 'missing') return `${patch.path}: deleted since the agent wrote it`;
      if (live === 'not_applied') return `${patch.path}: back to its content before the agent's change`;
      return `${patch.path}: edited since the agent wrote it`;
    });
}

/** The text block that tells the model, precisely, what happened around the interruption. */
export function recoveryNote(facts: RecoveryFacts): string {
  const lines = [
    `${RECOVERY_NOTE_MARKER} This run was interrupted and has been resumed from checkpoint ${facts.checkpointId} (${facts.checkpointLabel}). The last fully completed step is step ${facts.lastCompletedStep}.`,
  ];
  const done = facts.reports.filter((r) => MUST_NOT_REPEAT.has(r.outcome) && r.status === 'succeeded');
  const unknown = facts.reports.filter((r) => r.outcome === 'unknown' || r.outcome === 'settled');
  const rerun = facts.reports.filter((r) => r.outcome === 'ran_again' || r.outcome === 'ran');
  const conflicts = facts.reports.filter((r) => r.outcome === 'conflict');
  const undone = facts.reports.filter((r) => r.outcome === 'undone_since');
  if (done.length > 0) {
    lines.push('Calls of the interrupted step that already succeeded (their results above are the recorded ones); do not repeat them:');
    for (const r of done)
      lines.push(
        `- ${r.toolName} ${r.callId}: ${r.summary}${r.outcome === 'applied_before' ? ' (found applied)' : r.outcome === 'marked_done' ? ' (confirmed by the user)' : ''}`,
      );
  }
  if (unknown.length > 0) {
    lines.push('Calls whose outcome is unknown (they may or may not have taken effect; check before acting):');
    for (const r of unknown) lines.push(`- ${r.toolName} ${r.callId}: ${r.summary}`);
  }
  if (rerun.length > 0) {
    lines.push('Calls that had not run, or were safe to run again, and were run after the resume:');
    for (const r of rerun) lines.push(`- ${r.toolName} ${r.callId}: ${r.summary}`);
  }
  if (conflicts.length > 0) {
    lines.push('Calls not applied because the file changed in the meantime:');
    for (const r of conflicts) lines.push(`- ${r.toolName} ${r.callId}: ${r.summary}`);
  }
  if (undone.length > 0) {
    lines.push(
      'Calls that succeeded but whose change was undone since (the file is back to its content before them; do them again if still wanted):',
    );
    for (const r of undone) lines.push(`- ${r.toolName} ${r.callId}: ${r.summary}`);
  }
  const earlier = facts.earlierEffects;
  if (earlier.length > 0) {
    lines.push('Earlier calls with external effects that completed; do not repeat them:');
    for (const e of earlier) lines.push(`- ${e.toolName} ${e.callId} (step ${e.stepId})`);
  }
  lines.push(...fileChangeLines(facts.fileChanges ?? []));
  const changed = userChangeLines(facts.fileChanges ?? [], facts.files);
  lines.push(...changed);
  if (changed.length === 0 && facts.files.length > 0) lines.push('Files the agent wrote are unchanged since.');
  const instructions = instructionChangeNote(facts.instructionChanges ?? []);
  if (instructions !== undefined) lines.push(instructions);
  lines.push(...(facts.toolChanges ?? []));
  if (facts.reports.length === 0) lines.push('No tool call was in flight.');
  lines.push('Continue the task from here.');
  return lines.join('\n');
}
