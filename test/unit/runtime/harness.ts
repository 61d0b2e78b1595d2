import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createAnthropicProvider } from '../../../src/core/model/anthropic';
import type { ModelProvider } from '../../../src/core/model/provider';
import type {
  ApprovalDecision,
  ApprovalRequest,
  Approver,
  CommandRunner,
  UncertainChoice,
  UncertainRequest,
  Workspace,
} from '../../../src/core/ports';
import { silentLog } from '../../../src/core/ports';
import { HostClosing } from '../../../src/core/runtime/failure';
import { RECOVERY_NOTE_MARKER } from '../../../src/core/runtime/recovery-note';
import { buildAgent } from '../../../src/core/runtime/agent';
import type { AgentRuntime } from '../../../src/core/runtime/runtime';
import type { RuntimeDeps, RuntimeEvent } from '../../../src/core/runtime/types';
import type { CheckpointStore } from '../../../src/core/store/contract';
import { MemoryCheckpointStore } from '../../support/memory-store';
import type { RunSettings, StoredRecord } from '../../../src/core/store/records';
import { createNodeCommandRunner } from '../../../src/host/node/command-runner';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { openFileStore } from '../../../src/host/node/store-factory';
import {
  startFakeAnthropic,
  type FakeAnthropic,
  type FakeAnthropicOptions,
  type Responder,
  type ResponseStep,
  type ScriptEntry,
} from '../../support/fake-anthropic/server';

export const SETTINGS: RunSettings = { model: 'claude-sonnet-4-6', provider: 'anthropic', maxTurns: 20, maxOutputTokensPerCall: 1024 };

/** An approver that answers from queues and remembers every question. */
export class ScriptedApprover implements Approver {
  readonly approvals: ApprovalRequest[] = [];
  readonly uncertain: UncertainRequest[] = [];
  constructor(
    private readonly decisions: ApprovalDecision[] = [],
    private readonly choices: (UncertainChoice | null)[] = [],
  ) {}
  async approve(request: ApprovalRequest): Promise<ApprovalDecision> {
    this.approvals.push(request);
    const decision = this.decisions.shift();
    if (decision === undefined) throw new Error(`unexpected approval request for ${request.callId}`);
    return decision;
  }
  async askUncertain(request: UncertainRequest): Promise<UncertainChoice | null> {
    this.uncertain.push(request);
    return this.choices.shift() ?? null;
  }
}

/** Counts commands; runs them for real in the workspace. */
export function countingRunner(): CommandRunner & { commands: string[] } {
  const real = createNodeCommandRunner();
  const commands: string[] = [];
  return {
    commands,
    run(command, options) {
      commands.push(command);
      return real.run(command, options);
    },
  };
}

const madeDirs: string[] = [];

/** A fresh folder under the system's temp folder; whatever a test leaves in it is removed when the test process exits. */
export function tempDir(prefix: string): string {
  if (madeDirs.length === 0)
    process.once('exit', () => {
      for (const dir of madeDirs)
        try {
          rmSync(dir, { recursive: true, force: true });
        } catch {
          // A folder a test made unreadable or a mount left in it: left for the system's cleaner.
        }
    });
  const dir = mkdtempSync(join(tmpdir(), `ac-${prefix}-`));
  madeDirs.push(dir);
  return dir;
}

export function writeFiles(root: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}

export function readText(root: string, path: string): string {
  return readFileSync(join(root, path), 'utf8');
}

export type StoreKind = 'memory' | 'file';

export interface Harness {
  readonly root: string;
  readonly store: CheckpointStore;
  readonly fake: FakeAnthropic;
  readonly approver: ScriptedApprover;
  readonly commands: ReturnType<typeof countingRunner>;
  readonly events: RuntimeEvent[];
  runtime(overrides?: Partial<RuntimeDeps>): AgentRuntime;
  records(runId: string): Promise<readonly StoredRecord[]>;
  close(): Promise<void>;
}

