import * as vscode from 'vscode';
import { createAnthropicProvider } from '../../../core/model/anthropic';
import type { ModelProvider } from '../../../core/model/provider';
import type { Clock, Log } from '../../../core/ports';
import { HostClosing, newRunId, ResumeError, type RunOutcome, type RuntimeEvent } from '../../../core/runtime';
import type { CheckpointStore, RunSummary } from '../../../core/store/contract';
import type { RunSettings } from '../../../core/store/records';
import { describeHolder } from '../../../core/store/lease-policy';
import { heldMessage, isResumable } from '../../../core/runtime/resumable';
import type { AgentRuntime } from '../../../core/runtime/runtime';
import type { ApiKeys } from '../window/api-key';
import type { AgentHost, ProviderSources } from '../../node/agent-host/index';
import { chatModelInputLimit, VSCODE_LM_PROVIDER } from './lm/vscode-lm-provider';
import { RunTrace } from './run-trace';
import { runSettingsOf, type ExtensionSettings } from '../window/settings';
import { nodeHostFacts } from '../../node/host-facts';
import { commandShell } from '../window/command-shell';
import { ExtensionProvider } from '../window/settings-read';
import { DEFAULT_MAX_TURNS } from '../../../core/runtime/budget';
import type { ResumeOptions } from '../../../core/runtime/resume';
import { describeRaise, raiseFor } from '../../../core/runtime/instruction';
import { errorText } from '../../../core/error-text';

export class NoApiKeyError extends Error {
  constructor() {
    super('No Anthropic API key: run "Agent: Set API Key" or set ANTHROPIC_API_KEY (or set agentCheckpoints.provider to "replay")');
    this.name = 'NoApiKeyError';
  }
}

export interface ActiveRun {
  readonly runId: string;
  readonly task: string;
  readonly kind: 'start' | 'resume';
  readonly abort: AbortController;
  readonly done: Promise<RunOutcome | undefined>;
}

export interface ControllerDeps {
  readonly store: CheckpointStore;
  readonly clock: Clock;
  readonly log: Log;
  readonly settings: () => ExtensionSettings;
  /** The Node agent host: provider choice, the session's tools (MCP servers, VS Code's), the agents. */
  readonly host: AgentHost;
  /** The commands' network allowlist now, as a run records it at its start (undefined without the allowlist proxy). */
  readonly allowlist?: () => string | undefined;
}

/**
 * Where the extension finds what a model provider needs: the replay file of the settings (read
 * through VS Code), the key of the secret storage or the environment, VS Code's language models.
 */
export function editorProviderSources(deps: {
  readonly apiKeys: ApiKeys;
  readonly settings: () => ExtensionSettings;
  /** Absolute path of a workspace-relative or absolute replay file. */
  readonly resolveFile: (path: string) => vscode.Uri;
  readonly languageModels?: () => ModelProvider;
}): ProviderSources {
  return {
    async replay() {
      const { replayFile } = deps.settings();
      if (replayFile === '') throw new Error('agentCheckpoints.provider is "replay" but agentCheckpoints.replayFile is empty');
      const uri = deps.resolveFile(replayFile);
      return { text: new TextDecoder().decode(await vscode.workspace.fs.readFile(uri)), source: uri.fsPath };
    },
    async apiKey() {
      const key = await deps.apiKeys.get();
      if (!key) throw new NoApiKeyError();
      return key;
    },
    baseUrl: () => deps.settings().baseUrl,
    anthropic: async () => ({ createAnthropicProvider }),
    languageModels: deps.languageModels,
  };
}

export { isInterrupted, isResumable } from '../../../core/runtime/resumable';

/**
 * Owns the one run this window executes at a time: builds the model provider and runtime from
 * the settings and the key, starts, resumes and cancels, and re-broadcasts runtime events.
 */
export class AgentController implements vscode.Disposable {
  private active: ActiveRun | undefined;
  private readonly events = new vscode.EventEmitter<RuntimeEvent>();
  private readonly started = new vscode.EventEmitter<ActiveRun>();
  private readonly finished = new vscode.EventEmitter<{ run: ActiveRun; outcome: RunOutcome | undefined; error?: unknown }>();
  readonly onEvent = this.events.event;
  readonly onDidStart = this.started.event;
  readonly onDidFinish = this.finished.event;

