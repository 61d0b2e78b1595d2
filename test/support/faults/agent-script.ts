import type { ContentBlock, MessageParam } from '../../../src/core/model/messages';
import type { ModelProvider, ModelRequest, ModelResponse } from '../../../src/core/model/provider';
import type { RecordedRequest, Responder, ResponseStep } from '../fake-anthropic/server';
import { strictModel, type StrictModel } from '../fake-anthropic/strict-model';

// The model's side of every fault run: a short script answered by the number of assistant
// messages in the request, so that a resumed run continues where it stopped.
//   answer 0: read_file notes.txt
//   answer 1: edit_file notes.txt + run_command (the COUNTED non-idempotent call) in one step
//   answer 2: plain text, end_turn

export const NOTES_FILE = 'notes.txt';
export const NOTES_BEFORE = 'title: crash test\ncount = 1\n';
export const NOTES_AFTER = 'title: crash test\ncount = 2\n';
export const READ_CALL = 'toolu_faults_read';
export const EDIT_CALL = 'toolu_faults_edit';
export const COMMAND_CALL = 'toolu_faults_command';
export const FINAL_TEXT = 'All done: notes.txt edited and the counter appended.';

export function counterCommand(counterPath: string): string {
  return `echo ${COMMAND_CALL} >> '${counterPath}'`;
}

type Block = ResponseStep['content'][number];

export function scriptAnswer(assistantCount: number, counterPath: string): { content: Block[]; stop_reason: string } {
  if (assistantCount === 0) {
    return {
      content: [
        { type: 'text', text: 'Reading the notes.' },
        { type: 'tool_use', id: READ_CALL, name: 'read_file', input: { path: NOTES_FILE } },
      ],
      stop_reason: 'tool_use',
    };
  }
  if (assistantCount === 1) {
    return {
      content: [
        {
          type: 'tool_use',
          id: EDIT_CALL,
          name: 'edit_file',
          input: { path: NOTES_FILE, old_string: 'count = 1', new_string: 'count = 2' },
        },
        { type: 'tool_use', id: COMMAND_CALL, name: 'run_command', input: { command: counterCommand(counterPath) } },
      ],
      stop_reason: 'tool_use',
    };
  }
  return { content: [{ type: 'text', text: FINAL_TEXT }], stop_reason: 'end_turn' };
}

export function assistantCount(messages: readonly { role: string }[]): number {
  return messages.filter((m) => m.role === 'assistant').length;
}

/** The fake Anthropic server's responder for this script. */
export function scriptResponder(counterPath: string): Responder {
  return (request: RecordedRequest) => {
    const messages = (request.body as { messages?: { role: string }[] } | undefined)?.messages ?? [];
    const answer = scriptAnswer(assistantCount(messages), counterPath);
    return { ...answer, usage: { input_tokens: 120, output_tokens: 30 } };
  };
}

/** The same script as an in-process ModelProvider, held to the API's rules; it keeps every request's messages. */
export function scriptModel(counterPath: string): StrictModel<ModelProvider & { requests: MessageParam[][] }> {
  const requests: MessageParam[][] = [];
  let n = 0;
  return strictModel({
    name: 'fault-script',
    requests,
    async complete(request: ModelRequest): Promise<ModelResponse> {
      requests.push(JSON.parse(JSON.stringify(request.messages)) as MessageParam[]);
      const answer = scriptAnswer(assistantCount(request.messages), counterPath);
      n += 1;
      return {
        id: `msg_faults_${n}`,
        model: request.model,
        content: answer.content as ContentBlock[],
        stopReason: answer.stop_reason,
        usage: { inputTokens: 120, outputTokens: 30 },
      };
    },
  });
}

interface ToolResultLike {
  readonly type: string;
  readonly id?: string;
  readonly tool_use_id?: string;
  readonly is_error?: boolean;
  readonly content?: unknown;
}

/** Every tool_use id of the messages with the tool_result blocks answering it. */
export function toolResultsById(messages: readonly MessageParam[]): Map<string, ToolResultLike[]> {
  const results = new Map<string, ToolResultLike[]>();
  for (const message of messages) {
    if (typeof message.content === 'string') continue;
    for (const block of message.content as readonly ToolResultLike[]) {
      if (message.role === 'assistant' && block.type === 'tool_use' && block.id !== undefined)
        results.set(block.id, results.get(block.id) ?? []);
      if (block.type === 'tool_result' && block.tool_use_id !== undefined)
        results.set(block.tool_use_id, [...(results.get(block.tool_use_id) ?? []), block]);
    }
  }
  return results;
}

export function resultText(block: ToolResultLike): string {
  if (typeof block.content === 'string') return block.content;
  if (Array.isArray(block.content)) return block.content.map((b: { text?: string }) => b.text ?? '').join('');
  return '';
}
