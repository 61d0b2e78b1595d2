import { failureLine, describeFailure } from '../words/failure-words';
import { CANCELLED_REASON, isResumableStatus } from '../words/statuses';
import type { LedgerStatus, PatchView, RunHeader, RunStatus, StepRow } from '../protocol/viewModel';
import { formatAgo, formatClock, formatCost, formatDateTime, formatDuration, formatTime, formatTokens } from './format';
import type { FlatRow } from './tree';
import { counted, patchCounts } from '../words/words';
import { problemContent } from './problemContent';

// What one row shows: icon, tone, texts, tooltip and action buttons. Pure, so the icon and
// colour of each ledger status and patch state are tested without a DOM.

export type Tone = 'muted' | 'info' | 'ok' | 'error' | 'warning' | 'accent' | 'plain';

export type ActionId =
  | 'restore'
  | 'fork'
  | 'compare'
  | 'resume'
  | 'takeOver'
  | 'cancel'
  | 'undoRestore'
  | 'openDiff'
  | 'openProblem'
  | 'accept'
  | 'rollback'
  | 'allowHosts';

export interface RowAction {
  readonly id: ActionId;
  readonly icon: string;
  readonly title: string;
}

export interface RowContent {
  readonly icon: string;
  readonly spin: boolean;
  readonly tone: Tone;
  readonly label: string;
  readonly description: string;
  readonly badges: readonly string[];
  readonly title: string;
  readonly actions: readonly RowAction[];
  /** A second line under the label (what a step saved, when, how much it cost). */
  readonly meta?: string;
  /** What a screen reader says for the row, when its text and icon alone would not say it. */
  readonly spoken?: string;
}

export const LEDGER_LOOK: Record<LedgerStatus, { icon: string; tone: Tone; text: string }> = {
  planned: { icon: 'circle-large-outline', tone: 'muted', text: 'planned' },
  approved: { icon: 'thumbsup', tone: 'accent', text: 'approved' },
  started: { icon: 'loading', tone: 'info', text: 'started' },
  succeeded: { icon: 'pass-filled', tone: 'ok', text: 'succeeded' },
  failed: { icon: 'error', tone: 'error', text: 'failed' },
  uncertain: { icon: 'question', tone: 'warning', text: 'uncertain: may or may not have taken effect' },
};

/** A call cut off mid-flight: started, and no window runs the run now (its outcome is checked on resume). */
const CUT_OFF = { icon: 'debug-disconnect', tone: 'warning' as Tone, text: 'cut off: checked when the run resumes' };

/** A command that ran to its end with a non-zero exit: its answer (a failing test on purpose), not a red error. */
const EXITED = { icon: 'info', tone: 'muted' as Tone, text: 'ran; it exited non-zero' };

/** A call the person went past with a new instruction: it never ran, and that is no failure. */
const NOT_RUN = { icon: 'circle-slash', tone: 'muted' as Tone, text: 'not run: a new instruction went instead' };

/** How a call looks: a started call spins only while some window runs the run. */
export function callLook(
  status: LedgerStatus,
  runLive: boolean,
  isError = true,
  notRun = false,
): { icon: string; tone: Tone; text: string; spin: boolean } {
  if (notRun) return { ...NOT_RUN, spin: false };
  if (status === 'started' && !runLive) return { ...CUT_OFF, spin: false };
  if (status === 'failed' && !isError) return { ...EXITED, spin: false };
  return { ...LEDGER_LOOK[status], spin: status === 'started' };
}

export const PATCH_LOOK: Record<PatchView, { icon: string; tone: Tone; text: string }> = {
  applied: { icon: 'diff-modified', tone: 'info', text: 'applied' },
  not_applied: { icon: 'circle-slash', tone: 'muted', text: 'not applied' },
  conflict: { icon: 'warning', tone: 'warning', text: 'conflict: the file changed since the agent wrote it' },
  missing: { icon: 'question', tone: 'warning', text: 'file missing' },
  accepted: { icon: 'verified-filled', tone: 'ok', text: 'accepted' },
  rolled_back: { icon: 'discard', tone: 'muted', text: 'rolled back' },
  unknown: { icon: 'circle-large-outline', tone: 'muted', text: 'checking live file' },
};

