import { spawn } from 'node:child_process';
import { lstat, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CommitContents, CommitMade, CommitRequest, GitCommitFacts, GitCommitter, GitFileFacts } from '../../../core/ports';
import {
  commitEnvironment,
  hardeningArgs,
  repositoryFilters,
  shellWord,
  signingArgs,
  userSettingsOf,
  type UserGitSettings,
} from './commit-args';

// The commit itself, with git's plumbing only: a private index started from HEAD, the files' bytes
// hashed as they are on disk, write-tree, commit-tree, then the branch moved from the HEAD the
// person was shown to the new commit (update-ref with the old value: nothing else is overwritten),
// and the person's index told the committed files' new content. No porcelain command runs, so no
// commit hook, no filter, no work-tree scan; never a push, an amend, a reset or a checkout.

const ZERO = '0000000000000000000000000000000000000000';
const TIMEOUT_MS = 30_000;

interface Git {
  readonly top: string;
  /** The folder's place in the repository ('' at its top, else 'sub/'). */
  readonly prefix: string;
  readonly user: UserGitSettings;
  /** The options every git process gets (hardeningArgs). */
  readonly flags: readonly string[];
  run(args: readonly string[], options?: { input?: string | Buffer; index?: string; ok?: number[] }): Promise<Buffer>;
}

function spawnGit(
  cwd: string,
  args: readonly string[],
  env: Record<string, string>,
  input?: string | Buffer,
): Promise<{ code: number; out: Buffer; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['-C', cwd, ...args], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: TIMEOUT_MS,
    });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, out: Buffer.concat(out), err }));
    // A git that exits before reading all of its input fails on its own; the pipe's EPIPE is not another error.
    child.stdin.on('error', () => undefined);
    child.stdin.end(input ?? '');
  });
}

async function openGit(root: string, env: NodeJS.ProcessEnv): Promise<Git | undefined> {
  const bare = commitEnvironment(env, { sign: false });
  const where = await spawnGit(root, ['-c', 'core.fsmonitor=false', 'rev-parse', '--show-toplevel', '--show-prefix'], bare);
  if (where.code !== 0) return undefined;
  const [top, prefix = ''] = where.out.toString().split('\n');
  const listing = await spawnGit(root, ['config', '--global', '--includes', '--list', '-z'], bare);
  const user = userSettingsOf(listing.code === 0 ? listing.out.toString() : '');
  const drivers = await spawnGit(root, ['-c', 'core.fsmonitor=false', 'config', '--show-scope', '-z', '--get-regexp', '^filter\\.'], bare);
  const base = commitEnvironment(env, user);
  const flags = hardeningArgs(user, repositoryFilters(drivers.code === 0 ? drivers.out.toString() : ''));
  return {
    top: top!,
    prefix,
    user,
    flags,
    async run(args, options = {}) {
      const runEnv = options.index !== undefined ? { ...base, GIT_INDEX_FILE: options.index } : base;
      const result = await spawnGit(top!, [...flags, ...args], runEnv, options.input);
      if (result.code !== 0 && !(options.ok ?? []).includes(result.code))
        throw new Error(`git ${args[0]} failed (exit ${result.code}): ${result.err.trim().slice(0, 500)}`);
      return result.out;
    },
  };
}

type Ids = Map<string, { id: string; mode: string }>;

/** Blob ids by repository path from `ls-tree -z` / `ls-files -s -z` lines ("mode type id\tpath" / "mode id stage\tpath"). */
function idsOf(listing: Buffer, field: number): Ids {
  const ids: Ids = new Map();
  for (const line of listing.toString().split('\0')) {
    const tab = line.indexOf('\t');
    if (tab < 0) continue;
    const meta = line.slice(0, tab).split(' ');
    ids.set(line.slice(tab + 1), { id: meta[field]!, mode: meta[0]! });
  }
  return ids;
}

async function readBlob(git: Git, id: string): Promise<Buffer> {
  return git.run(['cat-file', 'blob', id]);
}

