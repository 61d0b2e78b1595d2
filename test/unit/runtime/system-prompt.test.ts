import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { INSTRUCTION_FILE_CAP_BYTES, InstructionFileNames } from '../../../src/core/runtime/project-instructions';
import { buildSystemPrompt, SYSTEM_PROMPT_VERSION, type PromptEnvironment } from '../../../src/core/runtime/system-prompt';
import type { StoredRecord } from '../../../src/core/store/records';
import { answer, byTurn, harness, reply, SETTINGS, toolUse, type Harness } from './harness';

const ENVIRONMENT: PromptEnvironment = { host: { os: 'Linux 6.8 (x64)', shell: '/bin/bash' } };
const DAY = 86_400_000;
const START = Date.UTC(2026, 0, 30, 12);

const steps = [reply([toolUse('t0', 'list_dir', { path: '.' })]), reply([toolUse('t1', 'list_dir', { path: '.' })]), answer('done')];

function systemOf(body: unknown): string {
  const system = (body as { system?: { text: string }[] }).system;
  assert.ok(system && system.length === 1, 'one system block');
  return system[0]!.text;
}

function runRecord(records: readonly StoredRecord[]): Extract<StoredRecord, { type: 'run' }> {
  const run = records.find((r) => r.type === 'run');
  assert.ok(run && run.type === 'run');
  return run;
}

function lastUserText(body: unknown): string {
  const messages = (body as { messages: { role: string; content: unknown }[] }).messages;
  return JSON.stringify(messages.filter((m) => m.role === 'user').at(-1)?.content);
}

describe('the system prompt and the project instructions', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('sends the product prompt with host facts, the start date and AGENTS.md; records its version and the files hashed', async () => {
    h = await harness({
      files: { 'AGENTS.md': 'Run tests with `npm run check`.\n', 'pkg/AGENTS.md': 'pkg rules\n', 'a.txt': 'x\n' },
      script: byTurn(steps),
    });
    const outcome = await h.runtime({ clock: { now: () => START } }).start({ task: 'look', settings: SETTINGS, environment: ENVIRONMENT });
    assert.equal(outcome.status, 'completed', outcome.reason);
    const systems = h.fake.requests.map((r) => systemOf(r.body));
    assert.equal(new Set(systems).size, 1, 'the same bytes in every request of the run');
    const system = systems[0]!;
    for (const part of [
      'Linux 6.8 (x64)',
      '/bin/bash',
      '2026-01-30',
      h.root,
      'Run tests with `npm run check`.',
      'pkg/AGENTS.md',
      'status unknown',
    ])
      assert.ok(system.includes(part), `the prompt names ${part}`);
    assert.ok(!system.includes('pkg rules'), 'a folder AGENTS.md is named, not included');
    assert.ok(/cannot change the rules above/.test(system));
    for (const request of h.fake.requests) assert.ok((JSON.stringify(request.body).match(/"cache_control"/g) ?? []).length <= 4);
    const run = runRecord(await h.records(outcome.runId));
    assert.equal(run.system, system);
    assert.equal(run.prompt?.version, SYSTEM_PROMPT_VERSION);
    assert.deepEqual(
      run.prompt?.instructionFiles.map((f) => [f.path, f.truncated, f.hash.length > 0]),
      [['AGENTS.md', false, true]],
    );
    assert.deepEqual(run.prompt?.nestedInstructions, ['pkg/AGENTS.md']);
  });

  it('caps an instruction file and says so; an empty list of names reads none', async () => {
    h = await harness({ files: { 'CLAUDE.md': 'x'.repeat(INSTRUCTION_FILE_CAP_BYTES + 100) }, script: byTurn([answer('ok')]) });
    const first = await h.runtime().start({ task: 't', settings: SETTINGS, environment: ENVIRONMENT });
    const system = systemOf(h.fake.requests[0]!.body);
    assert.ok(system.includes(`truncated at ${INSTRUCTION_FILE_CAP_BYTES / 1024} KiB`));
    assert.ok(!system.includes('x'.repeat(INSTRUCTION_FILE_CAP_BYTES + 1)));
    assert.equal(runRecord(await h.records(first.runId)).prompt?.instructionFiles[0]?.truncated, true);
    await h.runtime().start({ task: 't', settings: SETTINGS, environment: { ...ENVIRONMENT, instructionFiles: [] } });
    assert.ok(!systemOf(h.fake.requests[1]!.body).includes('# Project instructions'));
  });

  it('a resume sends the prompt the run started with (not a new date) and names a changed instruction file', async () => {
    h = await harness({ store: 'file', files: { 'AGENTS.md': 'v1\n' }, script: byTurn(steps) });
    const paused = await h.runtime({ clock: { now: () => START } }).start({
      task: 'look',
      settings: { ...SETTINGS, maxTurns: 1 },
      environment: ENVIRONMENT,
    });
    assert.equal(paused.status, 'paused');
    writeFileSync(join(h.root, 'AGENTS.md'), 'v2\n');
    writeFileSync(join(h.root, 'CLAUDE.md'), 'new\n');
    const done = await h.runtime({ clock: { now: () => START + 3 * DAY } }).resume(paused.runId, undefined, { raise: { maxTurns: 5 } });
    assert.equal(done.status, 'completed', done.reason);
    const systems = h.fake.requests.map((r) => systemOf(r.body));
    assert.equal(new Set(systems).size, 1);
    assert.ok(systems[0]!.includes('2026-01-30') && systems[0]!.includes('v1'));
    const note = lastUserText(h.fake.requests[1]!.body);
    assert.ok(note.includes('AGENTS.md: changed') && note.includes('CLAUDE.md: added'), note);
  });

  it('a new instruction tells the model which instruction files changed', async () => {
    h = await harness({ store: 'file', files: { 'AGENTS.md': 'v1\n' }, script: byTurn([answer('one'), answer('two')]) });
    const done = await h.runtime().start({ task: 'look', settings: SETTINGS, environment: ENVIRONMENT });
    writeFileSync(join(h.root, 'AGENTS.md'), 'v2\n');
    const again = await h.runtime().continue(done.runId, 'more', new AbortController().signal, { moreTurns: 5 });
    assert.equal(again.status, 'completed', again.reason);
    const text = lastUserText(h.fake.requests[1]!.body);
    assert.ok(text.includes('more') && text.includes('AGENTS.md: changed'), text);
  });

  it('version 3 gives the working guidance and the git rule: commit only when asked, through git_commit, never push', () => {
    assert.equal(SYSTEM_PROMPT_VERSION, 3);
    const system = buildSystemPrompt({ host: ENVIRONMENT.host, folders: ['/w'], startedAt: START, tools: ['read_file', 'git_commit'] });
    for (const part of [
      "project's instruction files",
      'small enough to review',
      'Run the tests closest to your change',
      'what you did not verify',
      'ask a short question',
      'Commit only when the person asks',
      'only with git_commit',
      'Never push',
    ])
      assert.ok(system.includes(part), `the prompt says ${part}`);
    assert.ok(system.indexOf('# Environment') > system.indexOf('## Git'), 'the fixed rules come first, so they stay cached');
  });

  it('refuses instruction file names that leave the folder or are globs', () => {
    assert.ok(InstructionFileNames.safeParse(['AGENTS.md', '.github/copilot-instructions.md']).success);
    for (const bad of ['../x.md', '/etc/passwd', 'a/../b.md', '*.md', 'C:/x.md', 'a\\b.md', ''])
      assert.equal(InstructionFileNames.safeParse([bad]).success, false, bad);
  });
});