  constructor(private readonly deps: ControllerDeps) {}

  get current(): ActiveRun | undefined {
    return this.active;
  }

  isRunning(runId: string): boolean {
    return this.active?.runId === runId;
  }

  async resumableRuns(): Promise<RunSummary[]> {
    const runs = await this.deps.store.listRuns();
    return runs.filter((r) => isResumable(r) && !this.isRunning(r.runId)).sort((a, b) => b.updatedAt - a.updatedAt);
  }

  /** The runtime of one session and what ends it (the MCP servers it started); `recorded`: the run it goes on with. */
  private async runtime(
    settings: ExtensionSettings,
    recorded?: RunSettings,
  ): Promise<{ runtime: AgentRuntime; close: () => Promise<void> }> {
    const { host } = this.deps;
    const model = await host.provider({
      configured: { kind: settings.provider, model: settings.model },
      recorded,
      available: ExtensionProvider.options,
    });
    const session = await host.open(model, { toolPolicies: settings.toolPolicies, protectedPaths: settings.protectedPaths });
    const trace = new RunTrace(this.deps.log, () => this.deps.clock.now());
    const { runtime } = session.agent((event) => {
      trace.handle(event);
      this.events.fire(event);
    });
    return { runtime, close: () => session.close() };
  }

  private launch(runId: string, task: string, kind: ActiveRun['kind'], body: (signal: AbortSignal) => Promise<RunOutcome>): ActiveRun {
    const abort = new AbortController();
    let resolveDone!: (outcome: RunOutcome | undefined) => void;
    const done = new Promise<RunOutcome | undefined>((r) => (resolveDone = r));
    const run: ActiveRun = { runId, task, kind, abort, done };
    this.active = run;
    this.started.fire(run);
    const began = this.deps.clock.now();
    void body(abort.signal).then(
      (outcome) => {
        this.deps.log.log(
          'info',
          `[${runId}] ${kind} ended ${outcome.status} after ${this.deps.clock.now() - began} ms${outcome.reason !== undefined ? `: ${outcome.reason}` : ''}`,
        );
        this.settle(run, outcome);
        resolveDone(outcome);
      },
      (error: unknown) => {
        this.deps.log.log('error', `[${runId}] ${kind} failed: ${errorText(error)}`);
        this.settle(run, undefined, error);
        resolveDone(undefined);
      },
    );
    return run;
  }

  private settle(run: ActiveRun, outcome: RunOutcome | undefined, error?: unknown): void {
    if (this.active === run) this.active = undefined;
    this.finished.fire({ run, outcome, ...(error !== undefined ? { error } : {}) });
  }

  /** Starts a run; throws before anything is recorded when the provider cannot be built. */
  async start(task: string): Promise<ActiveRun> {
    this.refuseWhileBusy();
    const settings = this.deps.settings();
    const { runtime, close } = await this.runtime(settings);
    this.refuseWhileBusy(close);
    const runId = newRunId(this.deps.clock.now());
    this.deps.log.log('info', `[${runId}] start: ${task.length > 200 ? `${task.slice(0, 200)}...` : task}`);
    const runSettings = await this.withModelWindow(runSettingsOf(settings, this.deps.allowlist?.()));
    return this.launch(runId, task, 'start', (signal) =>
      runtime
        .start(
          {
            runId,
            task,
            settings: runSettings,
            environment: {
              host: nodeHostFacts(process.env, settings.sandbox === 'auto', commandShell(), settings.commandNetwork),
              instructionFiles: settings.instructionFiles,
            },
          },
          signal,
        )
        .finally(close),
    );
  }

  /**
   * A VS Code language model's context budget is its own `maxInputTokens` (the model table knows
   * only Anthropic's), or the setting when that is smaller; recorded in the run, so a resume keeps it.
   */
  private async withModelWindow(settings: RunSettings): Promise<RunSettings> {
    if (settings.provider !== VSCODE_LM_PROVIDER) return settings;
    const window = await chatModelInputLimit(settings.model).catch(() => undefined);
    if (window === undefined) return settings;
    const budget = Math.min(settings.maxContextTokens ?? window, window);
    this.deps.log.log('info', `model ${settings.model}: context budget ${budget} tokens (the model takes ${window})`);
    return { ...settings, maxContextTokens: budget };
  }

