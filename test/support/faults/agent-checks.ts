import { isDeepStrictEqual } from 'node:util';
import type { MessageParam } from '../../../src/core/model/messages';
import { STATUS_UNKNOWN_MESSAGE } from '../../../src/core/runtime/reconcile';
import type { StoredRecord } from '../../../src/core/store/records';
import { COMMAND_CALL, EDIT_CALL, FINAL_TEXT, NOTES_AFTER, READ_CALL, resultText, toolResultsById } from './agent-script';

// What must hold after a run cut any number of times and resumed to the end.

export interface FinalFacts {
  /** Active history of the completed run. */
  readonly messages: readonly MessageParam[];
  /** Executions of the counted non-idempotent command. */
  readonly executions: number;
  /** notes.txt at the end. */
  readonly notes: string | null;
  /** The messages of every model request, in order, across every process. */
  readonly requests: readonly (readonly MessageParam[])[];
}

export interface FinalVerdict {
  readonly problems: string[];
  /** Executions beyond one per call. */
  readonly duplicates: number;
}

export function checkFinal(facts: FinalFacts): FinalVerdict {
  const problems: string[] = [];
  const duplicates = Math.max(0, facts.executions - 1);
  if (duplicates > 0) problems.push(`the non-idempotent command ran ${facts.executions} times`);
  const results = toolResultsById(facts.messages);
  for (const id of [READ_CALL, EDIT_CALL, COMMAND_CALL]) {
    const count = results.get(id)?.length ?? 0;
    if (count !== 1) problems.push(`${id} has ${count} tool_result blocks`);
  }
  for (const [id, blocks] of results) if (blocks.length !== 1) problems.push(`${id} has ${blocks.length} tool_result blocks`);
  const command = results.get(COMMAND_CALL)?.[0];
  if (command) {
    const unknown = command.is_error === true && resultText(command).includes(STATUS_UNKNOWN_MESSAGE.slice(0, 40));
    if (facts.executions === 0 && !unknown)
      problems.push(`the command never ran but the model was told: ${resultText(command).slice(0, 120)}`);
    if (facts.executions === 1 && command.is_error === true && !unknown)
      problems.push(`the command ran once but the model got an error: ${resultText(command).slice(0, 120)}`);
  }
  if (facts.notes !== NOTES_AFTER) problems.push(`notes.txt is ${JSON.stringify(facts.notes)}`);
  const last = facts.messages[facts.messages.length - 1];
  if (!last || last.role !== 'assistant' || !JSON.stringify(last.content).includes(FINAL_TEXT))
    problems.push('the run did not end on the final answer');
  problems.push(...checkRequestsExtend(facts.requests));
  return { problems, duplicates };
}

/**
 * A message as the run holds it: prompt caching marks (cache_control) are decoration of one
 * request, put on its latest messages, so they are left out, and a string content is its text block.
 */
function asStored(message: MessageParam): unknown {
  const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
  return {
    role: message.role,
    content: blocks.map((block) => {
      const { cache_control: _mark, ...rest } = block as Record<string, unknown>;
      return rest;
    }),
  };
}

/**
 * Every message sent to the model was durable before it was sent, so each request's messages
 * are a byte-identical prefix of every later request's (a resume adds, never rewrites).
 */
export function checkRequestsExtend(requests: readonly (readonly MessageParam[])[]): string[] {
  for (let i = 1; i < requests.length; i++) {
    const before = requests[i - 1]!.map(asStored);
    const after = requests[i]!.map(asStored);
    const prefix = after.slice(0, before.length);
    if (before.length > after.length || !isDeepStrictEqual(JSON.stringify(prefix), JSON.stringify(before))) {
      return [`request ${i + 1} does not extend request ${i} byte for byte`];
    }
  }
  return [];
}

/** The journal after a cut holds every acknowledged record, unchanged, at its sequence number. */
export function checkAcknowledged(recovered: readonly StoredRecord[], acknowledged: ReadonlyMap<number, StoredRecord>): string[] {
  for (const [seq, record] of acknowledged) {
    const found = recovered[seq - 1];
    if (!found || !isDeepStrictEqual(JSON.parse(JSON.stringify(found)), JSON.parse(JSON.stringify(record)))) {
      return [
        `acknowledged record ${seq} (${record.type}) is ${found ? 'different' : 'missing'} after recovery (${recovered.length} records)`,
      ];
    }
  }
  return [];
}
