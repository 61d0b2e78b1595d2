import type { FileIntent, LedgerEntry } from '../ledger/schema';
import { Idempotency, LedgerStatus, ReplayPolicy } from '../ledger/schema';

// The LedgerEntry schema checked by hand on a JSON.parse result, for the entries a resume decodes.
// It accepts only what the schema accepts and returns what zod returns (a fresh object, fields in
// the schema's order); anything it is not sure of (an unknown field, a wrong type) returns
// undefined and is left to the schema itself, which also words the error. A test holds the two to
// the same answers on generated entries.

type Raw = Record<string, unknown>;

const STATUSES: ReadonlySet<unknown> = new Set(LedgerStatus.options);
const IDEMPOTENCY: ReadonlySet<unknown> = new Set(Idempotency.options);
const REPLAY: ReadonlySet<unknown> = new Set(ReplayPolicy.options);
const ENTRY_KEYS: ReadonlySet<string> = new Set([
  'callId', 'stepId', 'toolName', 'inputHash', 'status', 'idempotency', 'replayPolicy', 'sideEffects', 'plannedAt', 'startedAt',
  'finishedAt', 'resultRef', 'isError', 'error', 'compensation', 'reason', 'patchIds', 'intents',
]);
const INTENT_KEYS: ReadonlySet<string> = new Set(['path', 'beforeHash', 'afterHash', 'beforeBlob', 'afterBlob']);

const isObject = (value: unknown): value is Raw => typeof value === 'object' && value !== null && !Array.isArray(value);
const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const optional = (value: unknown, check: (v: unknown) => boolean): boolean => value === undefined || check(value);
const isString = (value: unknown): value is string => typeof value === 'string';

function onlyKeys(raw: Raw, known: ReadonlySet<string>): boolean {
  for (const key in raw) if (!known.has(key)) return false;
  return true;
}

function strings(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return undefined;
  for (const item of value) if (typeof item !== 'string') return undefined;
  return value as string[];
}

function intent(raw: unknown): FileIntent | undefined {
  if (!isObject(raw) || !onlyKeys(raw, INTENT_KEYS)) return undefined;
  const { path, beforeHash, afterHash, beforeBlob, afterBlob } = raw;
  if (!isString(path) || !isString(beforeHash) || !isString(afterHash) || !optional(beforeBlob, isString) || !optional(afterBlob, isString)) return undefined;
  const out: FileIntent = { path, beforeHash, afterHash };
  if (beforeBlob !== undefined) out.beforeBlob = beforeBlob as string;
  if (afterBlob !== undefined) out.afterBlob = afterBlob as string;
  return out;
}

function intents(value: unknown): FileIntent[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const out: FileIntent[] = [];
  for (const item of value) {
    const checked = intent(item);
    if (!checked) return undefined;
    out.push(checked);
  }
  return out;
}

function requiredFields(raw: Raw): LedgerEntry | undefined {
  const { callId, stepId, toolName, inputHash, status, idempotency, replayPolicy, plannedAt, compensation } = raw;
  if (!isString(callId) || callId.length === 0 || !Number.isSafeInteger(stepId) || (stepId as number) < 0) return undefined;
  if (!isString(toolName) || !isString(inputHash) || !isString(compensation) || !isNumber(plannedAt)) return undefined;
  if (!STATUSES.has(status) || !IDEMPOTENCY.has(idempotency) || !REPLAY.has(replayPolicy)) return undefined;
  const sideEffects = strings(raw.sideEffects);
  if (!sideEffects) return undefined;
  return {
    callId, stepId: stepId as number, toolName, inputHash, status: status as LedgerEntry['status'], idempotency: idempotency as LedgerEntry['idempotency'],
    replayPolicy: replayPolicy as LedgerEntry['replayPolicy'], sideEffects: [...sideEffects], plannedAt,
  } as LedgerEntry;
}

/** The entry as the LedgerEntry schema would return it, or undefined to ask the schema. */
export function checkedLedgerEntry(raw: unknown): LedgerEntry | undefined {
  if (!isObject(raw) || !onlyKeys(raw, ENTRY_KEYS)) return undefined;
  const head = requiredFields(raw);
  if (!head) return undefined;
  const { startedAt, finishedAt, resultRef, isError, error, reason } = raw;
  if (!optional(startedAt, isNumber) || !optional(finishedAt, isNumber) || !optional(resultRef, isString) || !optional(error, isString) || !optional(reason, isString)) return undefined;
  if (!optional(isError, (v) => typeof v === 'boolean')) return undefined;
  const patchIds = raw.patchIds === undefined ? undefined : strings(raw.patchIds);
  const fileIntents = raw.intents === undefined ? undefined : intents(raw.intents);
  if ((raw.patchIds !== undefined && !patchIds) || (raw.intents !== undefined && !fileIntents)) return undefined;
  // Fields in the schema's order, as zod outputs them.
  const entry = head as unknown as Raw;
  if (startedAt !== undefined) entry.startedAt = startedAt;
  if (finishedAt !== undefined) entry.finishedAt = finishedAt;
  if (resultRef !== undefined) entry.resultRef = resultRef;
  if (isError !== undefined) entry.isError = isError;
  if (error !== undefined) entry.error = error;
  entry.compensation = raw.compensation;
  if (reason !== undefined) entry.reason = reason;
  if (patchIds) entry.patchIds = [...patchIds];
  if (fileIntents) entry.intents = fileIntents;
  return entry as LedgerEntry;
}
