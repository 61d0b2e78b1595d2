import { z } from 'zod';
import type { CommitRequest, GitCommitter } from '../ports';
import { ToolError } from './errors';
import { commitMessage, planCommit, runFiles, type CommitPlan } from './git-commit-plan';
import type { ToolContext, ToolDefinition } from './types';

// git_commit: the one door to a commit. The person is asked every time (never "for this run", never
// by --yes): the approval shows the exact commands, files, message and author. What goes in is
// decided by git-commit-plan.ts; the git process runs in the host (GitCommitter port). Its effect is
// outside the files: the ledger records it with the commit id, and git_revert undoes it.

export const COMMIT_REASON = 'a commit is made only when you approve it, each time';
const MAX_MESSAGE = 10_000;

const GitCommitInput = z.strictObject({
  message: z
    .string()
    .min(1)
    .max(MAX_MESSAGE)
    .refine((m) => m.trim() !== '' && !m.includes('\0'), { message: 'a message with words in it' })
    .describe('The commit message: a short subject line, a blank line, then the why, as the project writes them.'),
  paths: z
    .array(z.string().min(1))
    .min(1)
    .max(500)
    .optional()
    .describe(
      'Commit exactly these files as they are now (only when the person named them or asked for files the run did not change). Without it: the files this run changed that the person kept in review.',
    ),
  include_waiting: z.boolean().optional().describe('Commit files whose changes still wait for review too (only when the person said so).'),
});
type GitCommitInput = z.infer<typeof GitCommitInput>;

interface Prepared {
  readonly root: string;
  readonly git: GitCommitter;
  readonly plan: CommitPlan;
  readonly request: CommitRequest;
  readonly summary: string;
}

function listed(items: readonly { path: string; why: string }[]): string {
  return items.map((i) => `- ${i.path}: ${i.why}`).join('\n');
}

/** Where the commit would go: the folder and the port, or a clear refusal. */
export function gitOf(ctx: ToolContext): { root: string; git: GitCommitter } {
  const root = ctx.workspace.roots[0];
  if (ctx.git === undefined || root === undefined) throw new ToolError('this host cannot make git commits');
  return { root, git: ctx.git };
}

async function prepareCommit(input: GitCommitInput, ctx: ToolContext): Promise<Prepared> {
  const { root, git } = gitOf(ctx);
  if (ctx.runReview === undefined) throw new ToolError('this host cannot read the run’s review');
  const files = runFiles(await ctx.runReview());
  const named = input.paths === undefined ? undefined : await Promise.all(input.paths.map((p) => ctx.workspace.normalize(p)));
  const paths = named ?? files.map((f) => f.path);
  const facts = await git.inspect(root, paths);
  if (facts === undefined) throw new ToolError(`${root} is not in a git repository: there is nothing to commit to`);
  if (facts.author === undefined)
    throw new ToolError('git names no author: the person sets user.name and user.email in their global git configuration first');
  const live = new Map(await Promise.all(paths.map(async (p) => [p, await ctx.workspace.read(p)] as const)));
  const plan = planCommit({
    runFiles: files,
    ...(named ? { named } : {}),
    includeWaiting: input.include_waiting === true,
    live,
    git: facts,
  });
  if (plan.refused.length > 0)
    throw new ToolError(
      `nothing was committed: these files hold changes that are not this run's, or cannot be committed as they are:\n${listed(plan.refused)}\nAsk the person; commit them only if they name them (paths).`,
    );
  if (plan.files.length === 0)
    throw new ToolError(
      `nothing to commit${plan.leftOut.length > 0 ? `; left out:\n${listed(plan.leftOut)}` : ': the run changed no file'}`,
    );
  const request: CommitRequest = { files: plan.files, message: commitMessage(input.message, ctx.runId), parent: facts.head };
  const author = `${facts.author.name} <${facts.author.email}>`;
  const summary = [
    `commit ${plan.files.length} file(s) on ${facts.branch ?? 'a detached HEAD'} as ${author} (nothing is pushed):`,
    ...plan.files.map((f) => `  ${f.path}${f.deleted ? ' (deleted)' : ''}`),
    ...(plan.leftOut.length > 0 ? ['left out:', ...plan.leftOut.map((i) => `  ${i.path}: ${i.why}`)] : []),
    'message:',
    ...request.message
      .trimEnd()
      .split('\n')
      .map((line) => `  ${line}`),
    'commands:',
    await git.describe(root, request),
  ].join('\n');
  return { root, git, plan, request, summary };
}

export const gitCommitTool: ToolDefinition<GitCommitInput> = {
  name: 'git_commit',
  description:
    'Commit to the git repository, only when the person asked for a commit. It commits the files this run changed that the person kept in review (changes still waiting are named and left out), or the paths given; the person approves each commit. It never pushes, amends or rewrites history, and refuses when it would sweep in changes that are not the run’s.',
  input: GitCommitInput,
  needs: 'git',
  idempotency: 'non_idempotent',
  replayPolicy: 'never',
  alwaysAsk: COMMIT_REASON,
  sideEffects: ['makes a git commit and moves the current branch to it (never pushed)'],
  compensation: 'a revert commit (git_revert with the commit id), approved by the person',
  inverse: { tool: 'git_revert', input: { commit: '{{result.commit}}' } },
  summarize: (input) => `git commit: ${input.message.split('\n', 1)[0]!.slice(0, 120)}`,
  approvalSummary: async (input, ctx) => (await prepareCommit(input, ctx)).summary,
  async execute(input, ctx) {
    const prepared = await prepareCommit(input, ctx);
    if (ctx.approved !== undefined && ctx.approved !== prepared.summary)
      throw new ToolError('what would be committed changed while the person was asked: nothing was committed; call again to ask anew');
    const made = await prepared.git.commit(prepared.root, prepared.request);
    const result = {
      commit: made.commit,
      ...(made.branch !== undefined ? { branch: made.branch } : {}),
      files: prepared.plan.files.map((f) => f.path),
      left_out: prepared.plan.leftOut,
      pushed: false,
      ...(made.note !== undefined ? { note: made.note } : {}),
    };
    return { content: JSON.stringify(result) };
  },
};