export const RUN_LOOK: Record<RunStatus, { icon: string; tone: Tone }> = {
  running: { icon: 'sync', tone: 'info' },
  paused: { icon: 'debug-pause', tone: 'warning' },
  completed: { icon: 'pass', tone: 'ok' },
  failed: { icon: 'error', tone: 'error' },
  cancelled: { icon: 'circle-slash', tone: 'muted' },
  interrupted: { icon: 'debug-disconnect', tone: 'warning' },
};

const IDEMPOTENCY_TEXT = { idempotent: 'idempotent', conditional: 'conditional', non_idempotent: 'not idempotent' } as const;
const PENDING: readonly PatchView[] = ['applied', 'not_applied', 'conflict', 'missing', 'unknown'];

function runContent(row: FlatRow, now: number): RowContent {
  const h = row.run;
  const elsewhere = h.heldElsewhere;
  // "running" in the journal with no live writer anywhere: its window went away mid-run.
  const stopped = h.status === 'running' && !h.active;
  const look = RUN_LOOK[stopped ? 'interrupted' : h.status];
  const tokens = h.inputTokens + h.outputTokens;
  const review = h.reviewCount ?? 0;
  const failure = h.failure && !h.active ? describeFailure(h.failure) : undefined;
  const facts = [
    stopped ? 'interrupted' : (failure?.title ?? h.status),
    formatTime(h.createdAt, now),
    formatDuration(h.updatedAt - h.createdAt),
    formatTokens(tokens),
    formatCost(h.costUsd),
  ];
  const actions: RowAction[] = [];
  const writable = h.damaged === undefined;
  if (writable && isResumableStatus(h.status, h.active)) actions.push({ id: 'resume', icon: 'debug-continue', title: 'Resume run' });
  if (writable && elsewhere) actions.push({ id: 'takeOver', icon: 'arrow-swap', title: 'Take over this run from the other window…' });
  else if (writable && h.status === 'running' && h.active) actions.push({ id: 'cancel', icon: 'debug-stop', title: 'Cancel run' });
  if (writable && h.undoableRestores > 0) actions.push({ id: 'undoRestore', icon: 'discard', title: 'Undo last restore' });
  const names = row.names ?? { title: firstLine(h.task) };
  const parentName = names.parent !== undefined ? `"${names.parent}"` : h.parent && `run ${h.parent.runId}`;
  if (h.parent) actions.push({ id: 'compare', icon: 'git-compare', title: `Compare with ${parentName} (the run it was forked from)` });
  const reason = stopped
    ? ': no window is running it any more (resume it to go on)'
    : h.failure
      ? `: ${failureLine(h.failure)}`
      : h.statusReason
        ? `: ${h.statusReason}`
        : '';
  const damaged = writable
    ? ''
    : `\nDamaged: ${h.damaged}\nShown up to the damage, read-only: the run cannot be resumed, restored or rolled back.`;
  return {
    icon: look.icon,
    spin: h.status === 'running' && !stopped,
    tone: look.tone,
    label: names.title,
    description: forkDescription(h, names),
    meta: elsewhere ? `${heldText(elsewhere.pid, h.updatedAt, now)} · ${facts.join(' · ')}` : facts.join(' · '),
    badges: [...(elsewhere ? ['other window'] : []), ...(review > 0 ? [`${review} to review`] : []), ...(writable ? [] : ['damaged'])],
    title: `${h.parent ? `${names.title}\n` : ''}${h.task}${h.parent ? `\nFork of run ${h.parent.runId} from the start of step ${h.parent.step}${names.parent !== undefined ? `: ${parentName}` : ''}` : ''}\nStatus: ${stopped ? 'interrupted' : h.status}${reason}${review > 0 ? `\n${counted(review, 'agent change')} to review in the editor` : ''}${elsewhere ? `\nHeld by another window: pid ${elsewhere.pid} on ${elsewhere.hostname}, last heartbeat ${formatAgo(elsewhere.heartbeatAt, now)}` : ''}\nModel: ${h.model}\nStarted ${formatDateTime(h.createdAt)}\nTokens: ${h.inputTokens} in, ${h.outputTokens} out · cost ${formatCost(h.costUsd)}${damaged}`,
    actions,
  };
}

