import { parseHostRule } from '../../node/netproxy/policy';
import { parse as parseJsonc } from 'jsonc-parser/lib/esm/main.js';
import { z } from 'zod';
import { DEFAULT_MODEL } from '../../../core/model/anthropic';
import { DEFAULT_MAX_OUTPUT_TOKENS, DEFAULT_MAX_TURNS } from '../../../core/runtime/budget';
import { DEFAULT_INSTRUCTION_FILES, InstructionFileNames } from '../../../core/runtime/project-instructions';
import { ToolPolicyOverrides } from '../../../core/tools/registry';
import { ENV_PATTERN } from '../../node/command-env';

// The settings logic without `vscode`, so that a unit test can drive it: which value of each
// setting counts, and which workspace values are ignored.

export const SETTINGS_SECTION = 'agentCheckpoints';

/**
 * Settings that decide what the agent may do (tools, paths, budgets, the sandbox), what a run may
 * cost (model, tokens, thinking), where the key goes, or what the store keeps. Only the user's own (global)
 * value counts: a workspace is untrusted content, and the agent itself can write `.vscode/`.
 * package.json declares them `"scope": "application"` so the Settings UI agrees.
 */
export const USER_SCOPE_ONLY = [
  'provider',
  'replayFile',
  'baseUrl',
  'toolPolicies',
  'protectedPaths',
  'maxTurns',
  'maxTokens',
  'maxCostUsd',
  'retention.maxBytes',
  'retention.maxRuns',
  // Cost levers: a repository must not pick the most expensive model or budget.
  'model',
  'maxOutputTokensPerCall',
  'maxContextTokens',
  'thinking',
  'thinkingBudgetTokens',
  // The sandbox of commands and MCP servers.
  'sandbox',
  'commandNetwork',
  'commandAllowedHosts',
  'commandHomePaths',
  'commandEnvironment',
  // Read where the servers and tools are chosen (lm/); listed here so a workspace value is reported.
  'mcpServers',
  'languageModelTools',
  // Which workspace files the prompt takes as the project's instructions.
  'instructionFiles',
  // Where runs are kept: a repository must not send them to a server of its choosing.
  'store',
] as const;

/** The model providers the extension can run a model through. */
export const ExtensionProvider = z.enum(['anthropic', 'replay', 'vscode-lm']);

const positiveOrUnset = z
  .number()
  .positive()
  .nullish()
  .transform((v) => v ?? undefined);

/** `agentCheckpoints.*` as the extension uses them; a bad value is reported, never guessed. */
export const ExtensionSettings = z.object({
  /** Long runs: the context budget (default: the model's window) and extended thinking. */
  maxContextTokens: positiveOrUnset.pipe(z.number().int().optional()),
  thinking: z.enum(['off', 'adaptive', 'enabled']).default('off'),
  thinkingBudgetTokens: z.number().int().min(1024).default(4096),
  provider: ExtensionProvider.default('anthropic'),
  replayFile: z.string().default(''),
  model: z.string().min(1).default(DEFAULT_MODEL),
  baseUrl: z.string().default(''),
  maxTurns: z.number().int().positive().default(DEFAULT_MAX_TURNS),
  maxTokens: positiveOrUnset.pipe(z.number().int().optional()),
  maxCostUsd: positiveOrUnset,
  maxOutputTokensPerCall: z.number().int().positive().default(DEFAULT_MAX_OUTPUT_TOKENS),
  toolPolicies: ToolPolicyOverrides.default({}),
  protectedPaths: z.array(z.string().min(1)).default([]),
  /** The project's instruction files the system prompt includes (core/runtime/project-instructions). */
  instructionFiles: InstructionFileNames.default([...DEFAULT_INSTRUCTION_FILES]),
  /** Commands and MCP servers in the platform's sandbox (`auto`) or not (`off`). */
  sandbox: z.enum(['auto', 'off']).default('auto'),
  /** `allowlist`: HTTP(S) through the host's proxy to the allowed hosts only (netproxy/); `on`: any host; `off`: none. */
  commandNetwork: z.enum(['allowlist', 'on', 'off']).default('allowlist'),
  /** Hosts (HOST or HOST:PORT) commands may reach through the proxy besides those the person's user configuration names. */
  commandAllowedHosts: z
    .array(
      z.string().refine((v) => parseHostRule(v, 'setting') !== undefined, 'a host name or address, with :PORT for a port other than 443'),
    )
    .default([]),
  /** Folders of the home folder commands may use in the sandbox (read-write), e.g. `~/.npm`. */
  commandHomePaths: z.array(z.string().min(1)).default([]),
  /** Host variables (names or `*`/`?` patterns) commands and MCP servers get besides the base set (command-env.ts). */
  commandEnvironment: z
    .array(z.string().regex(ENV_PATTERN, "a variable's name or a pattern of names (letters, digits, _, * and ?)"))
    .default([]),
  /** The run store: empty for this workspace's file store, or a PostgreSQL address (postgres://...). */
  store: z
    .string()
    .refine((v) => v === '' || /^postgres(ql)?:\/\//i.test(v), 'a postgres:// address, or empty for the file store')
    .default(''),
  retention: z
    .object({
      maxBytes: z
        .number()
        .int()
        .positive()
        .default(512 * 1024 * 1024),
      maxRuns: z.number().int().positive().default(50),
    })
    .default({ maxBytes: 512 * 1024 * 1024, maxRuns: 50 }),
});
export type ExtensionSettings = z.infer<typeof ExtensionSettings>;

export class SettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SettingsError';
  }
}

