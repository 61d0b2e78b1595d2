import type { LedgerEntry } from '../ledger/schema';
import type { ModelEvent, ModelProvider, Usage } from '../model/provider';
import type { Approver, Clock, CommandRunner, Diagnostics, GitCommitter, GitReader, Log, Workspace } from '../ports';
import type { CheckpointStore, TornTailCut } from '../store/contract';
import type { CheckpointRecord, RunFailure, RunSettings, RunStatus, StoredRecord } from '../store/records';
import type { ToolRegistry } from '../tools/registry';
import type { PromptEnvironment } from './system-prompt';

export type { GitReader };

export type RuntimeEvent =
  /** A commit group reached the disk (every save point). */
  | { readonly type: 'records'; readonly runId: string; readonly records: readonly StoredRecord[] }
  | { readonly type: 'checkpoint'; readonly runId: string; readonly checkpoint: CheckpointRecord }
  | { readonly type: 'ledger'; readonly runId: string; readonly entry: LedgerEntry }
  /** Streaming progress of the model call (text deltas, tool_use starts, retries). */
  | { readonly type: 'model'; readonly runId: string; readonly event: ModelEvent }
  | { readonly type: 'status'; readonly runId: string; readonly status: RunStatus; readonly reason?: string }
  /** Opening the run to resume it cut a torn write from the journal's end (also logged as a warning): hosts tell the person. */
  | { readonly type: 'torn_tail_cut'; readonly runId: string; readonly cut: TornTailCut; readonly message: string };

export type RuntimeListener = (event: RuntimeEvent) => void;

export interface RuntimeDeps {
  readonly store: CheckpointStore;
  readonly workspace: Workspace;
  readonly model: ModelProvider;
  readonly approver: Approver;
  readonly commands: CommandRunner;
  readonly clock: Clock;
  readonly log: Log;
  readonly git?: GitReader;
  /** Commits in the workspace's repository (git_commit, git_revert); without it those tools are not offered. */
  readonly gitCommits?: GitCommitter;
  /** Defaults to the built-in tools without overrides. */
  readonly tools?: ToolRegistry;
  /** Globs added to the built-in protected paths (core/tools/protected-paths); they never remove one. */
  readonly protectedPaths?: readonly string[];
  /** USD cost of one call's usage; defaults to the pricing table of core/model/pricing (0 for an unpriced model). */
  readonly costOf?: (model: string, usage: Usage) => number;
  /** Ids of runs and patches; defaults to time + random. */
  readonly newId?: () => string;
  /**
   * The editor's problems, named in a write's result (core/runtime/diagnostics.ts); `none`: the host
   * has no language service (the CLI) and the first write's result of a session says so.
   */
  readonly diagnostics?: Diagnostics | 'none';
}

export interface StartRequest {
  readonly task: string;
  readonly settings: RunSettings;
  /** The system prompt as is (tests); without it, `environment` makes the product's own. */
  readonly system?: string;
  /** Host facts for the product's system prompt (core/runtime/system-prompt), and the instruction files to read. */
  readonly environment?: PromptEnvironment;
}

export type OutcomeStatus = 'completed' | 'failed' | 'paused' | 'cancelled';

export interface RunOutcome {
  readonly runId: string;
  readonly status: OutcomeStatus;
  readonly reason?: string;
  /** A run paused at a limit: which, and its value (a resume may raise it). */
  readonly limit?: { readonly kind: 'turns' | 'tokens' | 'cost'; readonly max: number };
  /** Why it stopped early, as a kind every host words the same (failure.ts); unset for a cancel. */
  readonly failure?: RunFailure;
}

/** Why a run paused because of the user's AbortSignal (shared with the webview: words/statuses.ts). */
export { CANCELLED_REASON } from '../../words/statuses';