/** Where a fork stands: "↳ fork at step 2", with its parent's title once its own instruction names it. */
function forkDescription(h: RunHeader, names: NonNullable<FlatRow['names']>): string {
  if (!h.parent) return '';
  const named = h.instruction !== undefined && names.parent !== undefined;
  return `↳ fork at step ${h.parent.step}${named ? ` of ${names.parent}` : ''}`;
}

/** "last progress 2 min ago · pid 4242": short enough for a narrow side bar (the badge says "other window"). */
function heldText(pid: number, progressAt: number, now: number): string {
  return `last progress ${formatAgo(progressAt, now)} · pid ${pid}`;
}

/** A damaged run is read-only; a run this window drives is restored once it stops. */
export function canRestoreRun(run: RunHeader): boolean {
  return run.damaged === undefined && !(run.active && run.status === 'running');
}

function canRestore(row: FlatRow): boolean {
  return canRestoreRun(row.run);
}

/** "saved after tool finished" from a checkpoint label. */
function savedText(label: string): string {
  return `saved at ${label.replace(/_/g, ' ')}`;
}

/** The step's status from its calls: the worst one wins, a running one spins. */
function stepLook(step: StepRow, runLive: boolean): { icon: string; tone: Tone; spin: boolean } {
  const statuses = step.calls.map((c) => c.status);
  // Calls the person went past with a new instruction never ran: the step reads as theirs, not as done.
  if (step.calls.length > 0 && step.calls.every((c) => c.notRun)) return { ...NOT_RUN, spin: false };
  if (step.calls.some((c) => c.isError && !c.notRun)) return { icon: 'error', tone: 'error', spin: false };
  if (statuses.includes('uncertain')) return { ...LEDGER_LOOK.uncertain, spin: false };
  if (statuses.includes('started')) return callLook('started', runLive);
  if (statuses.includes('planned') || statuses.includes('approved')) return { icon: 'circle-large-outline', tone: 'muted', spin: false };
  if (step.calls.length > 0) return { icon: 'pass', tone: 'ok', spin: false };
  if (step.instruction !== undefined) return { icon: 'account', tone: 'accent', spin: false };
  return { icon: step.text !== undefined ? 'comment' : 'git-commit', tone: 'plain', spin: false };
}

/** An earlier step with no answer: a later step asked the model again, so this call failed or was stopped (never "cut off"). */
export const EARLIER_UNANSWERED = 'No answer: this model call failed or was stopped; the next step asked again';

/** Why a step has no answer: the newest step says why its run stopped; an earlier one that a later step asked again. */
export function unansweredText(latest: boolean, stopped?: string): string {
  if (!latest) return EARLIER_UNANSWERED;
  return stopped ?? 'Model call cut off: no answer was recorded';
}

/**
 * What happened in a step, in words: the model's first line, then its calls. `waiting`: the
 * step is the newest of a run running here, so a model call with no answer is still under way.
 * `latest`: the step is its run's newest (an earlier step with no answer failed or was stopped).
 */
export function stepHeadline(step: StepRow, waiting = true, stopped?: string, latest = true): string {
  if (step.instruction !== undefined) return `You: ${firstLine(step.instruction)}`;
  const said = firstLine(step.text ?? '');
  const calls = step.calls.map((c) => c.summary).join(', ');
  if (said !== '' && calls !== '') return `${said} — ${calls}`;
  if (said !== '' || calls !== '') return said || calls;
  if (step.label !== 'before_model') return `Step ${step.stepId}`;
  if (waiting && latest) return 'Waiting for the model…';
  return unansweredText(latest, stopped);
}

