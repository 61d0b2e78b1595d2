import * as z from 'zod/mini';
import { PatchView, RestoreFile, RestoreMode, RestorePreview, RunHeader, RunView, StepRow } from './viewModel';

// Every message between the Timeline webview and the extension host. Both sides parse what
// they receive with these schemas; anything that does not parse is logged and dropped.

const id = z.string().check(z.minLength(1));
const RunRef = z.object({ runId: id });
const PatchRef = z.object({ runId: id, patchId: id });
const CheckpointRef = z.object({ runId: id, checkpointId: id, mode: RestoreMode });

/** Context attached to a task in the composer: the editor's selection or a whole file. */
export const ContextChip = z.object({
  kind: z.enum(['selection', 'activeFile', 'files']),
  /** Workspace-relative path. */
  path: z.string().check(z.minLength(1), z.maxLength(1000)),
  /** 1-based lines of a selection. */
  startLine: z.optional(z.int().check(z.positive())),
  endLine: z.optional(z.int().check(z.positive())),
});

export const ApprovalChoice = z.enum(['allow_once', 'allow_for_run', 'deny']);

/** A tool call waiting for the person's decision. */
export const PendingApproval = z.object({
  runId: id,
  callId: id,
  toolName: z.string(),
  summary: z.string(),
  /** The input as indented JSON (capped). */
  input: z.string(),
  /** Why it must be asked (a protected path): then only "allow once" is offered. */
  reason: z.optional(z.string()),
});

/** Parameters of each request the webview can make, by method. */
export const RequestParams = {
  restorePreview: CheckpointRef,
  restore: z.extend(CheckpointRef, { previewId: id }),
  openDiff: PatchRef,
  /** A problem row of a call: its file opened in the editor at its line (the host checks the path is in the workspace). */
  openProblem: z.object({
    path: z.string().check(z.minLength(1), z.maxLength(1000)),
    line: z.int().check(z.positive()),
  }),
  accept: PatchRef,
  rollbackPatch: z.extend(PatchRef, { hunk: z.optional(z.int().check(z.nonnegative())) }),
  undoLastRestore: RunRef,
  /** A fork of the run from the start of a step: a new run, paused; the run stays as it was. */
  fork: z.extend(RunRef, { step: z.int().check(z.positive()) }),
  /** Compares two branches (a fork and its parent) in the editor: their steps side by side, their files as a diff. */
  compare: z.extend(RunRef, { otherRunId: id }),
  /** "Ask the agent to undo these": a new instruction naming these calls' external effects; its calls compensate them. */
  undoEffects: z.extend(RunRef, {
    callIds: z.array(z.string().check(z.minLength(1), z.maxLength(200))).check(z.minLength(1), z.maxLength(50)),
  }),
  /** Allow hosts the commands' network proxy refused (a call's row): for this workspace, from the next command on. */
  allowHosts: z.object({ hosts: z.array(z.string().check(z.minLength(1), z.maxLength(300))).check(z.minLength(1), z.maxLength(10)) }),
  /** The person picked a row of this run: it becomes the window's selected run (every surface follows). */
  select: RunRef,
  resume: RunRef,
  takeOver: RunRef,
  cancel: RunRef,
  /** The action beside a run's failure (Set API Key, Retry, Raise to…, Show Log): the host runs it. */
  failureAction: z.extend(RunRef, { action: z.enum(['set_key', 'retry', 'raise_limit', 'resume', 'show_log']) }),
  /** A link in the model's text: opened by the host after the person confirms. */
  openLink: z.object({ url: z.string().check(z.minLength(1), z.maxLength(2000)) }),
  copyText: z.object({ text: z.string().check(z.maxLength(200_000)) }),
  decide: z.object({
    runId: id,
    callId: id,
    decision: ApprovalChoice,
    /** With deny: why, passed to the model in the denied result. */
    reason: z.optional(z.string().check(z.maxLength(2000))),
  }),
  pickContext: z.object({ kind: ContextChip.shape.kind }),
  startRun: z.object({
    task: z.string().check(z.trim(), z.minLength(1), z.maxLength(20_000)),
    context: z.array(ContextChip).check(z.maxLength(20)),
  }),
  continueRun: z.object({ runId: id, instruction: z.string().check(z.trim(), z.minLength(1), z.maxLength(20_000)) }),
  /** The no-key banner's button: the host runs "Agent: Set API Key". */
  setApiKey: z.object({}),
} as const;

