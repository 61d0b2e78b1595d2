import { hasExternalEffect, isExternalEffect, type LedgerEntry } from '../../../core/ledger/schema';
import type { MessageParam } from '../../../core/model/messages';
import type { LiveState, Patch } from '../../../core/patches/schema';
import { FILE_CHANGES_MARKER, isRuntimeNote } from '../../../core/runtime/recovery-note';
import { NOT_RUN_REASON } from '../../../core/runtime/declined-calls';
import type { RunState } from '../../../core/store/contract';
import type { CheckpointRecord, NoteRecord } from '../../../core/store/records';
import type { RunDeltaMessage } from '../../../protocol/messages';
import { cap, commandOutcome, describeCall, modeWords, refusedHosts, SANDBOX_WAY_OUT, sandboxBlock } from '../../../words/words';
import { assistantWords, INPUT_TEXT_MAX, RESULT_MAX, TEXT_MAX, toolResults, userWords } from './view-history';
import { compensationLinks, networkWords, pointBeforeCall, problemsOf } from './view-words';
import type {
  CallRow,
  EffectRow,
  PatchRow,
  PatchView,
  RunHeader,
  RunHolder,
  RunInstructions,
  RunView,
  StepRow,
} from '../../../protocol/viewModel';

// Turns a run's folded state into what the Timeline renders, and works out the smallest
// update between two renderings. Pure: the host calls it, unit tests call it.

const INPUT_MAX = 80;
const PREFERRED_INPUT_KEYS = ['path', 'file', 'command', 'query', 'url', 'pattern', 'name'];
export function isReversible(compensation: string): boolean {
  const text = compensation.trim().toLowerCase();
  return text !== '' && text !== 'not reversible';
}

/** One line from a tool input: a telling field when there is one, else compact JSON. */
export function summarizeInput(input: unknown): string {
  let text: string;
  if (typeof input === 'string') text = input;
  else if (input && typeof input === 'object' && !Array.isArray(input)) {
    const record = input as Record<string, unknown>;
    const key = PREFERRED_INPUT_KEYS.find((k) => typeof record[k] === 'string');
    const firstString = Object.values(record).find((v): v is string => typeof v === 'string');
    text = key ? (record[key] as string) : (firstString ?? JSON.stringify(input));
  } else text = input === undefined ? '' : JSON.stringify(input);
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > INPUT_MAX ? `${line.slice(0, INPUT_MAX - 1)}…` : line;
}

function toolInputs(messages: readonly MessageParam[], from: number): Map<string, unknown> {
  const inputs = new Map<string, unknown>();
  for (let i = from; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (block.type === 'tool_use' && typeof block.id === 'string') inputs.set(block.id, block.input);
    }
  }
  return inputs;
}

export function patchView(patch: Patch, live: LiveState | undefined): PatchView {
  if (patch.state === 'accepted') return 'accepted';
  if (patch.state === 'rolled_back') return 'rolled_back';
  return live ?? 'unknown';
}

function patchRow(patch: Patch, live: ReadonlyMap<string, LiveState>): PatchRow {
  const { patchId, path, op, added, removed, binary } = patch;
  const mode = modeWords(patch);
  return { patchId, path, op, added, removed, binary, ...(mode === undefined ? {} : { mode }), state: patchView(patch, live.get(patchId)) };
}

export function effectOf(entry: LedgerEntry): EffectRow | undefined {
  if (!hasExternalEffect(entry)) return undefined;
  const effects = entry.sideEffects.filter(isExternalEffect);
  if (effects.length === 0) return undefined;
  const reversible = isReversible(entry.compensation);
  return { effects, compensation: reversible ? entry.compensation : 'not reversible', reversible };
}

interface CallContext {
  inputs: Map<string, unknown>;
  results: Map<string, string>;
  patchesByCall: Map<string, Patch[]>;
  /** By callId, the checkpoint right before the call's first save point (before it was approved or started). */
  firstCheckpointOfCall: Map<string, CheckpointRecord>;
  live: ReadonlyMap<string, LiveState>;
}

function inputText(input: unknown): string | undefined {
  if (input === undefined) return undefined;
  return cap(JSON.stringify(input, null, 2) ?? '', INPUT_TEXT_MAX);
}