/** Why the newest step of a stopped run has no answer: its failure, a cancel or its recorded reason; undefined when it was cut off. */
export function stoppedText(run: RunHeader): string | undefined {
  if (run.active && run.status === 'running') return undefined;
  if (run.failure?.kind === 'interrupted') return `Model call interrupted: ${run.failure.message}`;
  if (run.failure) return `Model call failed: ${describeFailure(run.failure).title}`;
  if (run.status === 'paused' && run.statusReason === CANCELLED_REASON) return 'Model call stopped: the run was cancelled';
  // A run stopped before failures were recorded (an older journal): its recorded reason, as it is.
  if (run.statusReason && run.status !== 'running' && run.status !== 'completed')
    return `Model call ${run.status === 'failed' || run.statusReason.startsWith('model error') ? 'failed' : 'stopped'}: ${run.statusReason}`;
  return undefined;
}

/** The first non-empty line of Markdown text, without its heading or list marker. */
export function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim() !== '') ?? '';
  return line
    .replace(/^\s*(#+|[-*+]|\d+\.)\s+/, '')
    .replace(/\*\*|__/g, '')
    .trim();
}

function stepContent(row: FlatRow, streaming: string | undefined): RowContent {
  const step = streaming !== undefined && row.step!.text === undefined ? { ...row.step!, text: `${streaming}…` } : row.step!;
  const effects = step.calls.filter((c) => c.effect).length;
  const actions: RowAction[] = canRestore(row)
    ? [
        { id: 'restore', icon: 'history', title: `Restore to the start of step ${step.stepId}…` },
        ...(step.stepId > 0 ? [{ id: 'fork' as const, icon: 'repo-forked', title: `Fork from the start of step ${step.stepId}` }] : []),
      ]
    : [];
  const look = stepLook(step, row.run.active);
  const facts = [`Step ${step.stepId}`, formatClock(step.at)];
  if (step.endAt > step.at) facts.push(formatDuration(step.endAt - step.at));
  if (step.tokens !== undefined) facts.push(formatTokens(step.tokens));
  if (step.costUsd !== undefined) facts.push(formatCost(step.costUsd));
  if (effects > 0) facts.push(`${effects} external`);
  if (step.compacted) facts.push('context compacted');
  if (step.raised !== undefined) facts.push(step.raised);
  facts.push(savedText(step.label));
  const last = row.posinset === row.setsize;
  const headline = stepHeadline(step, last && row.run.active && row.run.status === 'running', stoppedText(row.run), last);
  const callLines = step.calls.map((c) => `• ${c.summary}: ${callLook(c.status, row.run.active, c.isError, c.notRun).text}`);
  return {
    icon: look.icon,
    spin: look.spin,
    tone: look.tone,
    label: headline,
    description: '',
    badges: [],
    title: [
      firstLine(step.text ?? '') || `Step ${step.stepId}`,
      ...callLines,
      facts.join(' · '),
      `${counted(step.checkpoints, 'save point')}; restore target ${step.checkpointId}`,
      ...(effects > 0 ? [`${counted(effects, 'call')} with effects outside the files`] : []),
    ].join('\n'),
    actions,
    meta: facts.join(' · '),
  };
}

function callContent(row: FlatRow): RowContent {
  const call = row.call!;
  const look = callLook(call.status, row.run.active, call.isError, call.notRun);
  const badges: string[] = [];
  if (call.durationMs !== undefined) badges.push(formatDuration(call.durationMs));
  if (call.effect) badges.push(call.effect.reversible ? 'external' : 'not reversible');
  if (call.undoes) badges.push('undo');
  if (call.undoneBy) badges.push('undone');
  if (call.refusedHosts) badges.push('network refused');
  const problems = (call.problems?.length ?? 0) + (call.moreProblems ?? 0);
  // Short, so a narrow view keeps the call's own words: the tooltip says they are new since the writes.
  if (problems > 0) badges.push(counted(problems, 'problem'));
  const actions: RowAction[] =
    call.checkpointId && canRestore(row) ? [{ id: 'restore', icon: 'history', title: 'Restore to before this call…' }] : [];
  if (call.refusedHosts)
    actions.push({
      id: 'allowHosts',
      icon: 'globe',
      title: `Allow ${call.refusedHosts.join(', ')} for this workspace (the network proxy refused it)`,
    });
  const lines = [
    call.summary,
    `${call.toolName}(${call.input})`,
    `Status: ${look.text}`,
    `Idempotency: ${IDEMPOTENCY_TEXT[call.idempotency]} · replay policy: ${call.policy}`,
  ];
  if (call.detail) lines.push(call.detail);
  if (call.effect) lines.push(`External effect: ${call.effect.effects.join(', ')} · undo: ${call.effect.compensation}`);
  if (call.undoes) lines.push(`Made to undo: ${call.undoes.join(', ')}`);
  if (call.undoneBy) lines.push(`Undone by: ${call.undoneBy.join(', ')}`);
  if (call.refusedHosts) lines.push(`Refused by the network proxy: ${call.refusedHosts.join(', ')} (the globe action allows them)`);
  if (problems > 0) lines.push(`The editor reported ${counted(problems, 'new problem')} in the files it wrote (expand the call)`);
  if (call.notChecked) lines.push(`No language service looked at ${call.notChecked.join(', ')}: problems not known`);
  const status = call.status === 'succeeded' ? '' : call.detail && call.isError ? `${look.text}: ${call.detail}` : look.text;
  return {
    icon: look.icon,
    spin: look.spin,
    tone: look.tone,
    label: call.summary,
    description: status,
    badges,
    title: lines.join('\n'),
    actions,
  };
}

function effectContent(row: FlatRow): RowContent {
  const effect = row.call!.effect!;
  return {
    icon: effect.reversible ? 'link-external' : 'warning',
    spin: false,
    tone: effect.reversible ? 'accent' : 'warning',
    label: effect.effects.join(', '),
    description: effect.reversible ? `undo: ${effect.compensation}` : 'not reversible',
    badges: [],
    title: `Effect outside the workspace files: restoring a checkpoint does not undo it.\n${effect.reversible ? `To undo: ${effect.compensation}` : 'It cannot be undone.'}`,
    actions: [],
  };
}

function patchContent(row: FlatRow): RowContent {
  const patch = row.patch!;
  const look = PATCH_LOOK[patch.state];
  const pending = PENDING.includes(patch.state);
  const actions: RowAction[] = [];
  if (!patch.binary) actions.push({ id: 'openDiff', icon: 'diff', title: 'Open diff' });
  const writable = row.run.damaged === undefined;
  if (writable && pending) actions.push({ id: 'accept', icon: 'check', title: 'Accept patch' });
  if (writable && (patch.state === 'applied' || patch.state === 'conflict'))
    actions.push({ id: 'rollback', icon: 'discard', title: 'Roll back patch' });
  const counts = patchCounts(patch);
  return {
    icon: look.icon,
    spin: false,
    tone: look.tone,
    label: patch.path,
    description: `${counts} · ${patch.state.replace('_', ' ')}`,
    badges: patch.op === 'modify' ? [] : [patch.op],
    title: `${patch.path} (${patch.op})\n${counts}\nState: ${look.text}`,
    actions,
  };
}

/** `streaming`: text the model is writing into this (step) row right now. */
export function describeRow(row: FlatRow, now: number, streaming?: string): RowContent {
  switch (row.kind) {
    case 'run':
      return runContent(row, now);
    case 'step':
      return stepContent(row, streaming);
    case 'call':
      return callContent(row);
    case 'effect':
      return effectContent(row);
    case 'patch':
      return patchContent(row);
    case 'problem':
      return problemContent(row);
  }
}

/** The action Enter runs on a row, when it has one other than expanding. */
export function defaultAction(row: FlatRow): ActionId | undefined {
  if (row.kind === 'patch' && !row.patch!.binary) return 'openDiff';
  if (row.kind === 'problem') return 'openProblem';
  return undefined;
}
