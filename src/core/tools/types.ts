import type { Inverse } from '../ledger/inverse';
import type { z } from 'zod';
import type { FileIntent, Idempotency, ReplayPolicy } from '../ledger/schema';
import type { Patch } from '../patches/schema';
import type { RunReview } from '../patches/review-load';
import type { CommandRunner, GitCommitter, Workspace } from '../ports';

/** A file change a tool intends to make, with the bytes (null = absent: create / delete). */
export interface PreparedWrite extends FileIntent {
  readonly before: Uint8Array | null;
  readonly after: Uint8Array | null;
}

export interface ToolContext {
  readonly runId: string;
  readonly callId: string;
  readonly stepId: number;
  readonly workspace: Workspace;
  readonly commands: CommandRunner;
  readonly signal: AbortSignal;
  /** The host's git commits (git_commit, git_revert); undefined where the host has none. */
  readonly git?: GitCommitter;
  /** The run's patches and review decisions as the store holds them now (Keep in the review). */
  runReview?(): Promise<RunReview>;
  /** What the person was shown and approved for this call (approvalSummary), when asked in this process. */
  readonly approved?: string;
  /**
   * Performs one prepared write durably: before/after blobs stored, Workspace.write (or delete)
   * with the expected before-hash, patch record persisted (the file_written save point).
   */
  applyWrite(write: PreparedWrite): Promise<Patch>;
}

export interface ToolOutput {
  /** Text of the tool_result block. */
  readonly content: string;
  readonly isError?: boolean;
  /** Runs once the call's result is on disk (run_command: drops its captured change set only then). */
  readonly afterRecorded?: () => Promise<void>;
  /** Everything the call did is held by its patches (run_command held to its view): recorded on its ledger entry. */
  readonly contained?: boolean;
}

export interface ToolDefinition<I = unknown> {
  readonly name: string;
  readonly description: string;
  readonly input: z.ZodType<I>;
  /**
   * The JSON schema the model sees, for a tool defined outside the extension (MCP, VS Code tools);
   * built-in tools leave it out and the schema comes from `input`.
   */
  readonly inputSchema?: Readonly<Record<string, unknown>>;
  /** The optional Workspace capability the tool cannot work without (`git`: the host's git commits); lacking it, the tool is not offered. */
  readonly needs?: 'searchText' | 'findFiles' | 'listTree' | 'git';
  readonly idempotency: Idempotency;
  readonly replayPolicy: ReplayPolicy;
  readonly sideEffects: readonly string[];
  /**
   * It only reads, so the calls of one answer marked so run at once (a few at a time): the
   * built-in read tools, and an external tool only where the person trusted its server for that.
   */
  readonly concurrentRead?: boolean;
  /** How to undo the effect, or "not reversible". */
  readonly compensation: string;
  /** Its declared inverse call (an MCP server's config), when it has one. */
  readonly inverse?: Inverse;
  /** Set when every call is asked, whatever was allowed for the run (and never by the CLI's --yes): why, as the person is told. */
  readonly alwaysAsk?: string;
  /**
   * What the person is shown when asked, computed from the live state (git_commit: the exact commands,
   * files, message and author); a ToolError here fails the call before anyone is asked.
   */
  approvalSummary?(input: I, ctx: ToolContext): Promise<string>;
  /** One line for the ledger, the approvals prompt and the timeline. */
  summarize(input: I): string;
  /** File tools: the paths a call writes or deletes, as the model named them (checked against the protected paths before approval). */
  writesPaths?(input: I): readonly string[];
  /**
   * File tools: compute the writes from live content BEFORE the call is marked started, so the
   * intents are on disk first (write-ahead) and a resume can probe them.
   */
  prepare?(input: I, ctx: ToolContext): Promise<readonly PreparedWrite[]>;
  execute(input: I, ctx: ToolContext, prepared: readonly PreparedWrite[]): Promise<ToolOutput>;
  /**
   * Optional, for a call cut by the end of its host (started, no result): settles what it left
   * without running it again (run_command: applies the change set its view kept). Undefined when
   * there is nothing to settle: the usual reconciliation follows.
   */
  settle?(input: I, ctx: ToolContext): Promise<ToolOutput | undefined>;
}