export type Method = keyof typeof RequestParams;
export const METHODS = Object.keys(RequestParams) as Method[];

/** What happened, in one sentence the webview shows. */
export const ActionOutcome = z.object({ message: z.string() });

export const RestoreOutcome = z.object({
  message: z.string(),
  /** What the restore did to each file, conflicts first. */
  files: z.array(RestoreFile),
});

export const RollbackOutcome = z.object({
  message: z.string(),
  /** Hunks undone and hunks left alone because the live content no longer matches them. */
  revertedHunks: z.int().check(z.nonnegative()),
  conflictHunks: z.int().check(z.nonnegative()),
});

/** Result schema of each method. */
export const ResultSchemas = {
  restorePreview: RestorePreview,
  restore: RestoreOutcome,
  openDiff: ActionOutcome,
  openProblem: ActionOutcome,
  accept: ActionOutcome,
  rollbackPatch: RollbackOutcome,
  undoLastRestore: RestoreOutcome,
  fork: z.extend(ActionOutcome, { runId: id }),
  compare: ActionOutcome,
  undoEffects: ActionOutcome,
  allowHosts: ActionOutcome,
  select: ActionOutcome,
  resume: ActionOutcome,
  takeOver: ActionOutcome,
  cancel: ActionOutcome,
  failureAction: ActionOutcome,
  openLink: ActionOutcome,
  copyText: ActionOutcome,
  decide: ActionOutcome,
  pickContext: z.object({ chips: z.array(ContextChip) }),
  startRun: ActionOutcome,
  continueRun: ActionOutcome,
  setApiKey: ActionOutcome,
} as const satisfies Record<Method, z.ZodMiniType>;

export type RequestParamsOf<M extends Method> = z.infer<(typeof RequestParams)[M]>;
export type ResultOf<M extends Method> = z.infer<(typeof ResultSchemas)[M]>;

const requestId = z.string().check(z.minLength(1), z.maxLength(100));

function requestVariant<M extends Method>(method: M) {
  return z.object({ type: z.literal('request'), requestId, method: z.literal(method), params: RequestParams[method] });
}

export const RequestMessage = z.discriminatedUnion('method', [
  requestVariant('restorePreview'),
  requestVariant('restore'),
  requestVariant('openDiff'),
  requestVariant('openProblem'),
  requestVariant('accept'),
  requestVariant('rollbackPatch'),
  requestVariant('undoLastRestore'),
  requestVariant('fork'),
  requestVariant('compare'),
  requestVariant('undoEffects'),
  requestVariant('allowHosts'),
  requestVariant('select'),
  requestVariant('resume'),
  requestVariant('takeOver'),
  requestVariant('cancel'),
  requestVariant('failureAction'),
  requestVariant('openLink'),
  requestVariant('copyText'),
  requestVariant('decide'),
  requestVariant('pickContext'),
  requestVariant('startRun'),
  requestVariant('continueRun'),
  requestVariant('setApiKey'),
]);

export const ReadyMessage = z.object({ type: z.literal('ready') });

export const WebviewToHost = z.union([ReadyMessage, RequestMessage]);

export const SnapshotMessage = z.object({ type: z.literal('snapshot'), runs: z.array(RunView) });

/** More runs of the view's opening, whole (after the snapshot's one): added to what the webview holds, none of them new to the person. */
export const RunsListedMessage = z.object({ type: z.literal('runsListed'), runs: z.array(RunView) });

/** A run's header, and its steps from `fromStep` on replacing what the webview holds. */
export const RunDeltaMessage = z.object({
  type: z.literal('runDelta'),
  header: RunHeader,
  fromStep: z.int().check(z.nonnegative()),
  steps: z.array(StepRow),
});

