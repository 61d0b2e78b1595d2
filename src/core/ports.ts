// Ports: everything the core needs from the outside world. Hosts (src/host/*) implement them;
// the core itself never touches the file system, the network, a process or `vscode`.
// The ports of git (facts and the commit tool) are in ports-git.ts.
export * from './ports-git';

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** A repeating timer the host provides (Node: an unref'd setInterval): it never keeps the process alive. */
export interface Timers {
  /** Calls `tick` every `ms` until `stop` is called (a timer does not wait for the promise `tick` returns). */
  every(ms: number, tick: () => Promise<void>): { stop(): void };
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Log {
  log(level: LogLevel, message: string, data?: Record<string, unknown>): void;
}

export const silentLog: Log = { log: () => undefined };
export const systemClock: Clock = { now: () => Date.now() };

/** Where live content came from: an open editor buffer (unsaved edits count) or the disk. */
export type ContentSource = 'buffer' | 'disk';

export interface LiveFile {
  /** Workspace-relative path with forward slashes. */
  readonly path: string;
  /** Bytes as they are live: the buffer's text encoded as UTF-8, or the file's bytes on disk. */
  readonly bytes: Uint8Array;
  /** `hashContent(bytes)` from core/patches/hash (BOM-insensitive for text). */
  readonly hash: string;
  readonly source: ContentSource;
  /** True when an open buffer holds edits that are not saved to disk. */
  readonly dirty: boolean;
}

export interface DirEntry {
  readonly name: string;
  readonly kind: 'file' | 'dir' | 'symlink' | 'other';
}

export interface FileStat {
  readonly kind: 'file' | 'dir' | 'symlink' | 'other';
  readonly size: number;
  readonly mtimeMs: number;
}

/** Thrown by Workspace.write/delete when the live hash is not the expected before-hash. */
export class StaleContentError extends Error {
  constructor(
    readonly path: string,
    readonly expectedHash: string,
    readonly actualHash: string,
  ) {
    super(`${path} changed since it was read (expected ${expectedHash.slice(0, 12)}, found ${actualHash.slice(0, 12)})`);
    this.name = 'StaleContentError';
  }
}

/** Thrown for a path outside every workspace folder, into `.git/` or the store, or otherwise refused. */
export class PathRefusedError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`refused path "${path}": ${reason}`, options);
    this.name = 'PathRefusedError';
  }
}

/**
 * The workspace as the agent sees it. Paths are workspace-relative (first folder) or
 * `folderName/...` for multi-root; the adapter resolves symlinks and refuses escapes.
 */
export interface Workspace {
  /** Absolute paths of the workspace folders. */
  readonly roots: readonly string[];
  /**
   * Normalises and validates a path; throws PathRefusedError. Returns the workspace-relative form.
   * `write`: the path is about to be created or written, and a name Windows refuses (`CON`,
   * `aux.txt`, a trailing dot or space, `:`, `<>"|?*`) is refused too, on every platform.
   */
  normalize(path: string, intent?: 'write'): Promise<string>;
  /** Live content, or null when the file does not exist. */
  read(path: string): Promise<LiveFile | null>;
  /**
   * Optional: whether an open buffer holds unsaved edits of path (`LiveFile.dirty`) without
   * reading its content. A workspace without buffers answers false; callers fall back to read.
   */
  isDirty?(path: string): Promise<boolean>;
  /**
   * Writes bytes if the live hash still equals expectedBeforeHash (`absent` for a create),
   * else throws StaleContentError. Returns the live file after the write.
   */
  write(path: string, bytes: Uint8Array, expectedBeforeHash: string): Promise<LiveFile>;
  /**
   * Optional: `write`, with the new content staged (made durable aside) while `ready` settles; the
   * live file is checked against expectedBeforeHash and replaced only once `ready` resolved, and
   * not at all when it rejects. Lets a caller store what the write replaces at the same time.
   */
  writeWhenReady?(path: string, bytes: Uint8Array, expectedBeforeHash: string, ready: Promise<unknown>): Promise<LiveFile>;
  /**
   * Optional: whether the file is executable (any `x` bit; null when it does not exist). A host
   * without file modes (Windows) leaves this and setExecutable out: no patch then holds a mode.
   */
  executable?(path: string): Promise<boolean | null>;
  /**
   * Optional: sets or clears the executable bit (as `chmod +x` / `-x`: the other bits kept). With
   * `expected`, throws StaleContentError when the live bit is not that (changed by the person).
   */
  setExecutable?(path: string, executable: boolean, expected?: boolean): Promise<void>;
  /** Deletes the file if its live hash equals expectedBeforeHash, else StaleContentError. */
  delete(path: string, expectedBeforeHash: string): Promise<void>;
  list(dir: string): Promise<DirEntry[]>;
  stat(path: string): Promise<FileStat | null>;
  /** Optional: searches the text of the files under a folder (see TextSearchQuery). Without it, search_text is not offered. */
  searchText?(query: TextSearchQuery, signal?: AbortSignal): Promise<TextSearchResult>;
  /** Optional: the files under a folder whose path matches a glob, ignore files honoured, sorted by path. */
  findFiles?(query: FileQuery, signal?: AbortSignal): Promise<FileList>;
  /** Optional: the entries of a folder to a depth, with sizes; ignored folders are marked, not expanded. */
  listTree?(query: TreeQuery, signal?: AbortSignal): Promise<TreeListing>;
}

