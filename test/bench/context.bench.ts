// What the system prompt and the project's instructions cost, and how much of it the prompt cache
// carries. Ten small scripted tasks (recorded model turns: the same calls in every arm) run on two
// workspaces: the demo project (test/demo/workspace, with a short AGENTS.md added) and a local
// clone of this repository (its own AGENTS.md); each with the product's system prompt and the
// instruction files, and without either. Then one 50-step run with the system prompt in place.
// All through the real SDK and runtime against the loopback Messages API double, which counts
// tokens and models prompt caching (test/support/fake-anthropic/cache.ts: 4 bytes a token, no
// minimum cacheable length). Prints ONE JSON object; the target is cache_read_share >= 0.9.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createAnthropicProvider } from '../../src/core/model/anthropic';
import { silentLog } from '../../src/core/ports';
import { buildAgent } from '../../src/core/runtime/agent';
import type { AgentRuntime } from '../../src/core/runtime/runtime';
import type { PromptEnvironment } from '../../src/core/runtime/system-prompt';
import { createNodeCommandRunner } from '../../src/host/node/command-runner';
import { NodeWorkspace } from '../../src/host/node/node-workspace';
import { tokensOfText } from '../support/fake-anthropic/cache';
import { startFakeAnthropic, type MeasuredUsage, type Responder } from '../support/fake-anthropic/server';
import { MemoryCheckpointStore } from '../support/memory-store';

const REPO = resolve(__dirname, '..', '..');
const MODEL = 'claude-sonnet-4-6';
const LONG_STEPS = 50;
const ENVIRONMENT: PromptEnvironment = { host: { os: 'Linux 6.8 (x64)', shell: '/bin/sh' } };
const DEMO_AGENTS = '# Greet demo\n- Run the tests with `node test.js` after every change.\n- Keep `src/greet.js` free of dependencies.\n';

type Call = readonly [name: string, input: Record<string, unknown>];
interface Task {
  readonly task: string;
  readonly calls: readonly Call[];
}

const DEMO_TASKS: readonly Task[] = [
  {
    task: 'What does this project do?',
    calls: [
      ['list_dir', { path: '.', depth: 2 }],
      ['read_file', { path: 'README.md' }],
    ],
  },
  {
    task: 'Where is formatList defined?',
    calls: [
      ['search_text', { pattern: 'function formatList' }],
      ['read_file', { path: 'src/greet.js' }],
    ],
  },
  {
    task: 'Which tests are there?',
    calls: [
      ['find_files', { pattern: '*.js' }],
      ['read_file', { path: 'test.js' }],
    ],
  },
  { task: 'Run the tests', calls: [['run_command', { command: 'node test.js' }]] },
  {
    task: 'Fix the list of three names',
    calls: [
      ['read_file', { path: 'src/greet.js' }],
      ['edit_file', { path: 'src/greet.js', old_string: 'names.length - 2);', new_string: 'names.length - 1);' }],
      ['run_command', { command: 'node test.js' }],
    ],
  },
  { task: 'What is the package called?', calls: [['read_file', { path: 'package.json' }]] },
  { task: 'Who calls greet?', calls: [['search_text', { pattern: 'greet(' }]] },
  { task: 'Write down what you changed', calls: [['write_file', { path: 'NOTES.md', content: 'Fixed formatList for three names.\n' }]] },
  { task: 'List the src folder', calls: [['list_dir', { path: 'src' }]] },
  { task: 'Any TODOs left?', calls: [['search_text', { pattern: 'TODO' }]] },
];

