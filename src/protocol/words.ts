import type { ContentBlock, MessageParam } from '../core/model/messages';

// A run's steps and calls in words: what the model said and what each call did, from the
// active history. Pure; build.ts puts the results into the view model.

/** Caps on what crosses to the webview per step and per call (the rest stays on disk). */
export const TEXT_MAX = 20_000;
export const RESULT_MAX = 20_000;
export const INPUT_TEXT_MAX = 4_000;

/** "1 change", "3 changes": a count with its noun in the right number. */
export function counted(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}

export function cap(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}\n… (${text.length - max} more characters)` : text;
}

function stringField(input: unknown, key: string): string | undefined {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return undefined;
  const value = (input as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}

function oneLine(text: string, max = 70): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** "exit 1", "timed out", from a run_command result's first line. */
export function commandOutcome(result: string | undefined): string | undefined {
  const first = result?.split('\n', 1)[0] ?? '';
  const exit = /^exit code (-?\d+)/.exec(first);
  if (exit) return `exit ${exit[1]}`;
  if (first.startsWith('timed out')) return 'timed out';
  if (first.startsWith('cancelled')) return 'cancelled';
  if (first.startsWith('killed by signal')) return first.split(' after ')[0];
  return undefined;
}

/**
 * What the sandbox stopped, in a command's result (the `--- sandbox ---` part the host writes):
 * "blocked by the sandbox: .vscode is read-only (protected path ...)", or the first sentence of a
 * refusal to start; undefined when it stopped nothing.
 */
export function sandboxBlock(result: string | undefined): string | undefined {
  const at = result?.lastIndexOf('\n--- sandbox ---\n') ?? -1;
  if (result === undefined || at < 0) return undefined;
  const lines = result.slice(at + '\n--- sandbox ---\n'.length).split('\n');
  const listed = lines.indexOf(lines.find((l) => / These paths are read-only there:$/.test(l)) ?? '\0');
  const first = listed >= 0 ? /^ {2}(.+?): (.+)$/.exec(lines[listed + 1] ?? '') : null;
  if (first) return `blocked by the sandbox: ${first[1]} is read-only (${first[2]})`;
  const refused = lines.find((l) => l.includes('so the command did not run'));
  return refused !== undefined ? `blocked by the sandbox: ${oneLine(refused.split(';')[0] ?? refused, 120)}` : undefined;
}

/** How a person allows what the sandbox stopped, said beside the block. */
export const SANDBOX_WAY_OUT =
  'to allow it, ask the agent to make the change with write_file or edit_file (you approve each), or switch the sandbox off (agentCheckpoints.sandbox, --no-sandbox)';

export interface CallFacts {
  readonly toolName: string;
  readonly input: unknown;
  readonly result?: string;
  /** Lines added and removed by the call's patches. */
  readonly added: number;
  readonly removed: number;
  readonly hasPatches: boolean;
  readonly denied: boolean;
}

function fileVerb(toolName: string): string | undefined {
  return { edit_file: 'edit', write_file: 'write', delete_file: 'delete', read_file: 'read', list_dir: 'list' }[toolName];
}

/** What a call did in human terms: "edit src/greet.js +1 -1", "run `node test.js` -> exit 1". */
export function describeCall(call: CallFacts): string {
  const path = stringField(call.input, 'path');
  const verb = fileVerb(call.toolName);
  let text: string;
  if (verb !== undefined && path !== undefined) {
    const counts = call.hasPatches && verb !== 'read' && verb !== 'list' ? ` +${call.added} -${call.removed}` : '';
    text = `${verb} ${oneLine(path)}${counts}`;
  } else if (call.toolName === 'run_command') {
    const outcome = sandboxBlock(call.result) ?? commandOutcome(call.result);
    text = `run \`${oneLine(stringField(call.input, 'command') ?? '')}\`${outcome ? ` -> ${outcome}` : ''}`;
  } else if (call.toolName === 'search_text' || call.toolName === 'find_files') {
    const pattern = stringField(call.input, 'pattern') ?? stringField(call.input, 'query') ?? stringField(call.input, 'glob') ?? '';
    text = `${call.toolName === 'search_text' ? 'search' : 'find'} "${oneLine(pattern, 50)}"`;
  } else text = call.toolName;
  return call.denied ? `${text} (denied)` : text;
}

function blockText(content: ContentBlock[] | string | undefined, type: 'text' | 'thinking'): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return type === 'text' ? content : '';
  const parts: string[] = [];
  for (const block of content) {
    const record = block as Record<string, unknown>;
    if (block.type === type && typeof record[type] === 'string') parts.push(record[type]);
  }
  return parts.join('\n\n');
}

/** Text of a tool_result block's content. */
export function resultText(content: unknown, added: (text: string) => boolean = () => false): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b: unknown) =>
      b && typeof b === 'object' && typeof (b as { text?: unknown }).text === 'string' ? (b as { text: string }).text : '',
    )
    .filter((t) => t !== '' && !added(t))
    .join('\n');
}

/** Every tool result of the history by call id, without the text blocks `added` says the runtime added (its notes). */
export function toolResults(messages: readonly MessageParam[], added?: (text: string) => boolean): Map<string, string> {
  const results = new Map<string, string>();
  for (const message of messages) {
    if (message.role !== 'user' || typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (block.type !== 'tool_result') continue;
      const id = (block as { tool_use_id?: unknown }).tool_use_id;
      if (typeof id === 'string') results.set(id, resultText((block as { content?: unknown }).content, added));
    }
  }
  return results;
}

/**
 * What the model said (and thought) in the assistant messages of `messages[from, to)`. An answer
 * with no text whose thinking holds words said them: the default model writes its words between
 * tool calls inside thinking blocks, and those are shown, not folded away as thinking.
 */
export function assistantWords(messages: readonly MessageParam[], from: number, to: number): { text: string; thinking: string } {
  const texts: string[] = [];
  const thoughts: string[] = [];
  for (let i = Math.max(0, from); i < Math.min(to, messages.length); i++) {
    const message = messages[i]!;
    if (message.role !== 'assistant') continue;
    const text = blockText(message.content, 'text').trim();
    const thinking = blockText(message.content, 'thinking').trim();
    if (text !== '') texts.push(text);
    if (thinking !== '') (text === '' ? texts : thoughts).push(thinking);
  }
  return { text: texts.join('\n\n'), thinking: thoughts.join('\n\n') };
}

/**
 * The person's own words in `messages[from, to)` (a follow-up instruction), tool results left out,
 * and text blocks that `added` says the runtime added (its notes to the model) too.
 */
export function userWords(
  messages: readonly MessageParam[],
  from: number,
  to: number,
  added: (text: string) => boolean = () => false,
): string {
  const texts: string[] = [];
  for (let i = Math.max(0, from); i < Math.min(to, messages.length); i++) {
    const { role, content } = messages[i]!;
    if (role !== 'user') continue;
    const blocks = typeof content === 'string' ? [content] : content.flatMap((b) => (b.type === 'text' ? [blockText([b], 'text')] : []));
    for (const block of blocks) if (block.trim() !== '' && !added(block)) texts.push(block.trim());
  }
  return texts.join('\n\n');
}
