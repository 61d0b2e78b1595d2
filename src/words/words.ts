// Words every surface shares (the Timeline, the CLI, notifications, the webview): counts, a call in
// human terms, a command's outcome, what the sandbox stopped. No imports but the plan's words.

import { planCallWords } from './plan-words';

/** "1 change", "3 changes": a count with its noun in the right number. */
export function counted(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}

/** "made executable" / "no longer executable" for a patch that changes the executable bit of a file kept on both sides; undefined otherwise. */
export function modeWords(bits: { readonly execBefore?: boolean; readonly execAfter?: boolean }): string | undefined {
  if (bits.execBefore === undefined || bits.execAfter === undefined || bits.execBefore === bits.execAfter) return undefined;
  return bits.execAfter ? 'made executable' : 'no longer executable';
}

/** "+3 −1", "binary", "made executable", "+3 −1 · made executable": what a patch changed, for its row. */
export function patchCounts(patch: { binary: boolean; added: number; removed: number; mode?: string | undefined }): string {
  const bytes = patch.binary ? 'binary' : `+${patch.added} −${patch.removed}`;
  if (patch.mode === undefined) return bytes;
  return patch.binary || patch.added + patch.removed > 0 ? `${bytes} · ${patch.mode}` : patch.mode;
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

/** The hosts the network proxy refused during a command ("example.com", "10.0.0.5:8080"), from its result's sandbox part. */
export function refusedHosts(result: string | undefined): string[] {
  const at = result?.lastIndexOf('\n--- sandbox ---\n') ?? -1;
  if (result === undefined || at < 0) return [];
  const hosts = result
    .slice(at)
    .split('\n')
    .flatMap((line) => /^ {2}refused (\S+?): /.exec(line)?.[1] ?? []);
  return [...new Set(hosts)].slice(0, 10);
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
  } else if (call.toolName === 'update_plan') text = planCallWords(call.input);
  else text = call.toolName;
  return call.denied ? `${text} (denied)` : text;
}
