import { parseHostRule } from '../node/netproxy/policy';
import { parseArgs } from 'node:util';
import { InstructionFileNames } from '../../core/runtime/project-instructions';
import type { ResumeOptions } from '../../core/runtime/resume';
import type { OutputMode } from './output';
import { ENV_PATTERN } from '../node/command-env';
import { shellOf } from '../node/shell';
import { errorText } from '../../core/error-text';

export { FLAG_HELP, HELP, USAGE, wantsHelp } from './help';

export class UsageError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'UsageError';
  }
}

export interface CliOptions {
  readonly command: 'run' | 'resume' | 'status' | 'continue' | 'fork' | 'worker';
  readonly workspace?: string;
  readonly store?: string;
  readonly task?: string;
  readonly model?: string;
  readonly maxTurns?: number;
  readonly maxTokens?: number;
  readonly maxCostUsd?: number;
  readonly maxContextTokens?: number;
  /** Extended thinking: off, adaptive, or a budget of N tokens per call. */
  readonly thinking?: 'off' | 'adaptive' | number;
  readonly yes: boolean;
  /** Trusts the workspace for this invocation (see cli/trust.ts). */
  readonly trust: boolean;
  readonly provider?: 'anthropic' | 'replay';
  readonly replay?: string;
  readonly baseUrl?: string;
  readonly run?: string;
  readonly json: boolean;
  readonly quiet: boolean;
  /** An mcp.json of the person's own (see host/node/mcp/config.ts). */
  readonly mcpConfig?: string;
  /** fork: the step whose start the fork goes back to, and what happens to the files. */
  readonly step?: number;
  readonly files?: 'keep' | 'restore';
  /** run: queue the run for a worker instead of running it. */
  readonly detach?: boolean;
  /** worker: how many runs it goes on with at once. */
  readonly concurrency?: number;
  /** worker: stop once no run is left to claim (a batch), instead of waiting for more. */
  readonly exitWhenIdle?: boolean;
  /** The project's instruction files to read (run); undefined: the default names. */
  readonly instructionFiles?: readonly string[];
  /** False with --no-sandbox. */
  readonly sandbox: boolean;
  readonly commandNetwork: 'allowlist' | 'on' | 'off';
  /** Hosts (HOST or HOST:PORT) commands may reach through the proxy besides those the person's user configuration names. */
  readonly allowHosts: readonly string[];
  /** Servers of the workspace's .vscode/mcp.json allowed without a prompt. */
  readonly allowWorkspaceMcp: readonly string[];
  /** Host variables (names or patterns) commands and MCP servers may have besides the base set. */
  readonly passEnv: readonly string[];
  /** Windows: the shell commands run in (cmd.exe or a PowerShell); default %ComSpec%. */
  readonly shell?: string;
}

const OPTIONS = {
  workspace: { type: 'string' },
  store: { type: 'string' },
  task: { type: 'string' },
  model: { type: 'string' },
  'max-turns': { type: 'string' },
  'max-tokens': { type: 'string' },
  'max-cost-usd': { type: 'string' },
  'max-context-tokens': { type: 'string' },
  thinking: { type: 'string' },
  yes: { type: 'boolean', default: false },
  trust: { type: 'boolean', default: false },
  provider: { type: 'string' },
  replay: { type: 'string' },
  'base-url': { type: 'string' },
  run: { type: 'string' },
  json: { type: 'boolean', default: false },
  quiet: { type: 'boolean', default: false },
  'mcp-config': { type: 'string' },
  step: { type: 'string' },
  files: { type: 'string' },
  detach: { type: 'boolean', default: false },
  concurrency: { type: 'string' },
  'exit-when-idle': { type: 'boolean', default: false },
  'instruction-files': { type: 'string' },
  'no-sandbox': { type: 'boolean', default: false },
  'command-network': { type: 'string' },
  'allow-workspace-mcp': { type: 'string', multiple: true },
  'pass-env': { type: 'string', multiple: true },
  'allow-host': { type: 'string', multiple: true },
  shell: { type: 'string' },
} as const;

const SANDBOX_FLAGS = ['no-sandbox', 'command-network', 'allow-host', 'allow-workspace-mcp', 'pass-env', 'shell'];

const LIMIT_FLAGS = ['max-turns', 'max-tokens', 'max-cost-usd', 'max-context-tokens'];

const OUTPUT_FLAGS = ['json', 'quiet'];

/** The flags of the commands that go on with a run (resume, continue): the model, approvals, limits, output, sandbox. */
const GOING_ON = [
  'workspace',
  'store',
  'yes',
  'trust',
  'provider',
  'replay',
  'base-url',
  ...LIMIT_FLAGS,
  ...OUTPUT_FLAGS,
  'mcp-config',
  ...SANDBOX_FLAGS,
];