export const RunRemovedMessage = z.object({ type: z.literal('runRemoved'), runId: id });

export const PatchLiveMessage = z.object({
  type: z.literal('patchLive'),
  runId: id,
  changes: z.array(z.object({ patchId: id, state: PatchView })),
});

/** `{requestId, ok: true, result}` or `{requestId, ok: false, error}`. */
export const ReplyMessage = z
  .object({ type: z.literal('reply'), requestId, ok: z.boolean(), result: z.optional(z.unknown()), error: z.optional(z.string()) })
  .check(
    z.refine((r) => (r.ok ? r.error === undefined : typeof r.error === 'string' && r.result === undefined), {
      message: 'a reply carries a result when ok, an error otherwise',
    }),
  );

/** Text the model is writing now, in the step `stepId` of the run (appended to what came before). */
export const StreamMessage = z.object({
  type: z.literal('stream'),
  runId: id,
  stepId: z.int().check(z.nonnegative()),
  text: z.string(),
  /** When the host received it (for the stream-to-paint figure). */
  at: z.number(),
});

/** Every call waiting for a decision right now (replaces the previous list). */
export const ApprovalsMessage = z.object({ type: z.literal('approvals'), pending: z.array(PendingApproval) });

/** The window's selected run (after a reload, a run started or forked here, a pick in another view): the tree, the conversation and the composer follow it. */
export const SelectedMessage = z.object({ type: z.literal('selected'), runId: z.nullable(id) });

/**
 * Whether the view should ask for a key: `missing` when the provider a new run would use is
 * Anthropic and no key is set (secret storage or the environment). Sent on ready, and when the key or the provider setting changes.
 */
export const KeyStateMessage = z.object({ type: z.literal('keyState'), missing: z.boolean() });

export const NoticeMessage = z.object({ type: z.literal('notice'), level: z.enum(['info', 'error']), text: z.string() });

export const HostToWebview = z.discriminatedUnion('type', [
  SnapshotMessage,
  RunsListedMessage,
  RunDeltaMessage,
  RunRemovedMessage,
  PatchLiveMessage,
  ReplyMessage,
  NoticeMessage,
  StreamMessage,
  ApprovalsMessage,
  SelectedMessage,
  KeyStateMessage,
]);

export type ActionOutcome = z.infer<typeof ActionOutcome>;
export type RestoreOutcome = z.infer<typeof RestoreOutcome>;
export type RollbackOutcome = z.infer<typeof RollbackOutcome>;
export type RequestMessage = z.infer<typeof RequestMessage>;
export type WebviewToHost = z.infer<typeof WebviewToHost>;
export type SnapshotMessage = z.infer<typeof SnapshotMessage>;
export type RunsListedMessage = z.infer<typeof RunsListedMessage>;
export type RunDeltaMessage = z.infer<typeof RunDeltaMessage>;
export type PatchLiveMessage = z.infer<typeof PatchLiveMessage>;
export type ReplyMessage = z.infer<typeof ReplyMessage>;
export type HostToWebview = z.infer<typeof HostToWebview>;
export type ContextChip = z.infer<typeof ContextChip>;
export type PendingApproval = z.infer<typeof PendingApproval>;
export type ApprovalChoice = z.infer<typeof ApprovalChoice>;
export type StreamMessage = z.infer<typeof StreamMessage>;

/** Parses a message or says why it was refused, in one line for the log. */
export function parseMessage<T>(schema: z.ZodMiniType<T>, data: unknown): { ok: true; value: T } | { ok: false; error: string } {
  const parsed = schema.safeParse(data);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
  return { ok: false, error: `malformed message${where}: ${issue?.message ?? 'invalid'}` };
}

/** Applies a delta to a run view (what the webview does with it). */
export function applyRunDelta(prev: RunView | undefined, delta: RunDeltaMessage): RunView {
  const kept = (prev?.steps ?? []).slice(0, delta.fromStep);
  return { header: delta.header, steps: kept.concat(delta.steps) };
}
