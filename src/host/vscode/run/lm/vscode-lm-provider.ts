import * as vscode from 'vscode';
import type { ContentBlock, MessageParam, ToolResultBlock } from '../../../../core/model/messages';
import { ModelError, type ModelEvent, type ModelProvider, type ModelRequest, type ModelResponse } from '../../../../core/model/provider';
import { errorText } from '../../../../core/error-text';
import { LANGUAGE_MODEL_PROVIDER } from '../../../node/agent-host/provider';

// Provider `vscode-lm`: any chat model the editor offers (vscode.lm.selectChatModels), with tool
// calling and streaming. The run keeps its messages in its own (Messages API) format; they are
// turned into VS Code chat messages for each request, so a run resumes on this provider after a reload.

export const VSCODE_LM_PROVIDER = LANGUAGE_MODEL_PROVIDER;

function resultText(block: ToolResultBlock): string {
  const text =
    typeof block.content === 'string'
      ? block.content
      : (block.content ?? [])
          .map((part) => (part.type === 'text' && typeof part['text'] === 'string' ? part['text'] : `[${part.type}]`))
          .join('\n');
  return block.is_error === true ? `error: ${text}` : text;
}

function blocksOf(message: MessageParam): readonly ContentBlock[] {
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
}

/** The run's messages as VS Code chat messages: text, tool calls and tool results; other blocks (thinking) are left out. */
export function toChatMessages(system: string | undefined, messages: readonly MessageParam[]): vscode.LanguageModelChatMessage[] {
  const out: vscode.LanguageModelChatMessage[] = [];
  // The stable API has no system role: the instructions open the conversation as a user message.
  if (system !== undefined && system !== '') out.push(vscode.LanguageModelChatMessage.User(system));
  for (const message of messages) {
    if (message.role === 'assistant') {
      const parts = blocksOf(message).flatMap((b): (vscode.LanguageModelTextPart | vscode.LanguageModelToolCallPart)[] => {
        if (b.type === 'text' && typeof b['text'] === 'string') return [new vscode.LanguageModelTextPart(b['text'])];
        if (b.type === 'tool_use')
          return [new vscode.LanguageModelToolCallPart(String(b['id']), String(b['name']), (b['input'] ?? {}) as object)];
        return [];
      });
      out.push(vscode.LanguageModelChatMessage.Assistant(parts.length > 0 ? parts : [new vscode.LanguageModelTextPart(' ')]));
    } else {
      const parts = blocksOf(message).flatMap((b): (vscode.LanguageModelTextPart | vscode.LanguageModelToolResultPart)[] => {
        if (b.type === 'text' && typeof b['text'] === 'string') return [new vscode.LanguageModelTextPart(b['text'])];
        if (b.type === 'tool_result') {
          const block = b as ToolResultBlock;
          return [new vscode.LanguageModelToolResultPart(block.tool_use_id, [new vscode.LanguageModelTextPart(resultText(block))])];
        }
        return [];
      });
      out.push(vscode.LanguageModelChatMessage.User(parts.length > 0 ? parts : [new vscode.LanguageModelTextPart(' ')]));
    }
  }
  return out;
}

function modelError(error: unknown): ModelError {
  if (error instanceof ModelError) return error;
  const message = errorText(error);
  if (error instanceof vscode.LanguageModelError) {
    if (error.code === vscode.LanguageModelError.NoPermissions.name) return new ModelError(message, 'auth');
    if (error.code === vscode.LanguageModelError.Blocked.name) return new ModelError(message, 'rate_limit');
    if (error.code === vscode.LanguageModelError.NotFound.name) return new ModelError(message, 'bad_request');
  }
  if (error instanceof vscode.CancellationError) return new ModelError(message, 'aborted');
  return new ModelError(message, 'server');
}

async function tokens(model: vscode.LanguageModelChat, items: readonly (string | vscode.LanguageModelChatMessage)[]): Promise<number> {
  try {
    const counts = await Promise.all(items.map((item) => model.countTokens(item)));
    return counts.reduce((a, b) => a + b, 0);
  } catch {
    return 0;
  }
}

async function readStream(response: vscode.LanguageModelChatResponse, onEvent?: (event: ModelEvent) => void): Promise<ContentBlock[]> {
  const content: ContentBlock[] = [];
  let text = '';
  const flush = (): void => {
    if (text !== '') content.push({ type: 'text', text });
    text = '';
  };
  for await (const part of response.stream) {
    if (part instanceof vscode.LanguageModelTextPart) {
      text += part.value;
      onEvent?.({ type: 'text', text: part.value });
    } else if (part instanceof vscode.LanguageModelToolCallPart) {
      flush();
      content.push({ type: 'tool_use', id: part.callId, name: part.name, input: part.input });
      onEvent?.({ type: 'tool_use_start', name: part.name, id: part.callId });
    }
  }
  flush();
  return content;
}

export function createVscodeLmProvider(): ModelProvider {
  return {
    name: VSCODE_LM_PROVIDER,
    async complete(request: ModelRequest, onEvent?: (event: ModelEvent) => void): Promise<ModelResponse> {
      const [model] = await vscode.lm.selectChatModels({ id: request.model });
      if (model === undefined)
        throw new ModelError(`VS Code offers no chat model with id "${request.model}" (Agent: Choose Model...)`, 'bad_request');
      const messages = toChatMessages(request.system, request.messages);
      const cancel = new vscode.CancellationTokenSource();
      const onAbort = (): void => cancel.cancel();
      request.signal?.addEventListener('abort', onAbort);
      try {
        if (request.signal?.aborted === true) throw new ModelError('aborted', 'aborted');
        const options: vscode.LanguageModelChatRequestOptions = {
          justification: 'Agent Checkpoints runs the task you gave it with this model.',
          tools: request.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.input_schema })),
        };
        const response = await model.sendRequest(messages, options, cancel.token);
        const content = await readStream(response, onEvent);
        const outputText = content.map((b) => (b.type === 'text' ? String(b['text']) : JSON.stringify(b['input'] ?? {}))).join('');
        const usage = { inputTokens: await tokens(model, messages), outputTokens: await tokens(model, [outputText]) };
        const stopReason = content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
        return { id: `vscode-lm-${Date.now().toString(36)}`, model: model.id, content, stopReason, usage };
      } catch (error) {
        throw request.signal?.aborted === true ? new ModelError('aborted', 'aborted') : modelError(error);
      } finally {
        request.signal?.removeEventListener('abort', onAbort);
        cancel.dispose();
      }
    },
  };
}

/** The chat models VS Code offers, for the model picker. */
export async function vscodeChatModels(): Promise<{ id: string; label: string; description: string }[]> {
  const models = await vscode.lm.selectChatModels();
  return models.map((m) => ({
    id: m.id,
    label: m.name,
    description: `${m.vendor} · ${m.family} · ${m.maxInputTokens} input tokens (VS Code)`,
  }));
}

/** The input window of the VS Code chat model with this id (its `maxInputTokens`), or undefined when it is not offered. */
export async function chatModelInputLimit(id: string): Promise<number | undefined> {
  const [model] = await vscode.lm.selectChatModels({ id });
  return model !== undefined && model.maxInputTokens > 0 ? model.maxInputTokens : undefined;
}
