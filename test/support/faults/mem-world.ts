import { windowsPathProblem } from '../../../src/host/node/path-rules';
import { ABSENT, hashContent } from '../../../src/core/patches/hash';
import {
  PathRefusedError,
  StaleContentError,
  type ApprovalDecision,
  type Approver,
  type CommandResult,
  type CommandRunner,
  type DirEntry,
  type FileStat,
  type LiveFile,
  type UncertainChoice,
  type Workspace,
} from '../../../src/core/ports';

// The world outside the store for in-process fault runs: a workspace that a power cut does not
// touch, a command runner that counts executions (the non-idempotent effect), and a person who
// allows every call and cannot answer "did it run?". A dead process does nothing: `alive()`.

export class DeadProcessError extends Error {
  constructor(what: string) {
    super(`the process is dead (power lost) and cannot ${what}`);
    this.name = 'DeadProcessError';
  }
}

export class MemWorkspace implements Workspace {
  readonly roots = ['/ws'];
  readonly files = new Map<string, Uint8Array>();
  writes = 0;

  constructor(
    initial: Record<string, string>,
    private readonly alive: () => boolean = () => true,
  ) {
    for (const [path, text] of Object.entries(initial)) this.files.set(path, new TextEncoder().encode(text));
  }

  async normalize(path: string, intent?: 'write'): Promise<string> {
    const clean = path.replace(/\\/g, '/').replace(/^\.\//, '');
    if (clean.startsWith('/') || clean.split('/').includes('..')) throw new PathRefusedError(path, 'outside the workspace');
    // As strict as the real path rules: a name Windows refuses is never written.
    const windows = intent === 'write' ? windowsPathProblem(clean) : undefined;
    if (windows !== undefined) throw new PathRefusedError(path, windows);
    return clean;
  }

  async read(path: string): Promise<LiveFile | null> {
    const p = await this.normalize(path);
    const bytes = this.files.get(p);
    return bytes === undefined ? null : { path: p, bytes, hash: hashContent(bytes), source: 'disk', dirty: false };
  }

  async write(path: string, bytes: Uint8Array, expectedBeforeHash: string): Promise<LiveFile> {
    if (!this.alive()) throw new DeadProcessError(`write ${path}`);
    const p = await this.normalize(path, 'write');
    this.expect(p, expectedBeforeHash);
    this.files.set(p, bytes.slice());
    this.writes += 1;
    return (await this.read(p))!;
  }

  async delete(path: string, expectedBeforeHash: string): Promise<void> {
    if (!this.alive()) throw new DeadProcessError(`delete ${path}`);
    const p = await this.normalize(path);
    this.expect(p, expectedBeforeHash);
    this.files.delete(p);
    this.writes += 1;
  }

  async list(): Promise<DirEntry[]> {
    return [...this.files.keys()].sort().map((name) => ({ name, kind: 'file' as const }));
  }

  async stat(path: string): Promise<FileStat | null> {
    const bytes = this.files.get(await this.normalize(path));
    return bytes === undefined ? null : { kind: 'file', size: bytes.length, mtimeMs: 0 };
  }

  text(path: string): string | null {
    const bytes = this.files.get(path);
    return bytes === undefined ? null : new TextDecoder().decode(bytes);
  }

  private expect(path: string, expected: string): void {
    const bytes = this.files.get(path);
    const actual = bytes === undefined ? ABSENT : hashContent(bytes);
    if (actual !== expected) throw new StaleContentError(path, expected, actual);
  }
}

/** Counts every execution per command string; runs nothing real. */
export class CountingRunner implements CommandRunner {
  readonly executions = new Map<string, number>();

  constructor(private readonly alive: () => boolean = () => true) {}

  async run(command: string): Promise<CommandResult> {
    if (!this.alive()) throw new DeadProcessError(`run ${command}`);
    this.executions.set(command, (this.executions.get(command) ?? 0) + 1);
    return { exitCode: 0, signal: null, stdout: '', stderr: '', timedOut: false, truncated: false, durationMs: 1 };
  }

  count(command: string): number {
    return this.executions.get(command) ?? 0;
  }
}

/** `--yes` with nobody at the keyboard: every call allowed, "did it run?" left unanswered. */
export const allowAllApprover: Approver = {
  async approve(): Promise<ApprovalDecision> {
    return 'allow_for_run';
  },
  async askUncertain(): Promise<UncertainChoice | null> {
    return null;
  },
};
