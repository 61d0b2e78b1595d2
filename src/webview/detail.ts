import type { PendingApproval } from '../protocol/messages';
import { describeFailure, FAILURE_ACTION_LABELS, type FailureAction, type FailureWords } from '../words/failure-words';
import { patchCounts } from '../words/words';
import type { CallRow, RunHeader, RunInstructions, RunView, StepRow } from '../protocol/viewModel';
import { formatClock, formatCost, formatDuration, formatTokens } from './format';
import { renderMarkdown, type MarkdownActions } from './markdown';
import { callLook, canRestoreRun, EARLIER_UNANSWERED, PATCH_LOOK } from './rowContent';
import { el } from './dom';
import { counted } from '../words/words';

// The open step in full: what the model said (Markdown) and thought, each call's input and
// result, its patches with their live state. Built from the view model; no host data is
// ever inserted as HTML (only markdown-it's escaped output).

/** Results longer than this many lines are collapsed behind "Show all". */
export const RESULT_LINES = 12;

export interface DetailActions extends MarkdownActions {
  openDiff(runId: string, patchId: string): void;
  /** Restore (files, conversation or both) to a save point; fork the run from the start of a step. */
  restore(runId: string, checkpointId: string, where: string): void;
  fork(runId: string, stepId: number): void;
  /** Selects the step's row in the tree (the run's map), so both views stay in step. */
  showInTree(runId: string, stepId: number): void;
  /** The action beside a stopped run's failure (Set API Key, Retry, Raise to…, Resume). */
  failureAction(runId: string, action: FailureAction): void;
}

function icon(name: string, tone: string, spin = false): HTMLSpanElement {
  return el('span', `codicon codicon-${name} tone-${tone}${spin ? ' codicon-modifier-spin' : ''}`);
}

/** A block of plain text, collapsed to its first lines with a "Show all" button when long. */
export function collapsible(text: string, maxLines = RESULT_LINES): HTMLElement {
  const box = el('div', 'output');
  const pre = el('pre', 'output-text');
  const lines = text.split('\n');
  if (lines.length <= maxLines) {
    pre.textContent = text;
    box.append(pre);
    return box;
  }
  pre.textContent = lines.slice(0, maxLines).join('\n');
  const more = el('button', 'link-button', `Show all ${lines.length} lines`);
  more.addEventListener('click', () => {
    pre.textContent = text;
    more.remove();
  });
  box.append(pre, more);
  return box;
}

function callSection(runId: string, runLive: boolean, call: CallRow, actions: DetailActions): HTMLElement {
  const look = callLook(call.status, runLive, call.isError, call.notRun);
  const section = el('details', 'call');
  section.open = call.isError || call.status === 'started' || call.status === 'uncertain';
  const summary = el('summary', 'call-summary');
  summary.append(icon(look.icon, look.tone, look.spin), el('span', 'call-title', call.summary));
  const problems = (call.problems?.length ?? 0) + (call.moreProblems ?? 0);
  const facts = [look.text, ...(call.durationMs !== undefined ? [formatDuration(call.durationMs)] : [])];
  if (problems > 0) facts.push(counted(problems, 'new problem'));
  summary.append(el('span', 'call-status', facts.join(' · ')));
  section.append(summary);
  if (call.detail && call.isError) section.append(el('div', 'call-detail tone-error', call.detail));
  if (call.inputText !== undefined) section.append(el('div', 'section-label', 'Input'), collapsible(call.inputText));
  if (call.result !== undefined) section.append(el('div', 'section-label', 'Result'), collapsible(call.result));
  for (const patch of call.patches) {
    const line = el('div', 'patch-line');
    const plook = PATCH_LOOK[patch.state];
    const counts = patchCounts(patch);
    line.append(icon(plook.icon, plook.tone), el('span', 'patch-path', patch.path), el('span', 'patch-state', `${counts} · ${plook.text}`));
    if (!patch.binary) {
      const diff = el('button', 'link-button', 'Open diff');
      diff.addEventListener('click', () => actions.openDiff(runId, patch.patchId));
      line.append(diff);
    }
    section.append(line);
  }
  return section;
}

function stepCost(step: StepRow): string {
  const parts = [];
  if (step.endAt > step.at) parts.push(formatDuration(step.endAt - step.at));
  if (step.tokens !== undefined) parts.push(formatTokens(step.tokens));
  if (step.costUsd !== undefined) parts.push(formatCost(step.costUsd));
  return parts.map((p) => ` · ${p}`).join('');
}