  /** The maxTurns setting: how many turns "+N turns" adds to a run paused at its turn limit. */
  turnsPerRun(): number {
    try {
      return this.deps.settings().maxTurns;
    } catch {
      return DEFAULT_MAX_TURNS;
    }
  }

  /**
   * Resumes a run. A run another live writer holds is refused, naming it, unless `takeOver`
   * (the person chose to): then that writer is fenced off first and stops at its next write.
   */
  async resume(runId: string, options: ResumeOptions & { takeOver?: boolean } = {}): Promise<ActiveRun> {
    this.refuseWhileBusy();
    const summary = (await this.deps.store.listRuns()).find((r) => r.runId === runId);
    const takeOver = summary?.leased === true && options.takeOver === true && this.deps.store.fenceLease !== undefined;
    if (summary?.leased && !takeOver)
      throw new ResumeError(
        heldMessage(summary, this.deps.clock.now()).replace('it was not resumed', 'take it over from the Timeline'),
        'lease_held',
      );
    // Checked before the session starts anything (its MCP servers); fenced once it can write.
    const { runtime, close } = await this.runtime(this.deps.settings(), await this.recordedSettings(runId));
    this.refuseWhileBusy(close);
    if (takeOver) {
      const holder = summary?.holder ? describeHolder(summary.holder, this.deps.clock.now()) : 'another writer';
      this.deps.log.log('warn', `[${runId}] taking over from ${holder}`);
      await this.deps.store.fenceLease!(runId);
    }
    this.deps.log.log('info', `[${runId}] resume`);
    const { takeOver: _taken, ...resumeOptions } = options;
    return this.launch(runId, summary?.task ?? runId, 'resume', (signal) => runtime.resume(runId, signal, resumeOptions).finally(close));
  }

  /**
   * A new instruction for a stopped run of this workspace; a limit it had reached is raised
   * (turns by the maxTurns setting). `raised` says by how much, when it was.
   */
  async continueRun(runId: string, instruction: string, undo?: readonly string[]): Promise<{ run: ActiveRun; raised?: string }> {
    this.refuseWhileBusy();
    const summary = (await this.deps.store.listRuns()).find((r) => r.runId === runId);
    if (!summary) throw new ResumeError(`run ${runId} is not in this workspace's store`, 'not_found');
    if (summary.leased) throw new ResumeError(heldMessage(summary, this.deps.clock.now()), 'lease_held');
    const { budget, run: recorded } = await this.deps.store.readResumeState(runId);
    const limit = raiseFor(budget, this.turnsPerRun());
    const { runtime, close } = await this.runtime(this.deps.settings(), recorded.settings);
    this.refuseWhileBusy(close);
    this.deps.log.log('info', `[${runId}] new instruction${limit ? ` (${describeRaise(limit.raised)})` : ''}`);
    const run = this.launch(runId, summary.task, 'resume', (signal) =>
      runtime.continue(runId, instruction, signal, { moreTurns: this.turnsPerRun(), ...(undo ? { undo } : {}) }).finally(close),
    );
    return { run, ...(limit ? { raised: describeRaise(limit.raised) } : {}) };
  }

  /** The settings a run was started with: it goes on with their provider and model (its messages are in the run's own format either way). */
  private async recordedSettings(runId: string): Promise<RunSettings> {
    return (await this.deps.store.readResumeState(runId)).run.settings;
  }

  private refuseWhileBusy(close?: () => Promise<void>): void {
    if (this.active) void close?.();
    if (this.active) throw new Error(`run ${this.active.runId} is still running: cancel it or wait for it to finish`);
  }

  /** Cancels the current run (it pauses at the next safe point); false when nothing runs. */
  cancel(): boolean {
    if (!this.active) return false;
    this.deps.log.log('info', `[${this.active.runId}] cancel requested`);
    this.active.abort.abort();
    return true;
  }

  /** The window closes or reloads: the run is recorded interrupted (not cancelled) and offered again when a window opens. */
  dispose(): void {
    this.active?.abort.abort(new HostClosing());
    this.events.dispose();
    this.started.dispose();
    this.finished.dispose();
  }
}
