import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hasExternalEffect } from '../../../src/core/ledger/schema';
import type { CommitRequest, GitCommitter } from '../../../src/core/ports';
import { renderInverse } from '../../../src/core/restore/compensation';
import { COMMIT_REASON } from '../../../src/core/tools/git-commit';
import { createCliApprover } from '../../../src/host/cli/approver';
import { answer, byTurn, harness, lastToolResults, reply, ScriptedApprover, SETTINGS, toolUse, type Harness } from './harness';

// git_commit through the runtime, with a fake git: every commit is asked (never "for this run",
// never by --yes), the approval shows what will be committed, the person's changes refuse it
// before anyone is asked, and its effect is recorded as external with the commit id.

const HEAD: Record<string, string> = { 'a.txt': 'one\n', 'b.txt': 'one\n' };

function fakeGit(): GitCommitter & { commits: CommitRequest[] } {
  const commits: CommitRequest[] = [];
  const enc = new TextEncoder();
  return {
    commits,
    async inspect(_root, paths) {
      const files = new Map(paths.map((p) => [p, { head: HEAD[p] === undefined ? null : enc.encode(HEAD[p]), staged: 'none' as const }]));
      return { head: 'c0ffee0', branch: 'main', author: { name: 'Pat Person', email: 'pat@example.com' }, files };
    },
    describe: async (_root, request) => `  git commit-tree ... # ${request.files.map((f) => f.path).join(' ')}`,
    async commit(_root, request) {
      commits.push(request);
      return { commit: `abc${commits.length}def`, branch: 'main' };
    },
    contents: async () => undefined,
  };
}

const commitCall = (id: string) => reply([toolUse(id, 'git_commit', { message: 'Change a' })]);

async function ranAndKept(h: Harness, git: GitCommitter, approver?: ScriptedApprover | ReturnType<typeof createCliApprover>) {
  const runtime = h.runtime({ gitCommits: git, ...(approver ? { approver } : {}) });
  const first = await runtime.start({ task: 'change a and b', settings: SETTINGS });
  assert.equal(first.status, 'completed', first.reason);
  const patch = (await h.records(first.runId)).find((r) => r.type === 'patch' && r.patch.path === 'a.txt');
  assert.ok(patch?.type === 'patch');
  await h.store.appendDecisions!(first.runId, [{ type: 'patch_state', patchId: patch.patch.patchId, state: 'accepted', reason: 'kept' }]);
  return { runtime, runId: first.runId };
}

const writes = reply([
  toolUse('w1', 'write_file', { path: 'a.txt', content: 'two\n' }),
  toolUse('w2', 'write_file', { path: 'b.txt', content: 'two\n' }),
]);

describe('git_commit through the runtime (approvals, refusals, the ledger)', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('asks before every commit, even after "allow for this run"; commits the kept file and names the waiting one', async () => {
    h = await harness({
      store: 'file',
      files: HEAD,
      approver: new ScriptedApprover(['allow_for_run', 'allow_for_run']),
      script: byTurn([writes, answer('written'), commitCall('g1'), commitCall('g2'), answer('done')]),
    });
    const git = fakeGit();
    const { runtime, runId } = await ranAndKept(h, git);
    const done = await runtime.continue(runId, 'commit it', new AbortController().signal, { moreTurns: 5 });
    assert.equal(done.status, 'completed', done.reason);
    const asked = h.approver.approvals.filter((a) => a.toolName === 'git_commit');
    assert.equal(asked.length, 2, 'each commit asked');
    for (const request of asked) {
      assert.equal(request.reason, COMMIT_REASON);
      for (const part of [
        'a.txt',
        'Pat Person <pat@example.com>',
        'Change a',
        'Co-authored-by: Agent Checkpoints',
        'left out:',
        'b.txt',
        'commit-tree',
      ])
        assert.ok(request.summary.includes(part), `${part} in:\n${request.summary}`);
    }
    assert.deepEqual(
      git.commits.map((c) => c.files.map((f) => f.path)),
      [['a.txt'], ['a.txt']],
    );
    const records = await h.records(runId);
    const approvals = records.flatMap((r) => (r.type === 'approval' && r.toolName === 'git_commit' ? [r.decision] : []));
    assert.deepEqual(approvals, ['allow_once', 'allow_once'], '"allow for this run" counts once');
    const entry = records.flatMap((r) => (r.type === 'ledger' && r.entry.callId === 'g1' ? [r.entry] : [])).at(-1)!;
    assert.equal(entry.status, 'succeeded');
    assert.deepEqual(entry.inverse, { tool: 'git_revert', input: { commit: '{{result.commit}}' } });
    const result = lastToolResults(h.fake, 3)[0]!.content;
    assert.equal(JSON.parse(result).commit, 'abc1def');
    assert.ok(hasExternalEffect(entry), 'an effect outside the files: "Ask the agent to undo these" offers it');
    assert.deepEqual(renderInverse(entry.inverse!, { input: {}, result }), { tool: 'git_revert', input: { commit: 'abc1def' } });
  });

  it('is never approved by the CLI’s --yes: the run pauses for a person at a terminal', async () => {
    h = await harness({ store: 'file', files: HEAD, script: byTurn([writes, answer('written'), commitCall('g1'), answer('done')]) });
    const git = fakeGit();
    const { runtime, runId } = await ranAndKept(h, git, createCliApprover({ yes: true, interactive: false }));
    const paused = await runtime.continue(runId, 'commit it', new AbortController().signal, { moreTurns: 5 });
    assert.equal(paused.status, 'paused');
    assert.match(paused.reason ?? '', /--yes does not approve it/);
    assert.equal(git.commits.length, 0);
  });

  it('refuses without asking when the person changed a kept file since the run wrote it', async () => {
    h = await harness({
      store: 'file',
      files: HEAD,
      script: byTurn([writes, answer('written'), commitCall('g1'), answer('done')]),
    });
    const git = fakeGit();
    const { runtime, runId } = await ranAndKept(h, git);
    writeFileSync(join(h.root, 'a.txt'), 'two\nand mine\n');
    const done = await runtime.continue(runId, 'commit it', new AbortController().signal, { moreTurns: 5 });
    assert.equal(done.status, 'completed', done.reason);
    assert.equal(h.approver.approvals.length, 0, 'nobody was asked');
    assert.equal(git.commits.length, 0);
    const result = lastToolResults(h.fake, 3)[0]!;
    assert.equal(result.is_error, true);
    assert.match(result.content, /refused \(nobody was asked\).*\n- a\.txt: it changed since the run wrote it/s);
  });

  it('is not offered where the host cannot commit (not a git repository)', async () => {
    h = await harness({ files: HEAD, script: byTurn([answer('hi')]) });
    await h.runtime().start({ task: 't', settings: SETTINGS });
    const tools = (h.fake.requests[0]!.body as { tools: { name: string }[] }).tools.map((t) => t.name);
    assert.ok(!tools.includes('git_commit') && !tools.includes('git_revert'), tools.join());
  });
});