function isLatest(run: RunView, step: StepRow | undefined): boolean {
  return step === undefined || run.steps.at(-1)?.stepId === step.stepId;
}

/** The run's Instructions: the system prompt it sent and the project files it took in (collapsed). */
function instructionsEntry(standing: RunInstructions): HTMLElement {
  const entry = el('details', 'instructions-entry');
  const files = standing.files.length > 0 ? ` · ${standing.files.map((f) => f.path).join(', ')}` : '';
  const version = standing.version !== undefined ? ` v${standing.version}` : '';
  entry.append(el('summary', '', `Instructions${version} · ~${formatTokens(standing.tokens)}${files}`));
  if (standing.files.length > 0) {
    const list = el('ul', 'instruction-files');
    for (const f of standing.files)
      list.append(
        el('li', '', `${f.path} · ${(f.bytes / 1024).toFixed(1)} KiB${f.truncated ? ' (cut at the cap)' : ''} · sha256 ${f.hash}`),
      );
    entry.append(el('div', 'section-label', 'Project instruction files'), list);
  }
  if (standing.nested.length > 0) entry.append(el('div', 'muted', `Named for their folders: ${standing.nested.join(', ')}`));
  entry.append(el('div', 'section-label', 'System prompt'), collapsible(standing.text));
  return entry;
}

/** Text the model is writing now, as Markdown with a cursor at its end. */
export function streamingBody(text: string, actions: MarkdownActions): HTMLElement {
  const body = renderMarkdown(text, actions);
  body.classList.add('streaming');
  return body;
}

/** The whole step; `streaming` is text the model is writing into it right now. */
export function stepDetail(run: RunView, step: StepRow | undefined, streaming: string | undefined, actions: DetailActions): HTMLElement {
  const root = el('div', 'step-detail');
  const heading = el('div', 'detail-heading', step ? `Step ${step.stepId} · ${formatClock(step.at)}${stepCost(step)}` : 'Starting…');
  if (step) {
    heading.title = 'Show this step in the tree';
    heading.addEventListener('click', () => actions.showInTree(run.header.runId, step.stepId));
  }
  root.append(heading);
  if (step?.instruction !== undefined) {
    const said = el('div', 'instruction');
    said.append(
      el('div', 'section-label', step.label === 'run_start' ? 'Your task' : 'Your instruction'),
      renderMarkdown(step.instruction, actions),
    );
    if (step.raised !== undefined) said.append(el('div', 'raised tone-warning', step.raised));
    if (step.told !== undefined) {
      const told = el('details', 'told');
      told.append(el('summary', 'muted', 'Also told the model'), collapsible(step.told));
      said.append(told);
    }
    root.append(said);
  }
  if (step !== undefined && step.stepId === run.steps[0]?.stepId) {
    for (const warning of run.header.warnings ?? []) root.append(el('div', 'raised tone-warning', warning));
    if (run.header.network !== undefined) root.append(el('div', 'raised muted', run.header.network));
    if (run.header.instructions !== undefined) root.append(instructionsEntry(run.header.instructions));
  }
  const text = step?.text ?? streaming;
  if (text !== undefined && text !== '')
    root.append(step?.text === undefined ? streamingBody(text, actions) : renderMarkdown(text, actions));
  else if (run.header.status === 'running' && run.header.active && isLatest(run, step) && (step?.calls.length ?? 0) === 0)
    root.append(el('div', 'muted', 'Waiting for the model…'));
  else if (step && !isLatest(run, step) && step.instruction === undefined && step.calls.length === 0)
    root.append(el('div', 'muted', `${EARLIER_UNANSWERED}.`));
  if (step?.thinking !== undefined) {
    const thinking = el('details', 'thinking');
    thinking.append(el('summary', '', 'Thinking'), collapsible(step.thinking));
    root.append(thinking);
  }
  for (const call of step?.calls ?? []) root.append(callSection(run.header.runId, run.header.active, call, actions));
  if (isLatest(run, step)) {
    const card = stopCard(run.header, actions);
    if (card) root.append(card);
  }
  return root;
}

/**
 * The save point at the start of a step, between turns: Restore… (files, conversation or both)
 * and Fork from here. None while the run runs here or when it is damaged (read-only).
 */
