import { z } from 'zod';
import { PatchView, RestoreFile, RestoreMode, RestorePreview, RunHeader, RunView, StepRow } from './viewModel';

// Every message between the Timeline webview and the extension host. Both sides parse what
// they receive with these schemas; anything that does not parse is logged and dropped.

const RunRef = z.object({ runId: z.string().min(1) });
const PatchRef = z.object({ runId: z.string().min(1), patchId: z.string().min(1) });
const CheckpointRef = z.object({ runId: z.string().min(1), checkpointId: z.string().min(1), mode: RestoreMode });

/** Parameters of each request the webview can make, by method. */
export const RequestParams = {
  restorePreview: CheckpointRef,
  restore: CheckpointRef.extend({ previewId: z.string().min(1) }),
  openDiff: PatchRef,
  accept: PatchRef,
  rollbackPatch: PatchRef.extend({ hunk: z.number().int().nonnegative().optional() }),
  undoLastRestore: RunRef,
  resume: RunRef,
  takeOver: RunRef,
  cancel: RunRef,
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
  revertedHunks: z.number().int().nonnegative(),
  conflictHunks: z.number().int().nonnegative(),
});

/** Result schema of each method. */
export const ResultSchemas = {
  restorePreview: RestorePreview,
  restore: RestoreOutcome,
  openDiff: ActionOutcome,
  accept: ActionOutcome,
  rollbackPatch: RollbackOutcome,
  undoLastRestore: RestoreOutcome,
  resume: ActionOutcome,
  takeOver: ActionOutcome,
  cancel: ActionOutcome,
} as const satisfies Record<Method, z.ZodType>;

export type RequestParamsOf<M extends Method> = z.infer<(typeof RequestParams)[M]>;
export type ResultOf<M extends Method> = z.infer<(typeof ResultSchemas)[M]>;

const requestId = z.string().min(1).max(100);

function requestVariant<M extends Method>(method: M) {
  return z.object({ type: z.literal('request'), requestId, method: z.literal(method), params: RequestParams[method] });
}

export const RequestMessage = z.discriminatedUnion('method', [
  requestVariant('restorePreview'),
  requestVariant('restore'),
  requestVariant('openDiff'),
  requestVariant('accept'),
  requestVariant('rollbackPatch'),
  requestVariant('undoLastRestore'),
  requestVariant('resume'),
  requestVariant('takeOver'),
  requestVariant('cancel'),
]);

export const ReadyMessage = z.object({ type: z.literal('ready') });

export const WebviewToHost = z.union([ReadyMessage, RequestMessage]);

export const SnapshotMessage = z.object({ type: z.literal('snapshot'), runs: z.array(RunView) });

/** A run's header, and its steps from `fromStep` on replacing what the webview holds. */
export const RunDeltaMessage = z.object({
  type: z.literal('runDelta'),
  header: RunHeader,
  fromStep: z.number().int().nonnegative(),
  steps: z.array(StepRow),
});

export const RunRemovedMessage = z.object({ type: z.literal('runRemoved'), runId: z.string().min(1) });

export const PatchLiveMessage = z.object({
  type: z.literal('patchLive'),
  runId: z.string().min(1),
  changes: z.array(z.object({ patchId: z.string().min(1), state: PatchView })),
});

/** `{requestId, ok: true, result}` or `{requestId, ok: false, error}`. */
export const ReplyMessage = z
  .object({ type: z.literal('reply'), requestId, ok: z.boolean(), result: z.unknown().optional(), error: z.string().optional() })
  .refine((r) => (r.ok ? r.error === undefined : typeof r.error === 'string' && r.result === undefined), {
    message: 'a reply carries a result when ok, an error otherwise',
  });

export const NoticeMessage = z.object({ type: z.literal('notice'), level: z.enum(['info', 'error']), text: z.string() });

export const HostToWebview = z.discriminatedUnion('type', [
  SnapshotMessage,
  RunDeltaMessage,
  RunRemovedMessage,
  PatchLiveMessage,
  ReplyMessage,
  NoticeMessage,
]);

export type ActionOutcome = z.infer<typeof ActionOutcome>;
export type RestoreOutcome = z.infer<typeof RestoreOutcome>;
export type RollbackOutcome = z.infer<typeof RollbackOutcome>;
export type RequestMessage = z.infer<typeof RequestMessage>;
export type WebviewToHost = z.infer<typeof WebviewToHost>;
export type SnapshotMessage = z.infer<typeof SnapshotMessage>;
export type RunDeltaMessage = z.infer<typeof RunDeltaMessage>;
export type PatchLiveMessage = z.infer<typeof PatchLiveMessage>;
export type ReplyMessage = z.infer<typeof ReplyMessage>;
export type HostToWebview = z.infer<typeof HostToWebview>;

/** Parses a message or says why it was refused, in one line for the log. */
export function parseMessage<T>(schema: z.ZodType<T>, data: unknown): { ok: true; value: T } | { ok: false; error: string } {
  const parsed = schema.safeParse(data);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
  return { ok: false, error: `malformed message${where}: ${issue?.message ?? 'invalid'}` };
}