function callRow(entry: LedgerEntry, ctx: CallContext): CallRow {
  const input = ctx.inputs.get(entry.callId);
  const patches = (ctx.patchesByCall.get(entry.callId) ?? []).map((p) => patchRow(p, ctx.live));
  const result = ctx.results.get(entry.callId);
  const blocked = entry.toolName === 'run_command' ? sandboxBlock(result) : undefined;
  const summary = describeCall({
    toolName: entry.toolName,
    input,
    ...(result !== undefined ? { result } : {}),
    added: patches.reduce((n, p) => n + p.added, 0),
    removed: patches.reduce((n, p) => n + p.removed, 0),
    hasPatches: patches.length > 0,
    denied: entry.reason === 'denied by the user',
  });
  const row: CallRow = {
    callId: entry.callId,
    toolName: entry.toolName,
    input: summarizeInput(input),
    status: entry.status,
    idempotency: entry.idempotency,
    policy: entry.replayPolicy,
    plannedAt: entry.plannedAt,
    isError:
      entry.reason !== NOT_RUN_REASON &&
      (entry.status === 'failed' || entry.isError === true) &&
      (blocked !== undefined || !exitedNonZero(entry.toolName, result)),
    patches,
    summary,
  };
  const full = inputText(input);
  if (full !== undefined) row.inputText = full;
  if (result !== undefined) row.result = cap(result, RESULT_MAX);
  if (entry.reason === NOT_RUN_REASON) row.notRun = true;
  const refused = entry.toolName === 'run_command' ? refusedHosts(result) : [];
  if (refused.length > 0) row.refusedHosts = refused;
  if (entry.startedAt !== undefined && entry.finishedAt !== undefined) row.durationMs = Math.max(0, entry.finishedAt - entry.startedAt);
  const detail = blocked !== undefined ? SANDBOX_WAY_OUT : (entry.error ?? entry.reason);
  if (detail !== undefined) row.detail = detail;
  const before = ctx.firstCheckpointOfCall.get(entry.callId);
  if (before !== undefined) {
    row.checkpointId = before.checkpointId;
    row.restorePoint = pointBeforeCall(before, entry.stepId, entry.toolName);
  }
  const effect = effectOf(entry);
  if (effect) row.effect = effect;
  return Object.assign(row, problemsOf(entry));
}

/** A command that ran to its end and said "exit 1" (a failing test run on purpose) is its answer, not a red error. */
function exitedNonZero(toolName: string, result: string | undefined): boolean {
  return toolName === 'run_command' && /^exit -?\d+$/.test(commandOutcome(result) ?? '');
}

function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

/** The step's words and its own share of the budget, from the checkpoint before it and its last one. */
function stepWords(
  messages: readonly MessageParam[],
  from: number,
  last: CheckpointRecord,
  prev: CheckpointRecord | undefined,
): Partial<StepRow> {
  const words = assistantWords(messages, from, last.messageCount);
  const out: Partial<StepRow> = {};
  if (last.label === 'instruction' || last.label === 'run_start') {
    const said = userWords(messages, from, last.messageCount, isRuntimeNote);
    if (said !== '') out.instruction = cap(said, TEXT_MAX);
    // The notes' markers are for the model: the person reads the words after them.
    const told = userWords(messages, from, last.messageCount, (text) => !isRuntimeNote(text))
      .split('\n')
      .filter((line) => line !== FILE_CHANGES_MARKER)
      .join('\n');
    if (told !== '') out.told = cap(told, TEXT_MAX);
  }
  if (words.text !== '') out.text = cap(words.text, TEXT_MAX);
  if (words.thinking !== '') out.thinking = cap(words.thinking, TEXT_MAX);
  const tokens = last.budget.inputTokens + last.budget.outputTokens - (prev ? prev.budget.inputTokens + prev.budget.outputTokens : 0);
  if (tokens > 0) out.tokens = tokens;
  const cost = last.budget.costUsd - (prev?.budget.costUsd ?? 0);
  if (cost > 0) out.costUsd = cost;
  return out;
}

/** What step rows are built from: a run's folded state (its active history). */
export interface StepSource {
  readonly checkpoints: readonly CheckpointRecord[];
  readonly messages: readonly MessageParam[];
  readonly notes: readonly NoteRecord[];
  /** Latest entry per call, in planning order. */
  readonly ledger: Iterable<LedgerEntry>;
  readonly patches: Iterable<Patch>;
  /** By checkpointId, the history its messageCount counts in; without it, `messages`. */
  readonly historyOf?: ReadonlyMap<string, readonly MessageParam[]>;
}