/**
 * A text search. Files are visited in path order; `.gitignore`, `.ignore` (and the host's
 * exclude settings) are honoured, binary files and files over the host's size cap skipped.
 */
export interface TextSearchQuery {
  /** Workspace-relative folder ('.' for the first workspace folder). */
  readonly dir: string;
  readonly pattern: string;
  readonly regex: boolean;
  readonly caseSensitive: boolean;
  /** Globs over the path relative to `dir`; a glob without "/" matches the file name at any depth. */
  readonly include: readonly string[];
  readonly exclude: readonly string[];
  readonly contextLines: number;
  /** The search stops at this many matching lines. */
  readonly maxMatches: number;
}

export interface SearchLine {
  readonly line: number;
  readonly text: string;
  /** False for a context line. */
  readonly match: boolean;
}

export interface SearchFileHits {
  /** Workspace-relative path. */
  readonly path: string;
  readonly lines: readonly SearchLine[];
}

export interface TextSearchResult {
  readonly engine: 'ripgrep' | 'node';
  readonly files: readonly SearchFileHits[];
  readonly matches: number;
  /** Largest file searched, in bytes: larger ones are skipped unread. */
  readonly maxFileBytes: number;
  /** Set when the search did not cover the folder. */
  readonly stopped?: SearchStop;
}

/**
 * Where a search stopped: every file up to `lastPath` (in path order) was searched; with
 * `lastLine`, that file only up to that line. Files after it were not.
 */
export interface SearchStop {
  readonly reason: 'max_matches' | 'time_budget';
  readonly lastPath: string | null;
  readonly lastLine?: number;
  readonly budgetMs?: number;
}

export interface FileQuery {
  readonly dir: string;
  /** Glob over the path relative to `dir`; without "/" it matches the file name at any depth. */
  readonly glob: string;
  readonly exclude: readonly string[];
  readonly max: number;
}

export interface FileList {
  /** Workspace-relative paths, sorted, at most `max`. */
  readonly paths: readonly string[];
  /** Every match, including those past `max`. */
  readonly total: number;
}

export interface TreeQuery {
  readonly dir: string;
  /** 1 = the folder's own entries. */
  readonly depth: number;
  readonly maxEntries: number;
}

export interface TreeEntry {
  /** Path relative to the listed folder, forward slashes. */
  readonly path: string;
  readonly depth: number;
  readonly kind: DirEntry['kind'];
  /** Bytes, for files. */
  readonly size?: number;
  /** Matched by an ignore file or exclude setting (a folder so marked is not expanded). */
  readonly ignored: boolean;
}

export interface TreeListing {
  readonly entries: readonly TreeEntry[];
  /** Entries that were past maxEntries. */
  readonly more: number;
}

export type ApprovalDecision = 'allow_once' | 'allow_for_run' | 'deny';

/** A denial with the person's reason: the model reads the reason in the denied call's result. */
export interface DenialWithReason {
  readonly decision: 'deny';
  readonly reason: string;
}

export interface ApprovalRequest {
  readonly runId: string;
  readonly callId: string;
  readonly toolName: string;
  readonly summary: string;
  readonly input: unknown;
  /**
   * Set when the call must be asked whatever the tool's policy (it writes a protected path): why.
   * Such a call is allowed once at most; an `allow_for_run` answer counts as `allow_once`.
   */
  readonly reason?: string;
}

export type UncertainChoice = 'run_again' | 'mark_done' | 'report_unknown';

export interface UncertainRequest {
  readonly runId: string;
  readonly callId: string;
  readonly toolName: string;
  readonly summary: string;
}

