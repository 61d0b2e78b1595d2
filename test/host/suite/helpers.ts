import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs, type Dirent } from 'node:fs';
import * as nodePath from 'node:path';
import * as vscode from 'vscode';
import type { AgentCheckpointsApi } from '../../../src/host/vscode/api';
import type { MessageKind, MessageOptions, Prompts } from '../../../src/host/vscode/window/prompts';
import { startFakeAnthropic, type FakeAnthropic, type ScriptEntry } from '../../support/fake-anthropic/server';
import { EXTENSION_ID } from './activation.test';

/** A key shaped like a real one, so both the exact-value and the key-shape scrubbing are exercised. */
export const TEST_API_KEY = 'sk-ant-api03-hosttest-0123456789abcdefSECRET';

/** A model id the SDK has no deprecation notice for. */
export const FAKE_MODEL = 'claude-host-test';

export async function extensionApi(): Promise<AgentCheckpointsApi> {
  const ext = vscode.extensions.getExtension<AgentCheckpointsApi>(EXTENSION_ID);
  if (!ext) throw new Error(`${EXTENSION_ID} is not installed`);
  return ext.activate();
}

export function extensionPath(): string {
  return vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath;
}

export function workspaceRoot(): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) throw new Error('the host tests need a workspace folder');
  return folder.uri.fsPath;
}

export interface ShownMessage {
  readonly kind: MessageKind;
  readonly text: string;
  readonly actions: readonly string[];
  readonly detail?: string;
}

type MessageAnswer = (message: ShownMessage) => string | undefined;

/** Prompts that answer from a script and record every message shown. */
export class ScriptedPrompts implements Prompts {
  readonly messages: ShownMessage[] = [];
  readonly inputs: string[] = [];
  readonly answers: Array<{ match: RegExp; action: string }> = [];
  pick: (items: readonly vscode.QuickPickItem[]) => vscode.QuickPickItem | undefined = (items) => items[0];

  /** Answers messages whose text matches with the action (first match wins). */
  answer(match: RegExp, action: string): this {
    this.answers.push({ match, action });
    return this;
  }

  async inputBox(): Promise<string | undefined> {
    return this.inputs.shift();
  }

  async quickPick<T extends vscode.QuickPickItem>(items: readonly T[]): Promise<T | undefined> {
    return this.pick(items) as T | undefined;
  }

  async message(kind: MessageKind, text: string, options: MessageOptions, ...actions: string[]): Promise<string | undefined> {
    const shown = { kind, text, actions, ...(options.detail !== undefined ? { detail: options.detail } : {}) };
    this.messages.push(shown);
    const answer: MessageAnswer = (m) => this.answers.find((a) => a.match.test(m.text) && m.actions.includes(a.action))?.action;
    return answer(shown);
  }

  saw(match: RegExp): ShownMessage | undefined {
    return this.messages.find((m) => match.test(m.text));
  }
}

export interface FakeModel {
  readonly server: FakeAnthropic;
  readonly prompts: ScriptedPrompts;
  dispose(): Promise<void>;
}

const config = () => vscode.workspace.getConfiguration('agentCheckpoints');

/**
 * Points the extension at a loopback fake Messages API, stores the test key through
 * "Agent: Set API Key" (scripted input box) and installs scripted prompts.
 */
export async function useFakeModel(api: AgentCheckpointsApi, script: readonly ScriptEntry[]): Promise<FakeModel> {
  const server = await startFakeAnthropic(script);
  await config().update('provider', 'anthropic', vscode.ConfigurationTarget.Global);
  await config().update('baseUrl', server.url, vscode.ConfigurationTarget.Global);
  await config().update('model', FAKE_MODEL, vscode.ConfigurationTarget.Global);
  const prompts = new ScriptedPrompts();
  api.usePrompts(prompts);
  prompts.inputs.push(TEST_API_KEY);
  await vscode.commands.executeCommand('agentCheckpoints.setApiKey');
  return {
    server,
    prompts,
    async dispose() {
      api.usePrompts(undefined);
      await config().update('baseUrl', undefined, vscode.ConfigurationTarget.Global);
      await config().update('model', undefined, vscode.ConfigurationTarget.Global);
      await server.close();
    },
  };
}

export async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function writeWorkspaceFile(relative: string, text: string): Promise<vscode.Uri> {
  const path = nodePath.join(workspaceRoot(), relative);
  await fs.mkdir(nodePath.dirname(path), { recursive: true });
  await fs.writeFile(path, text);
  return vscode.Uri.file(path);
}

export async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  let entries: Dirent[];
  try {
    entries = await fs.readdir(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    const path = nodePath.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(path)));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

export function toolUse(id: string, name: string, input: unknown) {
  return { content: [{ type: 'tool_use' as const, id, name, input }], stop_reason: 'tool_use' };
}

export function finalAnswer(text: string) {
  return { content: [{ type: 'text' as const, text }], stop_reason: 'end_turn' };
}

export async function readOrEmpty(path: string): Promise<string> {
  return fs.readFile(path, 'utf8').catch(() => '');
}

/**
 * What a sandboxed command wrote to `path` so far, read in its copy-on-write view (the store's
 * `command-views/<view>/u<n>/...`): its writes reach the workspace only once it ended and they were
 * applied. '' while it wrote nothing there.
 */
export async function writtenInView(storagePath: string, path: string): Promise<string> {
  const name = nodePath.basename(path);
  const walk = async (dir: string, depth: number): Promise<string> => {
    const entries: Dirent[] = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const full = nodePath.join(dir, entry.name);
      if (entry.isFile() && entry.name === name) return readOrEmpty(full);
      if (entry.isDirectory() && depth < 6) {
        const found = await walk(full, depth + 1);
        if (found !== '') return found;
      }
    }
    return '';
  };
  return walk(nodePath.join(storagePath, 'command-views'), 0);
}

export interface HeadlessRun {
  readonly proc: ChildProcess;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
  /** Settles once every process of the CLI is gone (it re-executes itself without the key; both hold its output). */
  readonly closed: Promise<number | null>;
}

/** Starts the shipped CLI on this workspace and the extension's store: another writer of the same runs. */
export function startHeadlessRun(api: AgentCheckpointsApi, fake: FakeModel, task: string): HeadlessRun {
  const args = ['run', '--workspace', workspaceRoot(), '--store', api.storagePath, '--task', task];
  const proc = spawn(
    process.execPath,
    [nodePath.join(extensionPath(), 'dist/cli.js'), ...args, '--base-url', fake.server.url, '--model', FAKE_MODEL, '--yes', '--trust'],
    { env: { ...process.env, ANTHROPIC_API_KEY: TEST_API_KEY }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  proc.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const closed = new Promise<number | null>((resolve) => proc.once('close', (code) => resolve(code)));
  return { proc, output: () => output, closed };
}

/**
 * A file for a test's commands to append to, inside the workspace: commands run in the sandbox,
 * which sees the workspace but has a private /tmp.
 */
export async function workspaceCounter(name: string): Promise<string> {
  const dir = await fs.mkdtemp(nodePath.join(workspaceRoot(), `.counter-${name}-`));
  return nodePath.join(dir, 'executions.txt');
}
