import { z } from 'zod';
import { ContentBlock, TextBlock, ToolUseBlock } from './messages';
import { ModelError, type ModelEvent, type ModelProvider, type ModelRequest, type ModelResponse } from './provider';
import { errorText } from '../error-text';

/** ContentBlock lets any typed block through; a script's text and tool_use blocks must be whole. */
function checkKnownBlocks(blocks: readonly ContentBlock[], ctx: z.RefinementCtx): void {
  blocks.forEach((block, index) => {
    const schema = block.type === 'text' ? TextBlock : block.type === 'tool_use' ? ToolUseBlock : undefined;
    const result = schema?.safeParse(block);
    if (result && !result.success) {
      const issue = result.error.issues[0];
      ctx.addIssue({ code: 'custom', path: [index, ...(issue?.path ?? [])], message: issue?.message ?? `bad ${block.type} block` });
    }
  });
}

/** One line of a replay script: a Messages API response as the API returns it. */
export const ReplayLine = z.object({
  id: z.string().min(1).optional(),
  type: z.literal('message').optional(),
  role: z.literal('assistant').optional(),
  model: z.string().min(1).optional(),
  content: z.array(ContentBlock).min(1).superRefine(checkKnownBlocks),
  stop_reason: z.string().min(1),
  usage: z
    .looseObject({
      input_tokens: z.number().int().nonnegative(),
      output_tokens: z.number().int().nonnegative(),
      cache_read_input_tokens: z.number().int().nonnegative().nullish(),
      cache_creation_input_tokens: z.number().int().nonnegative().nullish(),
    })
    .optional(),
});
export type ReplayLine = z.infer<typeof ReplayLine>;

export class ReplayScriptError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
    this.name = 'ReplayScriptError';
  }
}

export interface ReplayProviderOptions {
  /** Names the script in errors (a file path, say). */
  readonly source?: string;
  /** Model reported when a line names none. */
  readonly model?: string;
}

/** Parses a JSONL replay script; blank lines are skipped, line numbers are 1-based. */
export function parseReplayScript(jsonlText: string, source = 'replay script'): ModelResponse[] {
  const responses: ModelResponse[] = [];
  jsonlText.split(/\r?\n/).forEach((text, index) => {
    if (text.trim() === '') return;
    const lineNo = index + 1;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new ReplayScriptError(`${source}, line ${lineNo}: not JSON (${errorText(error)})`, lineNo);
    }
    const parsed = ReplayLine.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
      throw new ReplayScriptError(`${source}, line ${lineNo}: not a Messages API response${where}: ${issue?.message ?? 'invalid'}`, lineNo);
    }
    responses.push(toResponse(parsed.data, responses.length));
  });
  if (responses.length === 0) throw new ReplayScriptError(`${source}: no responses`, 0);
  return responses;
}

function toResponse(line: ReplayLine, index: number): ModelResponse {
  const usage = line.usage;
  return {
    id: line.id ?? `msg_replay_${index + 1}`,
    model: line.model ?? '',
    content: line.content,
    stopReason: line.stop_reason,
    usage: {
      inputTokens: usage?.input_tokens ?? 0,
      outputTokens: usage?.output_tokens ?? 0,
      ...(usage?.cache_read_input_tokens != null ? { cacheReadInputTokens: usage.cache_read_input_tokens } : {}),
      ...(usage?.cache_creation_input_tokens != null ? { cacheCreationInputTokens: usage.cache_creation_input_tokens } : {}),
    },
  };
}

/**
 * Plays recorded responses. Response i answers the request that already holds i assistant
 * messages, so a run resumed after a crash (a longer history) continues at the right line and
 * asking the same question twice gets the same answer.
 */
export function createReplayProvider(jsonlText: string, options: ReplayProviderOptions = {}): ModelProvider {
  const source = options.source ?? 'replay script';
  const responses = parseReplayScript(jsonlText, source);
  return {
    name: 'replay',
    async complete(request: ModelRequest, onEvent?: (event: ModelEvent) => void): Promise<ModelResponse> {
      if (request.signal?.aborted) throw new ModelError('replay: request aborted', 'aborted');
      const index = request.messages.filter((m) => m.role === 'assistant').length;
      const response = responses[index];
      if (!response) {
        throw new ModelError(
          `replay: ${source} is exhausted: the request holds ${index} assistant messages but the script has only ${responses.length} responses`,
          'invalid_response',
        );
      }
      emitProgress(response, onEvent);
      // A copy: the runtime owns what it is given and must not be able to alter the script.
      return { ...structuredClone(response), model: response.model || options.model || request.model || 'replay' };
    },
  };
}

function emitProgress(response: ModelResponse, onEvent: ((event: ModelEvent) => void) | undefined): void {
  if (!onEvent) return;
  for (const block of response.content) {
    try {
      if (block.type === 'text' && typeof block['text'] === 'string') onEvent({ type: 'text', text: block['text'] });
      if (block.type === 'tool_use') onEvent({ type: 'tool_use_start', name: String(block['name']), id: String(block['id']) });
    } catch {
      // Progress listeners must never break a model call.
    }
  }
}