export async function harness(
  options: {
    files?: Record<string, string>;
    script?: ScriptEntry[] | Responder;
    approver?: ScriptedApprover;
    store?: StoreKind;
    fake?: FakeAnthropicOptions;
  } = {},
): Promise<Harness> {
  const root = tempDir('ws');
  const storeDir = tempDir('store');
  writeFiles(root, options.files ?? {});
  const fake = await startFakeAnthropic(options.script ?? [], options.fake);
  const store: CheckpointStore = options.store === 'file' ? openFileStore(storeDir) : new MemoryCheckpointStore();
  const approver = options.approver ?? new ScriptedApprover();
  const commands = countingRunner();
  const events: RuntimeEvent[] = [];
  const model: ModelProvider = createAnthropicProvider({ apiKey: 'sk-test-key', baseURL: fake.url, maxRetries: 3, streamRetryDelayMs: 5 });
  return {
    root,
    store,
    fake,
    approver,
    commands,
    events,
    runtime(overrides = {}) {
      return buildAgent({
        store,
        workspace: new NodeWorkspace({ roots: [root], storeDir }),
        model,
        approver,
        commands,
        clock: { now: () => Date.now() },
        log: silentLog,
        output: (event) => events.push(event),
        ...overrides,
      }).runtime;
    },
    records: (runId) => store.readRecords(runId),
    async close() {
      await fake.close();
      rmSync(root, { recursive: true, force: true });
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}

export function toolUse(id: string, name: string, input: unknown): ResponseStep['content'][number] {
  return { type: 'tool_use', id, name, input };
}

export function reply(
  content: ResponseStep['content'],
  stop_reason = 'tool_use',
  usage = { input_tokens: 100, output_tokens: 20 },
): ResponseStep {
  return { content, stop_reason, usage };
}

export function answer(text: string): ResponseStep {
  return reply([{ type: 'text', text }], 'end_turn');
}

/** Save point labels (with call ids) in journal order, plus `message` markers for user messages. */
export function savePoints(records: readonly StoredRecord[]): string[] {
  return records.flatMap((r) => {
    if (r.type === 'checkpoint') return [r.callId ? `${r.label}:${r.callId}` : r.label];
    if (r.type === 'message' && r.message.role === 'user') return ['user_message'];
    return [];
  });
}

/**
 * The messages of the n-th request the fake server received, without the cache_control marks
 * added to the request, string content as the one text block it means (a marked message is sent
 * in that form).
 */
export function requestMessages(fake: FakeAnthropic, n: number): unknown[] {
  const body = fake.requests[n]?.body as { messages?: { role: string; content: unknown }[] } | undefined;
  if (!body?.messages) throw new Error(`request ${n} has no messages`);
  return body.messages.map(({ role, content }) => {
    const blocks = typeof content === 'string' ? [{ type: 'text', text: content }] : (content as Record<string, unknown>[]);
    return { role, content: blocks.map(({ cache_control: _mark, ...block }) => block) };
  });
}

/**
 * The tool_result blocks of the last user message of a request, each content as the tool gave it:
 * the recovery note the runtime puts inside the last one is left out (`recoveryNoteOf` reads it).
 */
export function lastToolResults(fake: FakeAnthropic, n: number): { tool_use_id: string; content: string; is_error?: boolean }[] {
  const messages = requestMessages(fake, n) as { role: string; content: unknown }[];
  const last = messages[messages.length - 1]!;
  if (!Array.isArray(last.content)) return [];
  const results = (last.content as { type: string; content?: unknown }[]).filter((b) => b.type === 'tool_result');
  return results.map((result) => {
    if (!Array.isArray(result.content)) return result;
    const own = (result.content as { type: string; text?: string }[]).filter((b) => !b.text?.startsWith(RECOVERY_NOTE_MARKER));
    if (own.length === result.content.length) return result;
    return { ...result, content: own.length === 0 ? '' : own.length === 1 && own[0]!.type === 'text' ? own[0]!.text : own };
  }) as never;
}

/**
 * The recovery note of a request's last message: inside its last tool_result (never a text block
 * after the results, which provokes empty answers), or a text block of a user message of its own.
 */
export function recoveryNoteOf(fake: FakeAnthropic, n: number): string | undefined {
  const messages = requestMessages(fake, n) as { role: string; content: { type: string; text?: string; content?: unknown }[] }[];
  const blocks = messages[messages.length - 1]!.content;
  const results = blocks.filter((b) => b.type === 'tool_result');
  const own = blocks.find((b) => b.type === 'text' && b.text?.startsWith(RECOVERY_NOTE_MARKER));
  if (results.length > 0) {
    if (own) throw new Error('the recovery note is a text block after the tool results');
    const inside = results.at(-1)!.content;
    if (!Array.isArray(inside)) return undefined;
    return (inside as { text?: string }[]).find((b) => b.text?.startsWith(RECOVERY_NOTE_MARKER))?.text;
  }
  return own?.text;
}

/** Answers by the number of assistant messages in the request, so a resumed run gets the next answer. */
export function byTurn(steps: readonly ResponseStep[]): Responder {
  return (request) => {
    const messages = (request.body as { messages?: { role: string }[] }).messages ?? [];
    const turn = messages.filter((m) => m.role === 'assistant').length;
    const step = steps[Math.min(turn, steps.length - 1)];
    if (!step) throw new Error('empty script');
    return step;
  };
}

export function startedCalls(events: readonly RuntimeEvent[]): string[] {
  return events.flatMap((e) => (e.type === 'ledger' && e.entry.status === 'started' ? [e.entry.callId] : []));
}

/**
 * The workspace of a host whose window closes at its first write: the host is told, and the write
 * refused as VS Code's API then refuses it (no staged write, as the editor's workspace).
 */
export function closingAtFirstWrite(base: Workspace, closing: AbortController): Workspace {
  return new Proxy(base, {
    get(target, key) {
      if (key === 'writeWhenReady') return undefined;
      if (key === 'write')
        return () => {
          closing.abort(new HostClosing());
          return Promise.reject(new Error('Canceled'));
        };
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