async function headOf(git: Git): Promise<{ head: string | null; branch?: string }> {
  const head = (await git.run(['rev-parse', '--verify', '-q', 'HEAD'], { ok: [1] })).toString().trim();
  const branch = (await git.run(['symbolic-ref', '-q', '--short', 'HEAD'], { ok: [1] })).toString().trim();
  return { head: head === '' ? null : head, ...(branch !== '' ? { branch } : {}) };
}

async function diskId(git: Git, path: string): Promise<string | null> {
  const stat = await lstat(join(git.top, path)).catch(() => undefined);
  if (stat === undefined) return null;
  if (!stat.isFile()) throw new Error(`${path} is not a regular file (a link or a folder): commit it with git yourself`);
  return (await git.run(['hash-object', '--no-filters', '--', path])).toString().trim();
}

async function inspect(git: Git, paths: readonly string[]): Promise<GitCommitFacts> {
  const { head, branch } = await headOf(git);
  const repoPaths = paths.map((p) => git.prefix + p);
  const inHead: Ids =
    head === null || repoPaths.length === 0 ? new Map() : idsOf(await git.run(['ls-tree', '-z', head, '--', ...repoPaths]), 2);
  const inIndex: Ids = repoPaths.length === 0 ? new Map() : idsOf(await git.run(['ls-files', '-s', '-z', '--', ...repoPaths]), 1);
  const files = new Map<string, GitFileFacts>();
  for (const path of paths) {
    const headId = inHead.get(git.prefix + path)?.id;
    const indexId = inIndex.get(git.prefix + path)?.id;
    const onDisk = await diskId(git, git.prefix + path);
    const staged = indexId === headId ? 'none' : (indexId ?? null) === onDisk ? 'same' : 'other';
    files.set(path, { head: headId === undefined ? null : await readBlob(git, headId), staged });
  }
  const { name, email } = git.user;
  return { head, ...(branch !== undefined ? { branch } : {}), ...(name && email ? { author: { name, email } } : {}), files };
}

/** `--index-info` lines for the files as they are on disk (mode 0 removes a deleted file). */
async function indexLines(git: Git, request: CommitRequest, head: string | null): Promise<string> {
  const repoPaths = request.files.map((f) => git.prefix + f.path);
  const modes: Ids = head === null ? new Map() : idsOf(await git.run(['ls-tree', '-z', head, '--', ...repoPaths]), 2);
  const lines: string[] = [];
  for (const file of request.files) {
    const path = git.prefix + file.path;
    if (file.deleted) {
      lines.push(`0 ${ZERO}\t${path}`);
      continue;
    }
    const stat = await lstat(join(git.top, path));
    if (!stat.isFile()) throw new Error(`${file.path} is not a regular file: commit it with git yourself`);
    const id = (await git.run(['hash-object', '-w', '--no-filters', '--', path])).toString().trim();
    const mode = modes.get(path)?.mode ?? (stat.mode & 0o111 && process.platform !== 'win32' ? '100755' : '100644');
    lines.push(`${mode} ${id}\t${path}`);
  }
  return lines.map((l) => `${l}\0`).join('');
}

function subjectOf(message: string): string {
  return message.split('\n', 1)[0]!.slice(0, 200);
}