/** Asks a person. A host with nobody to ask returns null from askUncertain. */
export interface Approver {
  approve(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalDecision | DenialWithReason>;
  askUncertain(request: UncertainRequest, signal?: AbortSignal): Promise<UncertainChoice | null>;
}

export interface CommandResult {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  readonly truncated: boolean;
  readonly durationMs: number;
  /** True when the command was ended because the run was cancelled. */
  readonly cancelled?: boolean;
  /** Set when something the command started may outlive it (it kept the output open, or its process group is alive). */
  readonly stillRunning?: string;
  /** Set when the sandbox stopped a write (or the command): which rule, and how the person can allow it. */
  readonly sandboxNote?: string;
  /** Set when host variables were withheld from the command's environment that no earlier result named: their names, never values. */
  readonly environmentNote?: string;
  /** What the command changed in the workspace, when the host captured it (a copy-on-write view, or a scan): run_command applies it. */
  readonly changes?: CommandChanges;
  /**
   * Set by a sandbox that held the command to its copy-on-write view: it ran in one, no writable
   * path outside the workspace was granted, and it reached no network (off, or the proxy accepted
   * no connection at all while it ran). Unset whenever any of that is not known.
   */
  readonly isolated?: true;
}

/**
 * One file a command wrote or deleted, not applied yet. `beforeHash`: the content the command
 * started from (`absent` for a file it created); `conflict`: why it cannot be applied whatever the
 * live content (the person saved the file while the command ran).
 */
export interface CommandFileChange {
  /** Absolute path in a workspace folder. */
  readonly path: string;
  readonly kind: 'write' | 'delete';
  readonly beforeHash: string;
  readonly conflict?: string;
  readonly binary: boolean;
  /** A write: the file is executable (a patch holds the bit when it changes it). */
  readonly executable?: boolean;
  /** A write: the bytes the command left. */
  content(): Promise<Uint8Array>;
}

/** A command's change set: the files to apply as patches of its call, and what the host settled itself. */
export interface CommandChanges {
  /** How it was captured: a copy-on-write view, or a scan before and after (the changes are already in the workspace then). */
  readonly via: 'view' | 'scan';
  readonly files: readonly CommandFileChange[];
  /** Paths the command changed that are never applied (protected paths, `.git/`, symbolic links), each with the rule. */
  readonly refused: readonly { readonly path: string; readonly rule: string }[];
  /** Lines the host adds (ignored paths placed, too large to track, the fallback used). */
  readonly notes: readonly string[];
  /**
   * True when every change the command made is in `files` or `refused`; unset when something
   * reached the workspace without a patch (ignored paths, a change set too large to track, a mode
   * change) or may have unseen (a scan: the command wrote in place, and ignored paths are not scanned).
   */
  readonly allInFiles?: true;
  /** Removes what the capture kept (the view's folder), once the call's result is recorded. */
  discard(): Promise<void>;
  /** Optional: this process will not apply the changes (its apply failed): the run's next open may settle them at once, though this process still lives. */
  release?(): void;
}

/** Runs a shell command in a workspace folder. Output is bounded by maxOutputBytes. */
export interface CommandRunner {
  run(
    command: string,
    options: { cwd: string; timeoutMs: number; maxOutputBytes: number; signal?: AbortSignal; callId?: string },
  ): Promise<CommandResult>;
  /**
   * Optional: the change set a command of `callId` left when its host died (the command ended with
   * it, its changes captured or not yet applied), read once: undefined when there is none.
   */
  recover?(callId: string): Promise<CommandChanges | undefined>;
}

/** One error or warning a language service reports for a workspace file. */
export interface Diagnostic {
  /** Workspace-relative path, as the Workspace port names it. */
  readonly path: string;
  /** 1-based line. */
  readonly line: number;
  readonly severity: 'error' | 'warning';
  readonly message: string;
  /** The service's code for it ("2322"), when it gives one. */
  readonly code?: string;
  /** Which service reported it ("ts", "json"), when it says. */
  readonly source?: string;
}

/**
 * The errors and warnings the editor's language services report (VS Code's problems). A host
 * without language services (the CLI) has none and says so (`RuntimeDeps.diagnostics: 'none'`).
 */
export interface Diagnostics {
  /** Before a write: what is reported now; `unchecked`: files there that no service has looked at yet (no editor holds them). */
  snapshot(paths: readonly string[]): Promise<{ reported: readonly Diagnostic[]; unchecked: readonly string[] }>;
  /**
   * Waits until the services have settled after a change of these files (no new report for them
   * for a quiet spell, or a longest wait, both the person's settings; never a fixed sleep; at once
   * when `signal` aborts), then what is reported.
   */
  settled(paths: readonly string[], signal: AbortSignal): Promise<{ reported: readonly Diagnostic[]; unchecked: readonly string[] }>;
}
