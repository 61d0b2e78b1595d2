import { choices, enumAfter, intAfter, lit, optionalString } from './byte-fields';
import type { Cursor } from './journal-frame';
import { CheckpointLabel, RunStatus, type Budget, type StoredRecord } from './records';

// A checkpoint record read straight from its bytes, in the arrangement the writer gives it (the
// schema's field order, as zod outputs it). Every field is checked here exactly as the
// CheckpointRecord schema checks it; a record in any other arrangement, or with any field this
// reader is not sure of (escapes in a string, a long integer, an unknown field), is left to
// JSON.parse and the schema. Checkpoints are most of a journal's records: this spares a resume
// a JSON parse and a schema walk for each.

const HEAD = lit(',"type":"checkpoint","checkpointId":');
const STEP = lit(',"stepId":');
const LABEL = lit(',"label":');
const MESSAGE_COUNT = lit(',"messageCount":');
const PATCH_COUNT = lit(',"patchCount":');
const CALL_ID = lit(',"callId":');
const STATUS = lit(',"status":');
const BUDGET = lit(',"budget":{"turns":');
const MAX_TURNS = lit(',"maxTurns":');
const INPUT_TOKENS = lit(',"inputTokens":');
const OUTPUT_TOKENS = lit(',"outputTokens":');
const TOKENS_USED = lit(',"tokensUsed":');
const COST = lit(',"costUsd":');
const MAX_TOKENS = lit(',"maxTokens":');
const MAX_COST = lit(',"maxCostUsd":');
const STOP_REASON = lit(',"stopReason":');
const CLOSE = lit('}');

const LABELS = choices(CheckpointLabel.options);
const STATUSES = choices(RunStatus.options);

function readBudget(cursor: Cursor): Budget | null {
  const turns = intAfter(cursor, BUDGET);
  const maxTurns = intAfter(cursor, MAX_TURNS);
  const inputTokens = intAfter(cursor, INPUT_TOKENS);
  const outputTokens = intAfter(cursor, OUTPUT_TOKENS);
  const tokensUsed = intAfter(cursor, TOKENS_USED);
  if (turns < 0 || maxTurns <= 0 || inputTokens < 0 || outputTokens < 0 || tokensUsed < 0 || !cursor.literal(COST)) return null;
  const costUsd = cursor.number();
  if (Number.isNaN(costUsd)) return null;
  const budget: Budget = { turns, maxTurns, inputTokens, outputTokens, tokensUsed, costUsd };
  if (cursor.literal(MAX_TOKENS)) {
    const maxTokens = cursor.integer();
    if (maxTokens <= 0) return null;
    budget.maxTokens = maxTokens;
  }
  if (cursor.literal(MAX_COST)) {
    const maxCostUsd = cursor.number();
    if (!(maxCostUsd > 0)) return null;
    budget.maxCostUsd = maxCostUsd;
  }
  return cursor.literal(CLOSE) ? budget : null;
}

// The checkpoints of one step mostly carry the same budget: a budget whose bytes equal the last
// one read is that object again (records are never mutated), sparing its parse and allocation.
// Its bytes are copied, so no journal is kept alive by this.
const BUDGET_BYTES_MAX = 512;
const lastBudget = { bytes: globalThis.Buffer.alloc(BUDGET_BYTES_MAX), length: 0, value: null as Budget | null };

function budgetAt(cursor: Cursor): Budget | null {
  const start = cursor.at;
  const last = lastBudget;
  // The cached bytes are a whole budget ending at its one `}`: equal bytes here are that budget.
  if (
    last.value &&
    start + last.length <= cursor.end &&
    cursor.bytes.compare(last.bytes, 0, last.length, start, start + last.length) === 0
  ) {
    cursor.at = start + last.length;
    return last.value;
  }
  const budget = readBudget(cursor);
  if (!budget) return null;
  if (cursor.at - start <= BUDGET_BYTES_MAX) {
    cursor.bytes.copy(last.bytes, 0, start, cursor.at);
    last.length = cursor.at - start;
    last.value = budget;
  }
  return budget;
}

/** The checkpoint record (numbered `seq`) whose fields follow `{"v":v,"at":at`, or null to leave it to the schema. */
export function readCheckpointRecord(cursor: Cursor, v: number, at: number, seq: number): StoredRecord | null {
  if (!cursor.literal(HEAD)) return null;
  const checkpointId = cursor.plainString();
  if (!checkpointId) return null;
  const stepId = intAfter(cursor, STEP);
  const label = enumAfter(cursor, LABEL, LABELS);
  const messageCount = intAfter(cursor, MESSAGE_COUNT);
  const patchCount = intAfter(cursor, PATCH_COUNT);
  if (stepId < 0 || !label || messageCount < 0 || patchCount < 0) return null;
  const callId = optionalString(cursor, CALL_ID);
  const status = enumAfter(cursor, STATUS, STATUSES);
  if (callId === null || !status) return null;
  const budget = budgetAt(cursor);
  if (!budget) return null;
  const stopReason = optionalString(cursor, STOP_REASON);
  if (stopReason === null || !cursor.literal(CLOSE) || cursor.at !== cursor.end) return null;
  // Fields in the schema's order, as zod would output them, then the sequence number; one literal per shape.
  const type = 'checkpoint';
  if (callId === undefined) {
    if (stopReason === undefined) return { v, at, type, checkpointId, stepId, label, messageCount, patchCount, status, budget, seq };
    return { v, at, type, checkpointId, stepId, label, messageCount, patchCount, status, budget, stopReason, seq };
  }
  if (stopReason === undefined) return { v, at, type, checkpointId, stepId, label, messageCount, patchCount, callId, status, budget, seq };
  return { v, at, type, checkpointId, stepId, label, messageCount, patchCount, callId, status, budget, stopReason, seq };
}
