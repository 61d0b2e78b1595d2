import { deprecationWarning } from '../model/models';
import { priceOf } from '../model/pricing';
import { costLimitWarning } from './budget';
import { systemClock } from '../ports';
import type { RunWriter } from '../store/contract';
import type { GitFacts, NewRecord, RunSettings } from '../store/records';
import { createToolRegistry, type ToolRegistry } from '../tools/registry';
import type { CallEnv } from './calls';
import { guardStore } from './errors';
import { loopSteps, runGuarded } from './loop';
import { continueWithInstruction, type ContinueOptions } from './instruction';
import { resumeRun, type ResumeOptions } from './resume';
import { RunSession, type RunInfo } from './session';
import { composeRunPrompt } from './system-prompt';
import { thinkingParam } from './request';
import type { RunOutcome, RuntimeDeps, RuntimeEvent, RuntimeListener, StartRequest } from './types';

const NO_GIT: GitFacts = { isRepo: false, dirtyPaths: [] };

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** Sortable, readable run id: 20260130-142501-k3f9qz. */
export function newRunId(now: number): string {
  const d = new Date(now);
  const stamp = `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}-${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}`;
  return `${stamp}-${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * The agent: runs and resumes durable tool-use runs. Every save point is on disk before the
 * effect it announces; `onEvent` lets hosts follow progress.
 */
export class AgentRuntime {
  private readonly listeners = new Set<RuntimeListener>();
  private readonly tools: ToolRegistry;

  constructor(private readonly deps: RuntimeDeps) {
    this.tools = deps.tools ?? createToolRegistry({ workspace: deps.workspace, git: deps.gitCommits !== undefined });
  }

  /** Subscribes to runtime events; returns the unsubscribe function. */
  onEvent(listener: RuntimeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts a new run. Throws only when the run cannot even be created in the store. */
  async start(request: StartRequest & { runId?: string }, signal: AbortSignal = new AbortController().signal): Promise<RunOutcome> {
    const { writer, session } = await this.create(request);
    const env: CallEnv = { session, tools: this.tools, signal, truncated: new Set() };
    try {
      return await runGuarded(session, signal, async () => {
        await this.firstSavePoint(session, request);
        return loopSteps(env);
      });
    } finally {
      await writer.close().catch(() => undefined);
    }
  }

  /**
   * Creates a run and its first save point (the task), then lets it go: it waits, as a run cut
   * right after its start does, for a worker or a person to resume it. Returns its id.
   */
  async queue(request: StartRequest & { runId?: string }): Promise<string> {
    const { writer, session } = await this.create(request);
    try {
      await guardStore(() => this.firstSavePoint(session, request));
      return session.runId;
    } finally {
      await writer.close().catch(() => undefined);
    }
  }

  private async create(request: StartRequest & { runId?: string }): Promise<{ writer: RunWriter; session: RunSession }> {
    const { deps } = this;
    const clock = deps.clock ?? systemClock;
    const root = deps.workspace.roots[0];
    const git = deps.git && root !== undefined ? await deps.git.facts(root).catch(() => NO_GIT) : NO_GIT;
    const createdAt = clock.now();
    const composed =
      request.system === undefined && request.environment !== undefined
        ? await composeRunPrompt(
            deps.workspace,
            this.tools.specs().map((spec) => spec.name),
            request.environment,
            createdAt,
          )
        : undefined;
    const system = request.system ?? composed?.system;
    const run: RunInfo = {
      runId: request.runId ?? deps.newId?.() ?? newRunId(createdAt),
      task: request.task,
      createdAt,
      workspaceFolders: [...deps.workspace.roots],
      git,
      settings: request.settings,
      ...(system !== undefined ? { system } : {}),
      tools: this.tools.specs().map((spec) => ({ ...spec })),
      thinkingSent: thinkingParam(request.settings) ?? { type: 'none' },
      ...(composed !== undefined ? { prompt: composed.prompt } : {}),
    };
    const writer = await guardStore(() => deps.store.createRun(run));
    return { writer, session: new RunSession(deps, writer, run, this.emit) };
  }

  private async firstSavePoint(session: RunSession, request: StartRequest): Promise<void> {
    const { deps } = this;
    const priced = deps.costOf !== undefined || priceOf(request.settings.model) !== undefined;
    const warnings = [
      deprecationWarning(request.settings.model),
      costLimitWarning(request.settings, priced),
      unsandboxedWarning(
        request.settings,
        this.tools.specs().map((spec) => spec.name),
      ),
    ].filter((w): w is string => w !== undefined);
    for (const warning of warnings) deps.log.log('warn', warning);
    const notes: NewRecord[] = warnings.map((text) => ({ type: 'note', kind: 'warning', text }));
    await session.save('run_start', [...notes, session.messageRecord({ role: 'user', content: request.task })]);
  }

  /**
   * Resumes a run after any interruption. A run that already ended is not resumed (its outcome
   * says so); a missing, damaged, newer-format or held run throws ResumeError.
   */
  resume(runId: string, signal: AbortSignal = new AbortController().signal, options: ResumeOptions = {}): Promise<RunOutcome> {
    return resumeRun(this.deps, this.tools, this.emit, runId, signal, options);
  }

  /**
   * Gives a stopped run (completed, failed, paused, cancelled) a new instruction and runs on;
   * a limit it had reached is raised first (turns by `moreTurns`). Throws ResumeError when the
   * run cannot take one (running, interrupted, held, damaged), with nothing written.
   */
  continue(runId: string, instruction: string, signal: AbortSignal, options: ContinueOptions): Promise<RunOutcome> {
    return continueWithInstruction(this.deps, this.tools, this.emit, { runId, instruction, signal, options });
  }

  private readonly emit = (event: RuntimeEvent): void => {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.deps.log.log('warn', `runtime event listener failed: ${String(error)}`);
      }
    }
  };
}

/**
 * Said at the start of a run whose commands run without a sandbox (switched off, or none on this
 * machine), so the Timeline's run header and the CLI show it plainly, not only each result.
 */
export function unsandboxedWarning(settings: RunSettings, tools: readonly string[]): string | undefined {
  const sandbox = settings.commands?.sandbox;
  if (!tools.includes('run_command') || (sandbox !== 'off' && sandbox !== 'unavailable')) return undefined;
  const why = sandbox === 'off' ? 'the sandbox is switched off' : 'this machine has no sandbox for them';
  return `commands in this run run WITHOUT a sandbox (${why}): each can read and change anything your user can; each still asks for your approval unless you allowed commands`;
}