export function restorePoint(run: RunView, step: StepRow, actions: DetailActions): HTMLElement | undefined {
  if (step.stepId < 1 || !canRestoreRun(run.header)) return undefined;
  const where = step.restorePoint ?? `start of step ${step.stepId}`;
  const line = el('div', 'restore-point');
  line.setAttribute('role', 'group');
  line.setAttribute('aria-label', `Restore point: ${where}`);
  line.append(icon('history', 'muted'), el('span', 'restore-where', where));
  const runId = run.header.runId;
  const restore = el('button', 'link-button', 'Restore…');
  restore.title = `Restore the files, the conversation or both to the ${where}`;
  restore.addEventListener('click', () => actions.restore(runId, step.checkpointId, where));
  const fork = el('button', 'link-button', 'Fork from here');
  fork.title = `A new run whose history is this one's up to the ${where}; this run stays as it is`;
  fork.addEventListener('click', () => actions.fork(runId, step.stepId));
  line.append(restore, fork);
  return line;
}

/** Why a run stopped, in words, with its actions as buttons; none for a run that goes on or ended. */
export function stopWords(h: RunHeader): { tone: string; words: FailureWords } | undefined {
  if (h.heldElsewhere || h.damaged !== undefined) return undefined;
  // "running" with no live writer: its window went away mid-run.
  if (h.status === 'running' && !h.active)
    return { tone: 'warning', words: { title: 'Interrupted', detail: 'no window is running it any more', actions: ['resume'] } };
  if (h.status !== 'paused' && h.status !== 'interrupted') return undefined;
  if (h.failure)
    return {
      tone: h.failure.kind === 'limit' || h.failure.kind === 'interrupted' ? 'warning' : 'error',
      words: describeFailure(h.failure),
    };
  return { tone: 'muted', words: { title: 'Paused', ...(h.statusReason ? { detail: h.statusReason } : {}), actions: ['resume'] } };
}

function stopCard(h: RunHeader, actions: DetailActions): HTMLElement | undefined {
  const stop = stopWords(h);
  if (!stop) return undefined;
  const card = el('div', `stop-card tone-border-${stop.tone}`);
  card.setAttribute('role', 'group');
  card.setAttribute('aria-label', stop.words.title);
  const title = el('div', 'stop-title');
  title.append(icon(stop.tone === 'error' ? 'error' : 'debug-pause', stop.tone), el('span', '', stop.words.title));
  card.append(title);
  if (stop.words.detail !== undefined) card.append(el('div', 'stop-detail', stop.words.detail));
  const row = el('div', 'stop-buttons');
  stop.words.actions.forEach((action, i) =>
    row.append(button(FAILURE_ACTION_LABELS[action], i === 0 ? 'primary' : 'secondary', () => actions.failureAction(h.runId, action))),
  );
  card.append(row);
  return card;
}

export interface ApprovalActions {
  decide(approval: PendingApproval, decision: 'allow_once' | 'allow_for_run' | 'deny', reason?: string): void;
}

function button(text: string, className: string, onClick: () => void): HTMLButtonElement {
  const b = el('button', className, text);
  b.addEventListener('click', onClick);
  return b;
}

/** One waiting call: what it wants to do, its input, Allow once / Allow for this run / Deny (with a reason). */
export function approvalCard(approval: PendingApproval, actions: ApprovalActions): HTMLElement {
  const card = el('div', 'approval');
  card.setAttribute('role', 'group');
  card.setAttribute('aria-label', `Approval needed: ${approval.summary}`);
  const title = el('div', 'approval-title');
  title.append(icon('shield', 'warning'), el('span', '', `The agent wants to ${approval.summary}`));
  card.append(title);
  if (approval.reason !== undefined) card.append(el('div', 'approval-reason', approval.reason));
  const input = el('details', 'approval-input');
  input.append(el('summary', '', `${approval.toolName} input`), collapsible(approval.input, 8));
  card.append(input);
  const reason = el('input', 'deny-reason');
  reason.type = 'text';
  reason.placeholder = 'Why not? (optional, for the agent)';
  reason.setAttribute('aria-label', 'Reason for denying');
  const row = el('div', 'approval-buttons');
  row.append(button('Allow once', 'primary', () => actions.decide(approval, 'allow_once')));
  if (approval.reason === undefined) row.append(button('Allow for this run', 'secondary', () => actions.decide(approval, 'allow_for_run')));
  const deny = () => actions.decide(approval, 'deny', reason.value.trim() || undefined);
  row.append(button('Deny', 'secondary', deny));
  reason.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') deny();
  });
  card.append(reason, row);
  return card;
}
