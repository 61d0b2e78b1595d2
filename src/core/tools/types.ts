import type { Inverse } from '../ledger/inverse';
import type { z } from 'zod';
import type { FileIntent, Idempotency, ReplayPolicy } from '../ledger/schema';
import type { Patch } from '../patches/schema';
import type { CommandRunner, Workspace } from '../ports';

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
  /** The optional Workspace capability the tool cannot work without; a workspace lacking it is not offered the tool. */
  readonly needs?: 'searchText' | 'findFiles' | 'listTree';
  readonly idempotency: Idempotency;
  readonly replayPolicy: ReplayPolicy;
  readonly sideEffects: readonly string[];
  /** How to undo the effect, or "not reversible". */
  readonly compensation: string;
  /** Its declared inverse call (an MCP server's config), when it has one. */
  readonly inverse?: Inverse;
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
