import type { ContentBlock } from '../../../src/core/model/messages';
import { ModelError, type ModelResponse } from '../../../src/core/model/provider';
import { ANSWER_SHAPES, type AnswerShape } from '../fake-anthropic/answers';
import { isFault, plainBlock, ResponseStep, type FaultStep } from '../fake-anthropic/script';
import type { Prng } from '../faults/prng';

// The walk's model draws some of its answers from the fake's table of documented answers
// (answers.ts), played in process: a well-formed but odd answer as a reply, a fault as the
// ModelError the Anthropic provider throws for it once its retries are spent.

/** The share of the walk model's answers drawn from the table (the issue asks for at least 10%). */
export const DRAWN_SHARE = 0.15;

/** What the provider's error mapping (core/model/errors.ts) makes of a fault, once retries are spent. */
function faultError(step: FaultStep): ModelError {
  switch (step.fault) {
    case 'status': {
      const kind =
        step.status === 401 || step.status === 403
          ? 'auth'
          : step.status === 429
            ? 'rate_limit'
            : step.status === 529
              ? 'overloaded'
              : step.status >= 500
                ? 'server'
                : 'bad_request';
      return new ModelError(`Anthropic API ${kind}: ${step.status} (a drawn answer)`, kind, step.status);
    }
    case 'stream_error':
      return new ModelError(
        `Anthropic API ${step.errorType}: mid-stream (a drawn answer)`,
        step.errorType === 'overloaded_error' ? 'overloaded' : 'server',
      );
    case 'reset':
    case 'stall':
      return new ModelError('Anthropic API network: the connection was cut (a drawn answer)', 'network');
  }
}

/** A row's content with ids of this draw (a tool_use id is unique in a conversation; a repeat in one answer stays a repeat). */
function withDrawnIds(content: readonly ContentBlock[], draw: number): ContentBlock[] {
  return content.map((block) => (block.type === 'tool_use' ? { ...block, id: `${String(block.id)}_d${draw}` } : block));
}

/** Plays one row: its reply, or throws its error. */
export function playDrawn(shape: AnswerShape, draw: number, model: string): ModelResponse {
  if (isFault(shape.step)) throw faultError(shape.step);
  const step = ResponseStep.parse(shape.step);
  const content = withDrawnIds(step.content.map(plainBlock) as ContentBlock[], draw);
  return {
    id: `msg_walk_drawn_${draw}`,
    model,
    content,
    stopReason: step.stop_reason,
    usage: { inputTokens: 300, outputTokens: 20 },
    ...(step.input_transformations
      ? { inputTransformations: step.input_transformations.map((t) => ({ type: String(t['type']), path: String(t['path']) })) }
      : {}),
  };
}

/** A row of the table, or none (most answers are the walk's own). */
export function drawAnswer(prng: Prng): AnswerShape | undefined {
  return prng.next() < DRAWN_SHARE ? prng.pick(ANSWER_SHAPES) : undefined;
}
