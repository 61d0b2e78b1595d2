import * as vscode from 'vscode';
import { z } from 'zod';
import { DEFAULT_MODEL } from '../../core/model/anthropic';
import { DEFAULT_MAX_OUTPUT_TOKENS, DEFAULT_MAX_TURNS } from '../../core/runtime/budget';
import type { RunSettings } from '../../core/store/records';
import { ToolPolicyOverrides } from '../../core/tools/registry';

export const SETTINGS_SECTION = 'agentCheckpoints';

const positiveOrUnset = z
  .number()
  .positive()
  .nullish()
  .transform((v) => v ?? undefined);

// Long runs (issue 18): context budget and extended thinking.
const LONG_RUN_KEYS = ['maxContextTokens', 'thinking', 'thinkingBudgetTokens'] as const;
const LongRunSettings = {
  maxContextTokens: positiveOrUnset.pipe(z.number().int().optional()),
  thinking: z.enum(['off', 'adaptive', 'enabled']).default('off'),
  thinkingBudgetTokens: z.number().int().min(1024).default(4096),
};

function longRunSettingsOf(settings: ExtensionSettings): Pick<RunSettings, 'maxContextTokens' | 'thinking'> {
  return {
    ...(settings.maxContextTokens !== undefined ? { maxContextTokens: settings.maxContextTokens } : {}),
    ...(settings.thinking === 'adaptive' ? { thinking: { type: 'adaptive' as const } } : {}),
    ...(settings.thinking === 'enabled' ? { thinking: { type: 'enabled' as const, budgetTokens: settings.thinkingBudgetTokens } } : {}),
  };
}

/** `agentCheckpoints.*` as the extension uses them; a bad value is reported, never guessed. */
export const ExtensionSettings = z.object({
  ...LongRunSettings,
  provider: z.enum(['anthropic', 'replay']).default('anthropic'),
  replayFile: z.string().default(''),
  model: z.string().min(1).default(DEFAULT_MODEL),
  baseUrl: z.string().default(''),
  maxTurns: z.number().int().positive().default(DEFAULT_MAX_TURNS),
  maxTokens: positiveOrUnset.pipe(z.number().int().optional()),
  maxCostUsd: positiveOrUnset,
  maxOutputTokensPerCall: z.number().int().positive().default(DEFAULT_MAX_OUTPUT_TOKENS),
  toolPolicies: ToolPolicyOverrides.default({}),
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

const KEYS = [
  'provider',
  'replayFile',
  'model',
  'baseUrl',
  'maxTurns',
  'maxTokens',
  'maxCostUsd',
  'maxOutputTokensPerCall',
  'toolPolicies',
  ...LONG_RUN_KEYS,
] as const;

/** Reads and validates the settings (a wrong value names the setting). */
export function readSettings(
  config: Pick<vscode.WorkspaceConfiguration, 'get'> = vscode.workspace.getConfiguration(SETTINGS_SECTION),
): ExtensionSettings {
  const raw: Record<string, unknown> = {};
  for (const key of KEYS) {
    const value = config.get<unknown>(key);
    if (value !== undefined) raw[key] = value;
  }
  raw.retention = {
    maxBytes: config.get<unknown>('retention.maxBytes') ?? undefined,
    maxRuns: config.get<unknown>('retention.maxRuns') ?? undefined,
  };
  const parsed = ExtensionSettings.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = issue ? `${SETTINGS_SECTION}.${issue.path.join('.')}` : SETTINGS_SECTION;
    throw new SettingsError(`setting ${name} is invalid: ${issue?.message ?? z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}

/** The part of the settings a run records (never a credential). */
export function runSettingsOf(settings: ExtensionSettings): RunSettings {
  return {
    model: settings.model,
    provider: settings.provider,
    maxTurns: settings.maxTurns,
    ...(settings.maxTokens !== undefined ? { maxTokens: settings.maxTokens } : {}),
    ...(settings.maxCostUsd !== undefined ? { maxCostUsd: settings.maxCostUsd } : {}),
    maxOutputTokensPerCall: settings.maxOutputTokensPerCall,
    ...longRunSettingsOf(settings),
  };
}