const REPO_TASKS: readonly Task[] = [
  { task: 'Give me the layout of src/core', calls: [['list_dir', { path: 'src/core', depth: 1 }]] },
  {
    task: 'Where is limitHit?',
    calls: [
      ['search_text', { pattern: 'export function limitHit' }],
      ['read_file', { path: 'src/core/runtime/budget.ts', limit: 40 }],
    ],
  },
  { task: 'Which benchmarks exist?', calls: [['find_files', { pattern: '*.bench.ts' }]] },
  { task: 'What are the ports of the core?', calls: [['read_file', { path: 'src/core/ports.ts', limit: 60 }]] },
  { task: 'What scripts does package.json have?', calls: [['search_text', { pattern: '"bench:', include: ['package.json'] }]] },
  {
    task: 'How does resume work?',
    calls: [
      ['search_text', { pattern: '## 5. Resume', include: ['*.md'] }],
      ['read_file', { path: 'docs/ARCHITECTURE.md', offset: 100, limit: 30 }],
    ],
  },
  { task: 'Who uses withCacheBreakpoints?', calls: [['search_text', { pattern: 'withCacheBreakpoints' }]] },
  { task: 'Note the layers in a file', calls: [['write_file', { path: 'notes/layers.md', content: 'core, host, protocol, webview\n' }]] },
  { task: 'Is the working tree clean?', calls: [['run_command', { command: 'git status --short' }]] },
  { task: 'Where are the tool limits?', calls: [['search_text', { pattern: 'export const MAX_', include: ['src/core/tools/*.ts'] }]] },
];

/** The recorded turns: each task's calls one a step (a short sentence with each), then an answer. */
function scriptFor(tasks: readonly Task[]): Responder {
  return (request) => {
    const messages = (request.body as { messages: { role: string; content: unknown }[] }).messages;
    const first = messages[0]!.content;
    const taskText = typeof first === 'string' ? first : (first as { text?: string }[])[0]?.text;
    const index = tasks.findIndex((t) => t.task === taskText);
    const step = messages.filter((m) => m.role === 'assistant').length;
    const calls = index >= 0 ? tasks[index]!.calls : LONG_CALLS;
    const call = calls[index >= 0 ? step : step % calls.length];
    if (call === undefined || (index < 0 && step >= LONG_STEPS))
      return { content: [{ type: 'text', text: 'Done.' }], stop_reason: 'end_turn' };
    const toolUse = { type: 'tool_use' as const, id: `toolu_${index}_${step}`, name: call[0], input: call[1] };
    return { content: [{ type: 'text', text: `Step ${step + 1}: ${call[0]}.` }, toolUse], stop_reason: 'tool_use' };
  };
}

const LONG_CALLS: readonly Call[] = [
  ['search_text', { pattern: 'export function', path: 'src/core/runtime', max_results: 5 }],
  ['read_file', { path: 'src/core/runtime/budget.ts', limit: 20 }],
  ['list_dir', { path: 'src/core/model' }],
  ['find_files', { pattern: '*.ts', path: 'src/core/ledger' }],
];

interface ArmFigures {
  readonly tasks: number;
  readonly completed: number;
  readonly requests: number;
  readonly input_tokens: number;
  readonly cache_read_tokens: number;
  readonly cache_write_tokens: number;
  readonly cache_read_share: number;
  readonly tokens_per_request: number;
}

function figures(usages: readonly MeasuredUsage[], tasks: number, completed: number): ArmFigures {
  const sum = (f: (u: MeasuredUsage) => number) => usages.reduce((n, u) => n + f(u), 0);
  const read = sum((u) => u.cache_read_input_tokens);
  const write = sum((u) => u.cache_creation_input_tokens);
  const input = sum((u) => u.input_tokens);
  const total = read + write + input;
  return {
    tasks,
    completed,
    requests: usages.length,
    input_tokens: input,
    cache_read_tokens: read,
    cache_write_tokens: write,
    cache_read_share: total === 0 ? 0 : Math.round((read / total) * 1000) / 1000,
    tokens_per_request: usages.length === 0 ? 0 : Math.round(total / usages.length),
  };
}