const ALLOWED: Record<CliOptions['command'], readonly string[]> = {
  run: [
    'workspace',
    'store',
    'task',
    'model',
    'yes',
    'trust',
    'provider',
    'replay',
    'base-url',
    ...LIMIT_FLAGS,
    'thinking',
    ...OUTPUT_FLAGS,
    'mcp-config',
    'detach',
    'instruction-files',
    ...SANDBOX_FLAGS,
  ],
  resume: ['run', ...GOING_ON],
  status: ['store', 'workspace', 'run', 'json'],
  continue: ['run', 'task', ...GOING_ON],
  fork: ['workspace', 'store', 'run', 'step', 'files', 'trust', 'json'],
  worker: [
    'store',
    'workspace',
    'concurrency',
    'exit-when-idle',
    'yes',
    'trust',
    'provider',
    'replay',
    'base-url',
    'mcp-config',
    ...OUTPUT_FLAGS,
    ...SANDBOX_FLAGS,
  ],
};

const COMMANDS = new Set<string>(Object.keys(ALLOWED));

/** What a command needs beyond its flags' own checks, as a usage error; undefined when it has it. */
function missing(command: CliOptions['command'], str: (name: string) => string | undefined): string | undefined {
  if (command !== 'status' && str('workspace') === undefined) return `${command} needs --workspace DIR`;
  if (command === 'run' && (str('task') ?? '').trim() === '') return 'run needs --task TEXT';
  if (command === 'continue' && (str('run') === undefined || (str('task') ?? '').trim() === ''))
    return 'continue needs --run ID and --task TEXT';
  if (command === 'fork' && (str('run') === undefined || str('step') === undefined)) return 'fork needs --run ID and --step N';
  if (command === 'worker' && !/^postgres(ql)?:\/\//i.test(str('store') ?? ''))
    return 'worker needs --store postgres://... (runs are shared through a PostgreSQL store)';
  if (command === 'status' && str('store') === undefined && str('workspace') === undefined)
    return 'status needs --store DIR or --workspace DIR';
  const files = str('files');
  if (files !== undefined && files !== 'keep' && files !== 'restore') return `--files must be keep or restore, got "${files}"`;
  return undefined;
}

function positiveInt(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new UsageError(`--${name} must be a positive integer, got "${text}"`);
  return Number(text);
}

function positiveNumber(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+(\.\d+)?$/.test(text) || !(Number(text) > 0)) throw new UsageError(`--${name} must be a positive number, got "${text}"`);
  return Number(text);
}

function thinkingOf(text: string | undefined): CliOptions['thinking'] {
  if (text === undefined || text === 'off' || text === 'adaptive') return text;
  const budget = positiveInt('thinking', text);
  if (budget === undefined || budget < 1024)
    throw new UsageError(`--thinking must be off, adaptive or a budget of at least 1024 tokens, got "${text}"`);
  return budget;
}

/** The limit flags given, as options. */
function limitsOf(str: (name: string) => string | undefined): Partial<CliOptions> {
  const limits = {
    maxTurns: positiveInt('max-turns', str('max-turns')),
    maxTokens: positiveInt('max-tokens', str('max-tokens')),
    maxCostUsd: positiveNumber('max-cost-usd', str('max-cost-usd')),
    maxContextTokens: positiveInt('max-context-tokens', str('max-context-tokens')),
    thinking: thinkingOf(str('thinking')),
  };
  return Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined));
}

