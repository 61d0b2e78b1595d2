import type { GitFacts } from './store/records';

// The ports of git: read-only facts of a workspace folder's repository, and the commit tool's door.

/** Read-only git facts of a workspace folder (repository, HEAD, dirty paths); never writes. */
export interface GitReader {
  facts(root: string): Promise<GitFacts>;
}

/** A file of a commit as git holds it now: its content in HEAD (null: not there) and what the index stages for it. */
export interface GitFileFacts {
  readonly head: Uint8Array | null;
  /** none: the index holds HEAD's version; same: it stages the file's current content; other: something else (the person's own staging). */
  readonly staged: 'none' | 'same' | 'other';
}

/** What the commit tool needs to know of the repository holding a workspace folder. */
export interface GitCommitFacts {
  /** HEAD's commit id, null on a branch with no commit yet. */
  readonly head: string | null;
  readonly branch?: string;
  /** The person, from git's user (global) configuration: undefined when it names nobody. */
  readonly author?: { readonly name: string; readonly email: string };
  /** By workspace path (relative to the folder), for the paths asked about. */
  readonly files: ReadonlyMap<string, GitFileFacts>;
}

/** One commit to make: these files' current content (a deleted file leaves the tree) on top of `parent`. */
export interface CommitRequest {
  readonly files: readonly { readonly path: string; readonly deleted: boolean }[];
  /** The whole message, trailers included. */
  readonly message: string;
  /** HEAD as it was looked at: the commit is refused if HEAD moved since. */
  readonly parent: string | null;
}

/** A commit made; files are workspace paths. */
export interface CommitMade {
  readonly commit: string;
  readonly branch?: string;
  /** Something to tell after the commit was made (the person's index could not be updated). */
  readonly note?: string;
}

/** The versions of a commit's files, for a revert: in the commit and in its parent (null: absent). */
export interface CommitContents {
  readonly subject: string;
  readonly files: readonly { readonly path: string; readonly inCommit: Uint8Array | null; readonly inParent: Uint8Array | null }[];
}

/**
 * Commits in the repository of a workspace folder, for the commit tool. It never pushes, amends or
 * rewrites history, and runs no program the repository configures (hooks, fsmonitor, filters,
 * signing) unless the person's user configuration turned it on.
 */
export interface GitCommitter {
  /** Facts of the repository holding `root` for these paths; undefined when `root` is not in a git work tree. */
  inspect(root: string, paths: readonly string[]): Promise<GitCommitFacts | undefined>;
  /** The commands commit() runs for this request, as the person is shown them before approving. */
  describe(root: string, request: CommitRequest): Promise<string>;
  /** Makes the commit from the files on disk, moves the branch from `parent` to it, and stages those files as committed. */
  commit(root: string, request: CommitRequest): Promise<CommitMade>;
  /** The files a commit changed, with both versions; undefined when there is no such commit (or it is a merge). */
  contents(root: string, commit: string): Promise<CommitContents | undefined>;
}