function runtimeFor(root: string, url: string): AgentRuntime {
  return buildAgent({
    store: new MemoryCheckpointStore(),
    workspace: new NodeWorkspace({ roots: [root], storeDir: join(root, '.store') }),
    model: createAnthropicProvider({ apiKey: 'sk-bench', baseURL: url, maxRetries: 0 }),
    approver: { approve: async () => 'allow_for_run', askUncertain: async () => null },
    commands: createNodeCommandRunner(),
    clock: { now: () => Date.now() },
    log: silentLog,
  }).runtime;
}

const settings = (maxTurns: number) => ({ model: MODEL, provider: 'anthropic', maxTurns, maxOutputTokensPerCall: 1024 });

/** Runs the tasks one run each, in a fresh copy of the workspace; the system prompt's parts in tokens from the first request. */
async function arm(prepare: () => string, tasks: readonly Task[], withPrompt: boolean) {
  const root = prepare();
  const fake = await startFakeAnthropic(scriptFor(tasks), { promptCaching: true });
  try {
    const runtime = runtimeFor(root, fake.url);
    let completed = 0;
    for (const t of tasks) {
      const outcome = await runtime.start({ task: t.task, settings: settings(10), ...(withPrompt ? { environment: ENVIRONMENT } : {}) });
      if (outcome.status === 'completed') completed += 1;
    }
    const system = (fake.requests[0]?.body as { system?: { text: string }[] } | undefined)?.system?.[0]?.text ?? '';
    const cut = system.indexOf('\n\n# Project instructions');
    const parts = {
      system_tokens: tokensOfText(cut < 0 ? system : system.slice(0, cut)),
      instructions_tokens: cut < 0 ? 0 : tokensOfText(system.slice(cut)),
    };
    return { ...parts, ...figures(fake.usages, tasks.length, completed) };
  } finally {
    await fake.close();
    rmSync(root, { recursive: true, force: true });
  }
}

function demoCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ac-context-demo-'));
  cpSync(join(REPO, 'test', 'demo', 'workspace'), dir, { recursive: true });
  writeFileSync(join(dir, 'AGENTS.md'), DEMO_AGENTS);
  return dir;
}

function repoClone(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ac-context-repo-'));
  execFileSync('git', ['clone', '--quiet', '--no-hardlinks', REPO, dir], { stdio: 'ignore' });
  return dir;
}

async function longRun(): Promise<ArmFigures> {
  const root = repoClone();
  const fake = await startFakeAnthropic(scriptFor([]), { promptCaching: true });
  try {
    const outcome = await runtimeFor(root, fake.url).start({
      task: `look around the core ${LONG_STEPS} times`,
      settings: settings(LONG_STEPS + 5),
      environment: ENVIRONMENT,
    });
    return figures(fake.usages, 1, outcome.status === 'completed' ? 1 : 0);
  } finally {
    await fake.close();
    rmSync(root, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const demoWith = await arm(demoCopy, DEMO_TASKS, true);
  const demoWithout = await arm(demoCopy, DEMO_TASKS, false);
  const repoWith = await arm(repoClone, REPO_TASKS, true);
  const repoWithout = await arm(repoClone, REPO_TASKS, false);
  const long = await longRun();
  const out = {
    system_tokens: demoWith.system_tokens,
    instructions_tokens: { demo: demoWith.instructions_tokens, repo: repoWith.instructions_tokens },
    cache_read_share: long.cache_read_share,
    requests: long.requests,
    target: { cache_read_share: 0.9, met: long.cache_read_share >= 0.9, steps: LONG_STEPS },
    long_run: long,
    tasks: {
      demo: { with_prompt: demoWith, without: demoWithout },
      repo: { with_prompt: repoWith, without: repoWithout },
    },
    token_model: 'fake-anthropic: 4 bytes a token, prompt caching without a minimum length',
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
  if (!out.target.met) process.exitCode = 1;
}

void main().catch((error: unknown) => {
  process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
  process.exit(1);
});
