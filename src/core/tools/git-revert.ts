import { z } from 'zod';
import { WORKSPACE_WRITE } from '../ledger/schema';
import { ABSENT, hashContent } from '../patches/hash';
import type { CommitContents } from '../ports';
import { ToolError } from './errors';
import { COMMIT_REASON, gitOf } from './git-commit';
import { commitMessage } from './git-commit-plan';
import type { PreparedWrite, ToolContext, ToolDefinition } from './types';

// git_revert: undoes one commit by a new commit (history is never rewritten). Its files go back to
// the commit's parent through the workspace (patches of this call, as any agent write), only where
// they still hold exactly what the commit put there; then they are committed, the person asked first.

const GitRevertInput = z.strictObject({
  commit: z
    .string()
    .regex(/^[0-9a-f]{7,64}$/, 'a commit id (hex)')
    .describe('The id of the commit to revert (from git_commit’s result).'),
});
type GitRevertInput = z.infer<typeof GitRevertInput>;

const hashOf = (bytes: Uint8Array | null) => (bytes === null ? ABSENT : hashContent(bytes));

async function contentsOf(input: GitRevertInput, ctx: ToolContext): Promise<CommitContents> {
  const { root, git } = gitOf(ctx);
  const contents = await git.contents(root, input.commit);
  if (contents === undefined) throw new ToolError(`there is no commit ${input.commit} to revert here (or it is a merge)`);
  return contents;
}

/** The writes that take each file of the commit back to its parent; refused where a file moved on since. */
async function revertWrites(contents: CommitContents, ctx: ToolContext): Promise<PreparedWrite[]> {
  const writes: PreparedWrite[] = [];
  const { root, git } = gitOf(ctx);
  const facts = await git.inspect(
    root,
    contents.files.map((f) => f.path),
  );
  for (const file of contents.files) {
    const live = await ctx.workspace.read(file.path);
    if ((live?.hash ?? ABSENT) !== hashOf(file.inCommit) || live?.dirty === true)
      throw new ToolError(`${file.path} changed since that commit: nothing was reverted (the person can revert it with git)`);
    if ((facts?.files.get(file.path)?.staged ?? 'none') === 'other')
      throw new ToolError(`${file.path} has staged changes of the person's: nothing was reverted`);
    writes.push({
      path: file.path,
      beforeHash: live?.hash ?? ABSENT,
      afterHash: hashOf(file.inParent),
      before: live?.bytes ?? null,
      after: file.inParent,
    });
  }
  return writes;
}

function revertMessage(commit: string, contents: CommitContents, runId: string): string {
  return commitMessage(`Revert "${contents.subject}"\n\nThis reverts commit ${commit}.`, runId);
}

export const gitRevertTool: ToolDefinition<GitRevertInput> = {
  name: 'git_revert',
  description:
    'Undo a commit by a new commit that reverts it (history is not rewritten), only when the person asked for it. Its files go back to their content before that commit, which must still be what it committed; the person approves it. Never pushes.',
  input: GitRevertInput,
  needs: 'git',
  idempotency: 'non_idempotent',
  replayPolicy: 'never',
  alwaysAsk: COMMIT_REASON,
  sideEffects: [WORKSPACE_WRITE, 'makes a git commit and moves the current branch to it (never pushed)'],
  compensation: 'a revert of the revert commit (git_revert with its id), approved by the person',
  summarize: (input) => `git revert ${input.commit}`,
  async approvalSummary(input, ctx) {
    const contents = await contentsOf(input, ctx);
    const writes = await revertWrites(contents, ctx);
    const { root, git } = gitOf(ctx);
    const files = writes.map((w) => ({ path: w.path, deleted: w.after === null }));
    const request = { files, message: revertMessage(input.commit, contents, ctx.runId), parent: null };
    return [
      `revert commit ${input.commit} ("${contents.subject}") by a new commit (nothing is pushed); these files go back:`,
      ...files.map((f) => `  ${f.path}${f.deleted ? ' (deleted)' : ''}`),
      'commands:',
      await git.describe(root, request),
    ].join('\n');
  },
  async prepare(input, ctx) {
    return revertWrites(await contentsOf(input, ctx), ctx);
  },
  async execute(input, ctx, prepared) {
    const { root, git } = gitOf(ctx);
    const contents = await contentsOf(input, ctx);
    for (const write of prepared) await ctx.applyWrite(write);
    const facts = await git.inspect(
      root,
      prepared.map((w) => w.path),
    );
    if (facts === undefined) throw new ToolError(`${root} is not in a git repository`);
    const files = prepared.map((w) => ({ path: w.path, deleted: w.after === null }));
    const made = await git.commit(root, { files, message: revertMessage(input.commit, contents, ctx.runId), parent: facts.head });
    return {
      content: JSON.stringify({
        commit: made.commit,
        reverts: input.commit,
        files: files.map((f) => f.path),
        pushed: false,
        ...(made.note !== undefined ? { note: made.note } : {}),
      }),
    };
  },
};