export function parseCli(argv: readonly string[]): CliOptions {
  const [name, ...rest] = argv;
  if (name === undefined || !COMMANDS.has(name)) {
    const known = 'run, resume, continue, fork, status or worker';
    throw new UsageError(name === undefined ? `missing command (${known})` : `unknown command "${name}" (${known})`);
  }
  const command = name as CliOptions['command'];
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    ({ values } = parseArgs({ args: [...rest], options: OPTIONS, allowPositionals: false, strict: true }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined && value !== false && !(Array.isArray(value) && value.length === 0) && !ALLOWED[command].includes(name))
      throw new UsageError(`--${name} is not an option of ${command}`);
  }
  const str = (name: string): string | undefined => values[name] as string | undefined;
  const provider = str('provider');
  if (provider !== undefined && provider !== 'anthropic' && provider !== 'replay')
    throw new UsageError(`--provider must be anthropic or replay, got "${provider}"`);
  const network = str('command-network') ?? 'allowlist';
  if (network !== 'allowlist' && network !== 'on' && network !== 'off')
    throw new UsageError(`--command-network must be allowlist, on or off, got "${network}"`);
  const lacking = missing(command, str);
  if (lacking !== undefined) throw new UsageError(lacking);
  if (provider === 'replay' && str('replay') === undefined) throw new UsageError('--provider replay needs --replay FILE');
  if (values['json'] === true && values['quiet'] === true) throw new UsageError('--json and --quiet cannot be used together');
  return {
    command,
    yes: values['yes'] === true,
    trust: values['trust'] === true,
    json: values['json'] === true,
    quiet: values['quiet'] === true,
    sandbox: values['no-sandbox'] !== true,
    commandNetwork: network,
    allowHosts: allowHostsOf(values['allow-host'] as string[] | undefined),
    allowWorkspaceMcp: (values['allow-workspace-mcp'] as string[] | undefined) ?? [],
    passEnv: passEnvOf(values['pass-env'] as string[] | undefined),
    ...shellOption(str('shell')),
    ...(str('workspace') !== undefined ? { workspace: str('workspace') } : {}),
    ...(str('store') !== undefined ? { store: str('store') } : {}),
    ...(str('task') !== undefined ? { task: str('task') } : {}),
    ...(str('model') !== undefined ? { model: str('model') } : {}),
    ...limitsOf(str),
    ...(provider !== undefined ? { provider } : {}),
    ...(str('replay') !== undefined ? { replay: str('replay') } : {}),
    ...(str('base-url') !== undefined ? { baseUrl: str('base-url') } : {}),
    ...(str('run') !== undefined ? { run: str('run') } : {}),
    ...(str('mcp-config') !== undefined ? { mcpConfig: str('mcp-config') } : {}),
    ...(values['detach'] === true ? { detach: true } : {}),
    ...(values['exit-when-idle'] === true ? { exitWhenIdle: true } : {}),
    ...(str('concurrency') !== undefined ? { concurrency: positiveInt('concurrency', str('concurrency')) } : {}),
    ...instructionFilesOf(str('instruction-files')),
    ...(str('step') !== undefined ? { step: positiveInt('step', str('step')) } : {}),
    ...(str('files') !== undefined ? { files: str('files') as 'keep' | 'restore' } : {}),
  };
}

/** `--shell PROGRAM`: Windows only, cmd.exe or a PowerShell. */
function shellOption(program: string | undefined, platform: NodeJS.Platform = process.platform): Pick<CliOptions, 'shell'> {
  if (program === undefined) return {};
  if (platform !== 'win32') throw new UsageError('--shell is for Windows: elsewhere commands run in /bin/sh');
  try {
    shellOf('win32', {}, program);
  } catch (error) {
    throw new UsageError(`--shell: ${errorText(error)}`, { cause: error });
  }
  return { shell: program };
}

/** `--pass-env NAME` (repeatable): a variable's name or a pattern (`*`, `?`). */
function passEnvOf(names: readonly string[] | undefined): string[] {
  for (const name of names ?? [])
    if (!ENV_PATTERN.test(name))
      throw new UsageError(`--pass-env takes a variable's name or a pattern of names (letters, digits, _, * and ?), got "${name}"`);
  return [...(names ?? [])];
}

/** `--allow-host HOST` / `HOST:PORT` (repeatable), each checked as the proxy reads it. */
function allowHostsOf(hosts: readonly string[] | undefined): string[] {
  for (const host of hosts ?? [])
    if (parseHostRule(host, '--allow-host') === undefined)
      throw new UsageError(
        `--allow-host takes a host name or address, with :PORT for a port other than 443 (or 80 for http://), got "${host}"`,
      );
  return [...(hosts ?? [])];
}

/** `--instruction-files a.md,docs/b.md` ("" for none), each a plain workspace-relative path. */
function instructionFilesOf(text: string | undefined): Pick<CliOptions, 'instructionFiles'> {
  if (text === undefined) return {};
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const checked = InstructionFileNames.safeParse(names);
  if (!checked.success) throw new UsageError(`--instruction-files: ${checked.error.issues[0]?.message ?? 'invalid'} (${text})`);
  return { instructionFiles: checked.data };
}

/** What `resume` flags ask of the resume: raised limits, a context budget for this session. */
export function resumeOptionsOf(options: CliOptions): ResumeOptions {
  const raise = {
    ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
    ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
    ...(options.maxCostUsd !== undefined ? { maxCostUsd: options.maxCostUsd } : {}),
  };
  return {
    ...(Object.keys(raise).length > 0 ? { raise } : {}),
    ...(options.maxContextTokens !== undefined ? { maxContextTokens: options.maxContextTokens } : {}),
  };
}

/** How `run` and `resume` print the run as it goes. */
export function outputModeOf(options: CliOptions): OutputMode {
  return options.json ? 'json' : options.quiet ? 'quiet' : 'text';
}