/** The history a checkpoint's messageCount counts in (a compaction after it started another). */
function historyOf(source: StepSource, checkpoint: CheckpointRecord): readonly MessageParam[] {
  return source.historyOf?.get(checkpoint.checkpointId) ?? source.messages;
}

/** The tool inputs and results of the histories these checkpoints count in, from where `prev` ends. */
function callWords(source: StepSource, checkpoints: readonly CheckpointRecord[], prev: CheckpointRecord | undefined) {
  const starts = new Map<readonly MessageParam[], number>();
  // A history let go (the source keeps no entry for `prev`): the others are read from their start.
  if (prev && (!source.historyOf || source.historyOf.has(prev.checkpointId))) starts.set(historyOf(source, prev), prev.messageCount);
  for (const c of checkpoints) {
    const history = historyOf(source, c);
    if (!starts.has(history)) starts.set(history, 0);
  }
  const inputs = new Map<string, unknown>();
  const results = new Map<string, string>();
  // The oldest history first: a call's own result, not the note a later compaction left for it.
  for (const [history, start] of starts) {
    for (const [id, input] of toolInputs(history, start)) if (!inputs.has(id)) inputs.set(id, input);
    // The recovery note the runtime puts inside the last result is for the model, not the call's output.
    for (const [id, result] of toolResults(history.slice(start), isRuntimeNote)) if (!results.has(id)) results.set(id, result);
  }
  return { inputs, results };
}

function* where<T>(items: Iterable<T>, keep: (item: T) => boolean): Iterable<T> {
  for (const item of items) if (keep(item)) yield item;
}

/**
 * The rows of the steps from checkpoint index `from` on (0: every step), with their calls and
 * patches; reads only the part of the state those steps cover, so a live run's newest step is
 * built in time that does not grow with the run.
 */
export function buildSteps(source: StepSource, live: ReadonlyMap<string, LiveState>, from = 0): StepRow[] {
  const checkpoints = source.checkpoints.slice(from);
  const prev = source.checkpoints[from - 1];
  const firstStep = checkpoints[0]?.stepId ?? Infinity;
  const firstCheckpointOfCall = new Map<string, CheckpointRecord>();
  let before = prev;
  for (const c of checkpoints) {
    if (c.callId !== undefined && before !== undefined && !firstCheckpointOfCall.has(c.callId)) firstCheckpointOfCall.set(c.callId, before);
    before = c;
  }
  const ctx: CallContext = {
    ...callWords(source, checkpoints, prev),
    patchesByCall: groupBy([...where(source.patches, (p) => p.stepId >= firstStep)], (p) => p.toolCallId),
    firstCheckpointOfCall,
    live,
  };
  const steps = stepRows(checkpoints, prev, source);
  const entries = [...where(source.ledger, (entry) => entry.stepId >= firstStep)];
  // Links among the steps built (a live update rebuilds the newest: an older original shows its link on a full read).
  const links = compensationLinks(entries);
  for (const entry of entries) {
    const step = stepFor(steps, entry.stepId);
    if (step) step.calls.push({ ...callRow(entry, ctx), ...links.get(entry.callId) });
  }
  return steps;
}

function stepRows(checkpoints: readonly CheckpointRecord[], prev: CheckpointRecord | undefined, source: StepSource): StepRow[] {
  const steps: StepRow[] = [];
  for (const [stepId, group] of groupBy(checkpoints, (c) => c.stepId)) {
    const first = group[0]!;
    const last = group[group.length - 1]!;
    // A step that compacted has its own messages after those its compaction left.
    const compacted = group.filter((c) => c.label === 'compacted').at(-1);
    const from = compacted?.messageCount ?? prev?.messageCount ?? 0;
    const words = stepWords(historyOf(source, last), from, last, prev);
    const raised = group.some((c) => c.label === 'instruction')
      ? source.notes.find((n) => n.at === first.at && n.kind === 'info')
      : undefined;
    if (raised) words.raised = raised.text;
    prev = last;
    steps.push({
      stepId,
      checkpointId: first.checkpointId,
      restorePoint: `start of step ${stepId}`,
      label: last.label,
      at: first.at,
      endAt: last.at,
      checkpoints: group.length,
      ...(group.some((c) => c.label === 'compacted') ? { compacted: true } : {}),
      calls: [],
      ...words,
    });
  }
  return steps.sort((a, b) => a.stepId - b.stepId);
}

/** The step holding stepId, or the latest one before it (a call whose step has no checkpoint yet). */
function stepFor(steps: readonly StepRow[], stepId: number): StepRow | undefined {
  for (let i = steps.length - 1; i >= 0; i--) {
    if (steps[i]!.stepId <= stepId) return steps[i];
  }
  return undefined;
}

