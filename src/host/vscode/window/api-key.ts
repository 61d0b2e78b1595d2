import type * as vscode from 'vscode';

export const API_KEY_SECRET = 'agentCheckpoints.anthropicApiKey';
export const API_KEY_ENV = 'ANTHROPIC_API_KEY';

export interface ApiKey {
  readonly key: string;
  readonly source: 'secret storage' | 'environment';
}

/**
 * The Anthropic API key: VS Code SecretStorage first, then ANTHROPIC_API_KEY. It is handed to
 * the model provider only; `known()` lets the log scrub every key it has seen.
 */
export class ApiKeys {
  private readonly seen = new Set<string>();

  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    const fromEnv = env[API_KEY_ENV];
    if (fromEnv) this.seen.add(fromEnv);
  }

  async get(): Promise<ApiKey | undefined> {
    const stored = await this.secrets.get(API_KEY_SECRET);
    if (stored) {
      this.seen.add(stored);
      return { key: stored, source: 'secret storage' };
    }
    const fromEnv = this.env[API_KEY_ENV];
    return fromEnv ? { key: fromEnv, source: 'environment' } : undefined;
  }

  async set(key: string): Promise<void> {
    const trimmed = key.trim();
    this.seen.add(trimmed);
    await this.secrets.store(API_KEY_SECRET, trimmed);
  }

  async clear(): Promise<void> {
    await this.secrets.delete(API_KEY_SECRET);
  }

  /** Every key value this session knows of, for scrubbing. */
  known(): readonly string[] {
    return [...this.seen];
  }
}

/**
 * The warning to log once when the key sits in the extension host's own environment: the
 * extension cannot take it out of there, and a process the agent starts could read it from an
 * ancestor's start-up environment (`/proc/<pid>/environ`). Undefined when it does not.
 */
export function keyInHostEnvironmentWarning(env: NodeJS.ProcessEnv): string | undefined {
  if (!env[API_KEY_ENV] && !env['ANTHROPIC_AUTH_TOKEN']) return undefined;
  return `${env[API_KEY_ENV] ? API_KEY_ENV : 'ANTHROPIC_AUTH_TOKEN'} is in the environment VS Code was started with: commands the agent runs do not get it, but one could read it from the editor's own process environment. Fix: run "Agent: Set API Key" (the key is then kept in VS Code's secret storage), unset the variable and restart VS Code.`;
}