async function commit(git: Git, request: CommitRequest): Promise<CommitMade> {
  const { head, branch } = await headOf(git);
  if (head !== request.parent)
    throw new Error(`HEAD moved (now ${head ?? 'no commit'}) since the commit was prepared: nothing was committed`);
  const info = await indexLines(git, request, head);
  const dir = await mkdtemp(join(tmpdir(), 'agent-commit-'));
  try {
    const index = join(dir, 'index');
    await git.run(head === null ? ['read-tree', '--empty'] : ['read-tree', head], { index });
    await git.run(['update-index', '-z', '--index-info'], { index, input: info });
    const tree = (await git.run(['write-tree'], { index })).toString().trim();
    const before = head === null ? '' : (await git.run(['rev-parse', `${head}^{tree}`])).toString().trim();
    if (tree === before) throw new Error('nothing to commit: the files are as HEAD has them');
    const parents = head === null ? [] : ['-p', head];
    const made = (await git.run(['commit-tree', tree, ...parents, ...signingArgs(git.user), '-F', '-'], { input: request.message }))
      .toString()
      .trim();
    await git.run(['update-ref', '-m', `commit (Agent Checkpoints): ${subjectOf(request.message)}`, 'HEAD', made, head ?? ZERO]);
    // The commit is made: a failure from here on is told with it, never as a failed commit.
    const note = await git.run(['update-index', '-z', '--index-info'], { input: info }).then(
      () => undefined,
      (error: unknown) =>
        `the commit is made, but your index was not updated (${String(error)}): \`git reset -q -- <the files>\` makes it agree with HEAD`,
    );
    return { commit: made, ...(branch !== undefined ? { branch } : {}), ...(note !== undefined ? { note } : {}) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function describe(git: Git, request: CommitRequest): string {
  const g = ['git', ...git.flags].map(shellWord).join(' ');
  const files = request.files.map((f) => shellWord(git.prefix + f.path));
  const kept = request.files.filter((f) => !f.deleted).map((f) => shellWord(git.prefix + f.path));
  return [
    `  GIT_INDEX_FILE=<private index> ${g} read-tree HEAD`,
    ...(kept.length > 0 ? [`  ${g} hash-object -w --no-filters -- ${kept.join(' ')}`] : []),
    `  GIT_INDEX_FILE=<private index> ${g} update-index -z --index-info   # ${files.join(' ')}`,
    `  GIT_INDEX_FILE=<private index> ${g} write-tree`,
    `  GIT_AUTHOR_NAME=${shellWord(git.user.name ?? '')} GIT_AUTHOR_EMAIL=${shellWord(git.user.email ?? '')} ${g} commit-tree <tree> -p HEAD ${signingArgs(git.user).join(' ')} -F -   # the message above`,
    `  ${g} update-ref -m 'commit (Agent Checkpoints)' HEAD <new commit> <HEAD as now>`,
    `  ${g} update-index -z --index-info   # your index: these files staged as committed`,
  ].join('\n');
}

async function contents(git: Git, commitId: string): Promise<CommitContents | undefined> {
  const parents = await git.run(['rev-list', '--parents', '-n', '1', `${commitId}^{commit}`], { ok: [128] }).catch(() => undefined);
  const ids = parents?.toString().trim().split(' ') ?? [];
  if (ids.length === 0 || ids[0] === '' || ids.length > 2) return undefined;
  const [id, parent] = ids as [string, string | undefined];
  const diff = await git.run([
    'diff-tree',
    '-r',
    '-z',
    '--no-commit-id',
    '--no-renames',
    '--name-only',
    ...(parent ? [parent, id] : ['--root', id]),
  ]);
  // The raw commit object: no log formatting (which could verify a signature with a configured program).
  const raw = (await git.run(['cat-file', 'commit', id])).toString();
  const subject = raw
    .slice(raw.indexOf('\n\n') + 2)
    .split('\n', 1)[0]!
    .trim();
  const files: { path: string; inCommit: Buffer | null; inParent: Buffer | null }[] = [];
  const version = async (rev: string | undefined, path: string) => {
    if (rev === undefined) return null;
    const listed = idsOf(await git.run(['ls-tree', '-z', rev, '--', path]), 2).get(path);
    return listed === undefined ? null : readBlob(git, listed.id);
  };
  for (const path of diff
    .toString()
    .split('\0')
    .filter((p) => p !== '')) {
    if (!path.startsWith(git.prefix))
      throw new Error(`commit ${commitId} changes ${path}, outside the workspace folder: revert it with git yourself`);
    files.push({ path: path.slice(git.prefix.length), inCommit: await version(id, path), inParent: await version(parent, path) });
  }
  return { subject, files };
}

/** The Node host's GitCommitter: git processes with a built environment, the repository's programs off. */
export function nodeGitCommitter(env: NodeJS.ProcessEnv = process.env): GitCommitter {
  const open = async (root: string) => {
    const git = await openGit(root, env);
    if (git === undefined) throw new Error(`${root} is not in a git repository`);
    return git;
  };
  return {
    async inspect(root, paths) {
      const git = await openGit(root, env);
      return git === undefined ? undefined : inspect(git, paths);
    },
    describe: async (root, request) => describe(await open(root), request),
    commit: async (root, request) => commit(await open(root), request),
    contents: async (root, commitId) => contents(await open(root), commitId),
  };
}