/** Warnings a header carries (the latest). */
const MAX_WARNINGS = 3;

/** What a run's header is made of. */
export type HeaderSource = Pick<
  RunState,
  | 'run'
  | 'status'
  | 'statusReason'
  | 'failure'
  | 'budget'
  | 'restores'
  | 'allCheckpoints'
  | 'notes'
  | 'ended'
  | 'damage'
  | 'firstInstruction'
  | 'plan'
>;

function undoableRestores(state: HeaderSource): number {
  const undone = new Set(state.restores.filter((r) => r.kind === 'undo' && r.undoes).map((r) => r.undoes));
  return state.restores.filter((r) => r.kind !== 'undo' && !undone.has(r.restoreId)).length;
}

function updatedAt(state: HeaderSource): number {
  const times = [state.run.createdAt, state.allCheckpoints.at(-1)?.at, state.notes.at(-1)?.at, state.restores.at(-1)?.at, state.ended?.at];
  return Math.max(...times.filter((t): t is number => t !== undefined));
}

/** `heldElsewhere`: the holder when another window or process writes the run. */
export function runHeader(state: HeaderSource, active: boolean, heldElsewhere?: RunHolder): RunHeader {
  const header: RunHeader = {
    runId: state.run.runId,
    task: state.run.task,
    status: state.status,
    createdAt: state.run.createdAt,
    updatedAt: updatedAt(state),
    inputTokens: state.budget.inputTokens,
    outputTokens: state.budget.outputTokens,
    costUsd: state.budget.costUsd,
    model: state.run.settings.model,
    undoableRestores: undoableRestores(state),
    active,
  };
  if (state.statusReason !== undefined) header.statusReason = state.statusReason;
  if (state.run.parent) header.parent = { runId: state.run.parent.runId, step: state.run.parent.step };
  if (state.firstInstruction !== undefined) header.instruction = state.firstInstruction;
  if (state.failure !== undefined) header.failure = state.failure;
  if (heldElsewhere !== undefined) header.heldElsewhere = heldElsewhere;
  if (state.damage) header.damaged = `${state.damage.file} at byte ${state.damage.offset}: ${state.damage.message}`;
  const instructions = runInstructions(state.run);
  if (instructions !== undefined) header.instructions = instructions;
  const warnings = state.notes.filter((n) => n.kind === 'warning').slice(-MAX_WARNINGS);
  if (warnings.length > 0) header.warnings = warnings.map((n) => cap(n.text, INPUT_TEXT_MAX));
  const network = networkWords(state.run.settings.commands);
  if (network !== undefined) header.network = network;
  if (state.plan !== undefined && state.plan.steps.length > 0) header.plan = state.plan.steps.map((s) => ({ ...s }));
  return header;
}

/** The system prompt a run sent and the project files it took in, for the Timeline's Instructions entry. */
function runInstructions(run: HeaderSource['run']): RunInstructions | undefined {
  if (run.system === undefined || run.system === '') return undefined;
  return {
    ...(run.prompt !== undefined ? { version: run.prompt.version } : {}),
    tokens: Math.ceil(new TextEncoder().encode(run.system).length / 4),
    text: cap(run.system, TEXT_MAX),
    files: (run.prompt?.instructionFiles ?? []).map((f) => ({ ...f, hash: f.hash.slice(0, 12) })),
    nested: run.prompt?.nestedInstructions ?? [],
  };
}

export function buildRunView(state: RunState, live: ReadonlyMap<string, LiveState>, active: boolean, heldElsewhere?: RunHolder): RunView {
  return { header: runHeader(state, active, heldElsewhere), steps: buildSteps(state, live) };
}

/** Structural equality of plain JSON data. */
export function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => sameData((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** The update that turns `prev` into `next`, or null when nothing changed. */
export function runDelta(prev: RunView | undefined, next: RunView): RunDeltaMessage | null {
  const prevSteps = prev?.steps ?? [];
  let from = 0;
  while (from < prevSteps.length && from < next.steps.length && sameData(prevSteps[from], next.steps[from])) from++;
  const stepsChanged = from < prevSteps.length || from < next.steps.length;
  if (prev && !stepsChanged && sameData(prev.header, next.header)) return null;
  return { type: 'runDelta', header: next.header, fromStep: from, steps: next.steps.slice(from) };
}
