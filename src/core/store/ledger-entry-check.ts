import type { LedgerEntry } from '../ledger/schema';
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
  'callId',
  'stepId',
  'toolName',
  'inputHash',
  'status',
  'idempotency',
  'replayPolicy',
  'sideEffects',
  'plannedAt',
  'startedAt',
  'finishedAt',
  'resultRef',
  'isError',
  'error',
  'compensation',
  'reason',
  'patchIds',
  'intents',
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

const ENTRY_ORDER = new Map([...ENTRY_KEYS].map((key, i) => [key, i]));
const INTENT_ORDER = new Map([...INTENT_KEYS].map((key, i) => [key, i]));

/** Whether raw's keys (all known) come in the schema's order: then raw is already what zod would return. */
function inOrder(raw: Raw, order: ReadonlyMap<string, number>): boolean {
  let last = -1;
  for (const key in raw) {
    const at = order.get(key)!;
    if (at < last) return false;
    last = at;
  }
  return true;
}

/** An entry as the writer writes it (the schema's order, intents too) needs no copy: JSON.parse's object is used as it is. */
function asWritten(raw: Raw): boolean {
  if (!inOrder(raw, ENTRY_ORDER)) return false;
  if (raw.intents === undefined) return true;
  for (const item of raw.intents as Raw[]) if (!inOrder(item, INTENT_ORDER)) return false;
  return true;
}

function strings(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return undefined;
  for (const item of value) if (typeof item !== 'string') return undefined;
  return value as string[];
}

function validIntent(raw: unknown): raw is Raw {
  if (!isObject(raw) || !onlyKeys(raw, INTENT_KEYS)) return false;
  const { path, beforeHash, afterHash, beforeBlob, afterBlob } = raw;
  return isString(path) && isString(beforeHash) && isString(afterHash) && optional(beforeBlob, isString) && optional(afterBlob, isString);
}

function validIntents(value: unknown): value is Raw[] {
  return Array.isArray(value) && value.every(validIntent);
}

/** Fields in the schema's order, optional ones only when present: what zod outputs. */
function ordered(raw: Raw, keys: ReadonlySet<string>): Raw {
  const out: Raw = {};
  for (const key of keys) if (raw[key] !== undefined) out[key] = raw[key];
  return out;
}

function validRequired(raw: Raw): boolean {
  const { callId, stepId, toolName, inputHash, status, idempotency, replayPolicy, plannedAt, compensation } = raw;
  if (!isString(callId) || callId.length === 0 || !Number.isSafeInteger(stepId) || (stepId as number) < 0) return false;
  if (!isString(toolName) || !isString(inputHash) || !isString(compensation) || !isNumber(plannedAt)) return false;
  return STATUSES.has(status) && IDEMPOTENCY.has(idempotency) && REPLAY.has(replayPolicy) && strings(raw.sideEffects) !== undefined;
}

function validOptional(raw: Raw): boolean {
  const { startedAt, finishedAt, resultRef, isError, error, reason } = raw;
  if (
    !optional(startedAt, isNumber) ||
    !optional(finishedAt, isNumber) ||
    !optional(resultRef, isString) ||
    !optional(error, isString) ||
    !optional(reason, isString)
  )
    return false;
  if (!optional(isError, (v) => typeof v === 'boolean')) return false;
  return (raw.patchIds === undefined || strings(raw.patchIds) !== undefined) && (raw.intents === undefined || validIntents(raw.intents));
}

/** The entry as the LedgerEntry schema would return it, or undefined to ask the schema. */
export function checkedLedgerEntry(raw: unknown): LedgerEntry | undefined {
  if (!isObject(raw) || !onlyKeys(raw, ENTRY_KEYS) || !validRequired(raw) || !validOptional(raw)) return undefined;
  if (asWritten(raw)) return raw as unknown as LedgerEntry;
  const entry = ordered(raw, ENTRY_KEYS);
  entry.sideEffects = [...(raw.sideEffects as string[])];
  if (raw.patchIds !== undefined) entry.patchIds = [...(raw.patchIds as string[])];
  if (raw.intents !== undefined) entry.intents = (raw.intents as Raw[]).map((item) => ordered(item, INTENT_KEYS));
  return entry as unknown as LedgerEntry;
}
