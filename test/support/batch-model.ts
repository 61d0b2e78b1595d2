import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RecordedRequest, Responder } from './fake-anthropic/server';

// The model of a batch of small jobs, for the worker tests and bench:pg: a task "job N" makes
// `commands` calls of `echo job-N:K >> effects/job-N-K.log` (each one a non-idempotent effect, on a
// line of its own; a file per effect, since commands of runs at once each see their own
// copy-on-write view and two of them appending to one file conflict when applied), then answers. The step comes from the request's history, so a resumed run
// gets the answer its history calls for, whichever worker asks.

interface Message {
  readonly role: string;
  readonly content: unknown;
}

function taskOf(messages: readonly Message[]): string {
  const first = messages[0]?.content;
  if (typeof first === 'string') return first;
  const text = (first as { type: string; text?: string }[] | undefined)?.find((b) => b.type === 'text')?.text;
  return text ?? '';
}

export function batchModel(options: { commands: number; latencyMs?: number }): Responder {
  return (request: RecordedRequest) => {
    const messages = ((request.body as { messages?: Message[] }).messages ?? []) as Message[];
    const job = /job (\d+)/.exec(taskOf(messages))?.[1] ?? 'x';
    const step = messages.filter((m) => m.role === 'assistant').length;
    const delay = options.latencyMs !== undefined ? { eventDelayMs: options.latencyMs / 6 } : {};
    if (step >= options.commands) return { content: [{ type: 'text', text: `job ${job} done` }], stop_reason: 'end_turn', ...delay };
    const command = `mkdir -p effects && echo job-${job}:${step} >> effects/job-${job}-${step}.log`;
    return {
      content: [{ type: 'tool_use', id: `toolu_j${job}_${step}`, name: 'run_command', input: { command } }],
      stop_reason: 'tool_use',
      ...delay,
    };
  };
}

/** Every effect line the batch's commands left in the workspace (one file each), '' when none. */
export function effectsLog(ws: string): string {
  const dir = join(ws, 'effects');
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return '';
  }
  return names
    .filter((name) => /^job-\d+-\d+\.log$/.test(name))
    .map((name) => readFileSync(join(dir, name), 'utf8'))
    .join('');
}

/** Files in the effects folder that no command made (a write path's staged temp file left by a killed host). */
export function strayFiles(ws: string): string[] {
  try {
    return readdirSync(join(ws, 'effects')).filter((name) => !/^job-\d+-\d+\.log$/.test(name));
  } catch {
    return [];
  }
}

/** The effect lines that appear more than once: a non-idempotent call that ran twice. */
export function duplicatedEffects(log: string): string[] {
  const seen = new Map<string, number>();
  for (const line of log.split('\n').filter(Boolean)) seen.set(line, (seen.get(line) ?? 0) + 1);
  return [...seen.entries()].filter(([, n]) => n > 1).map(([line]) => line);
}
