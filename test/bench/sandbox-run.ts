// answer_to_next_request_ms_p50 for bench:sandbox: the headless CLI runs a scripted task (a fake
// Anthropic server) whose model asks for `true` CALLS times; the time from one request's arrival to
// the next is what the run spends between the model's answer and its next request (the answer's
// stream, the same few ms on both sides, included). Sandboxed against --no-sandbox, on one tree.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startCli } from '../support/cli-process';
import { startFakeAnthropic, type Step } from '../support/fake-anthropic/server';

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.floor(sorted.length / 2)]! * 10) / 10;
}

/** The gaps between consecutive requests of one scripted run of `calls` `true` commands. */
async function gaps(bundle: string, ws: string, scratch: string, calls: number, sandboxed: boolean): Promise<number[]> {
  const arrivals: number[] = [];
  const fake = await startFakeAnthropic((_request, index): Step => {
    arrivals.push(performance.now());
    if (index >= calls) return { content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' };
    return {
      content: [{ type: 'tool_use', id: `toolu_t${index}`, name: 'run_command', input: { command: 'true' } }],
      stop_reason: 'tool_use',
    };
  });
  const store = join(scratch, `store-${sandboxed ? 'sandbox' : 'plain'}-${Date.now()}`);
  mkdirSync(store, { recursive: true });
  try {
    const args = ['run', '--workspace', ws, '--store', store, '--task', 'x', '--trust', '--yes', '--base-url', fake.url];
    const result = await startCli(bundle, [...args, ...(sandboxed ? [] : ['--no-sandbox'])], {
      PATH: process.env['PATH'],
      HOME: scratch,
      XDG_CONFIG_HOME: join(scratch, 'config'),
      ANTHROPIC_API_KEY: 'sk-ant-api03-bench-sandbox-0123456789',
    }).done;
    if (result.code !== 0 || arrivals.length !== calls + 1)
      throw new Error(`scripted run failed (${result.code}): ${result.stderr.slice(-2000)}`);
    // The first gap holds the run's start-up work (its first command's plan included): left out on both sides.
    return arrivals.slice(2).map((at, i) => at - arrivals[i + 1]!);
  } finally {
    await fake.close();
  }
}

export interface AnswerFigures {
  readonly answer_to_next_request_ms_p50: number;
  readonly answer_to_next_request_ms_p50_sandboxed: number;
  readonly answer_to_next_request_ms_p50_no_sandbox: number;
  readonly target_answer_to_next_request_extra_ms: number;
  readonly calls_per_run: number;
}

/** Alternating scripted runs, sandboxed and not: the two medians of the gaps and their difference (the figure). */
export async function answerFigures(bundle: string, ws: string, scratch: string, calls: number, rounds: number): Promise<AnswerFigures> {
  const sandboxed: number[] = [];
  const plain: number[] = [];
  for (let r = 0; r < rounds; r++) {
    plain.push(...(await gaps(bundle, ws, scratch, calls, false)));
    sandboxed.push(...(await gaps(bundle, ws, scratch, calls, true)));
  }
  return {
    answer_to_next_request_ms_p50: Math.round((median(sandboxed) - median(plain)) * 10) / 10,
    answer_to_next_request_ms_p50_sandboxed: median(sandboxed),
    answer_to_next_request_ms_p50_no_sandbox: median(plain),
    target_answer_to_next_request_extra_ms: 50,
    calls_per_run: calls,
  };
}