/** The parts of `vscode.WorkspaceConfiguration` the reading uses. */
export interface SettingsSource {
  get(key: string): unknown;
  inspect(key: string): { globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown } | undefined;
}

/**
 * `agentCheckpoints.*` keys a raw settings text sets (`.vscode/settings.json`, or the `settings`
 * of a `.code-workspace` file), dotted or nested. VS Code drops the values of application-scoped
 * settings from these files before `inspect` sees them, so the log can only learn of them here.
 */
export function sectionKeysIn(text: string, workspaceFile = false): string[] {
  const parsed: unknown = parseJsonc(text, [], { allowTrailingComma: true });
  const root = workspaceFile ? (parsed as { settings?: unknown } | undefined)?.settings : parsed;
  if (typeof root !== 'object' || root === null) return [];
  const keys: string[] = [];
  for (const [key, value] of Object.entries(root)) {
    if (key.startsWith(`${SETTINGS_SECTION}.`)) keys.push(key.slice(SETTINGS_SECTION.length + 1));
    else if (key === SETTINGS_SECTION && typeof value === 'object' && value !== null) keys.push(...Object.keys(value));
  }
  return keys;
}

function userValue(source: SettingsSource, key: string, workspaceKeys: ReadonlySet<string>, warn: (m: string) => void): unknown {
  const seen = source.inspect(key);
  const top = key.split('.')[0]!;
  if (seen?.workspaceValue !== undefined || seen?.workspaceFolderValue !== undefined || workspaceKeys.has(key) || workspaceKeys.has(top))
    warn(
      `setting ${SETTINGS_SECTION}.${key} in the workspace or folder settings is ignored: it decides what the agent may do, what a run may cost, where the API key goes or what the store keeps, so only your user settings count`,
    );
  return seen?.globalValue;
}

/**
 * One setting read alone (the user's value or its default), so that a wrong value of another
 * setting cannot stop what needs only this one (the window's store at activation, the key banner).
 * A wrong value of this one is the default plus the words that name it.
 */
export function readOneSettingFrom<K extends 'store' | 'provider'>(
  source: SettingsSource,
  key: K,
): { value: ExtensionSettings[K]; problem?: string } {
  const schema = ExtensionSettings.shape[key];
  const parsed = schema.safeParse(source.inspect(key)?.globalValue ?? undefined);
  if (parsed.success) return { value: parsed.data as ExtensionSettings[K] };
  const problem = `setting ${SETTINGS_SECTION}.${key} is invalid: ${parsed.error.issues[0]?.message ?? 'not a valid value'}`;
  return { value: schema.parse(undefined) as ExtensionSettings[K], problem };
}

/**
 * Reads and validates the settings (a wrong value names the setting). USER_SCOPE_ONLY settings take
 * the user's value or the default, never a workspace's; each ignored workspace value is reported.
 */
export function readSettingsFrom(
  source: SettingsSource,
  workspaceKeys: ReadonlySet<string> = new Set(),
  warn: (message: string) => void = () => undefined,
): ExtensionSettings {
  const raw: Record<string, unknown> = {};
  const retention: Record<string, unknown> = {};
  for (const key of USER_SCOPE_ONLY) {
    const value = userValue(source, key, workspaceKeys, warn);
    if (value === undefined || value === null) continue;
    if (key.startsWith('retention.')) retention[key.slice('retention.'.length)] = value;
    else raw[key] = value;
  }
  raw.retention = retention;
  const parsed = ExtensionSettings.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = issue ? `${SETTINGS_SECTION}.${issue.path.join('.')}` : SETTINGS_SECTION;
    throw new SettingsError(`setting ${name} is invalid: ${issue?.message ?? z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}
