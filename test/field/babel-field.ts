// A person's session in the real editor on a real repository: code-server + Chromium on a copy of
// babel (27k files), a store that already holds many long runs, and the agent on the strict fake
// API. Not part of npm test (it needs a babel clone): `npx tsx test/field/babel-field.ts <babel>`.
// It starts a run from the composer (a plan, three reads at once, a command, an edit, a command's
// edit, a TypeScript edit with a type error), allows the commands as a person does, then restores
// Both to before the command's edit and gives the fork an instruction. It prints the figures a
// person feels (the run list's first paint, answer-to-next-request per call) and what git sees.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FrameLocator } from 'playwright-core';
import { buildRuns } from '../bench/many-runs';
import { waitUntil } from '../support/e2e-story';
import { startFakeAnthropic, type FakeAnthropic } from '../support/fake-anthropic/server';
import { openTimeline, openWorkbench, paletteEntries } from '../support/workbench';
import { folderKey, workspaceStoreDir } from '../../src/host/node/state-dir';
import { shots } from '../e2e/first-hour-shots';

const TASK = 'Tidy the contributing guide and the string parser';
const FORK_WORDS = 'Keep the headings as they were and say so';
const RUNS = Number(process.env['FIELD_RUNS'] ?? 40);
const STEPS = Number(process.env['FIELD_STEPS'] ?? 1000);

const toolUses = (...calls: Array<[string, string, unknown]>) => ({
  content: calls.map(([id, name, input]) => ({ type: 'tool_use' as const, id, name, input })),
  stop_reason: 'tool_use',
});
const text = (words: string) => ({ content: [{ type: 'text' as const, text: words }], stop_reason: 'end_turn' });

/** The run's script, keyed by what the conversation already holds. */
const requestTimes: number[] = [];
function scriptedModel(): Promise<FakeAnthropic> {
  const plan = (done: number) => ({
    steps: ['Read the layout', 'Tidy CONTRIBUTING.md', 'Fix the parser'].map((step, i) => ({
      step,
      status: i < done ? 'done' : i === done ? 'in_progress' : 'pending',
    })),
  });
  return startFakeAnthropic((request) => {
    requestTimes.push(Date.now());
    const said = JSON.stringify((request.body as { messages?: unknown[] }).messages ?? []);
    if (said.includes(FORK_WORDS)) return text('The headings are as they were; only the README edit stays.');
    const next: Array<[string, ReturnType<typeof toolUses> | ReturnType<typeof text>]> = [
      ['toolu_plan', toolUses(['toolu_plan', 'update_plan', plan(0)])],
      [
        'toolu_read',
        toolUses(
          ['toolu_read', 'read_file', { path: 'package.json' }],
          ['toolu_find', 'find_files', { pattern: '**/package.json' }],
          ['toolu_search', 'search_text', { pattern: 'forbiddenNumericSeparatorSiblings' }],
        ),
      ],
      ['toolu_status', toolUses(['toolu_status', 'run_command', { command: 'git status --short | head -5' }])],
      [
        'toolu_readme',
        toolUses([
          'toolu_readme',
          'edit_file',
          {
            path: 'README.md',
            old_string: 'The compiler for writing next generation JavaScript.',
            new_string: 'The compiler for next-generation JavaScript.',
          },
        ]),
      ],
      ['toolu_sed', toolUses(['toolu_sed', 'run_command', { command: "sed -i 's/^## /### /' CONTRIBUTING.md" }])],
      [
        'toolu_ts',
        toolUses([
          'toolu_ts',
          'edit_file',
          {
            path: 'packages/babel-helper-string-parser/src/index.ts',
            old_string: 'bin: (ch: number) => ch === charCodes.digit0',
            new_string: 'bin: (ch: number) => ch === "0"',
          },
        ]),
      ],
    ];
    const due = next.find(([id]) => !said.includes(id));
    return due ? due[1] : text('Tidied CONTRIBUTING.md and edited the parser; the type checker was not run.');
  });
}

/** Clicks "Allow once" on every approval card until the run named `title` is done. */
async function allowUntilDone(frame: FrameLocator, title: string | RegExp): Promise<void> {
  const done = async () => {
    const tip = (await frame.locator('[role="treeitem"].kind-run', { hasText: title }).first().getAttribute('title')) ?? '';
    return /Status: (completed|failed|paused)/.test(tip);
  };
  await waitUntil(
    'the run to finish, commands allowed',
    async () => {
      const allow = frame.locator('.approvals .approval button', { hasText: 'Allow once' });
      if ((await allow.count()) > 0) await allow.first().click();
      return done();
    },
    240_000,
  );
}

async function main(): Promise<void> {
  const source = process.argv[2] ?? '/tmp/babel';
  const workspace = mkdtempSync(join(tmpdir(), 'field-babel-'));
  execFileSync('cp', ['-a', `${source}/.`, workspace]);
  let store = '';
  const fake = await scriptedModel();
  const csDir = mkdtempSync(join(tmpdir(), 'field-cs-'));
  const wb = await openWorkbench({
    workspace,
    stateDir: csDir,
    env: { ANTHROPIC_API_KEY: 'sk-ant-field-not-a-real-key' },
    settings: {
      'agentCheckpoints.provider': 'anthropic',
      'agentCheckpoints.baseUrl': fake.url,
      'agentCheckpoints.model': 'claude-e2e-test',
    },
  });
  try {
    await openTimeline(wb.page);
    // This window's own store (the extension's global storage, keyed by the folder), filled with long runs, then a reload.
    const globalStorage = join(csDir, 'user-data/User/globalStorage/agent-checkpoints.agent-checkpoints');
    store = workspaceStoreDir(globalStorage, [folderKey({ scheme: 'file', fsPath: workspace, uri: `file://${workspace}` })]);
    let t = Date.now();
    const journalBytes = await buildRuns(store, RUNS, STEPS);
    console.log(`store ${store}: ${RUNS} runs of ${STEPS} steps (${(journalBytes / 1e6).toFixed(1)} MB) built in ${Date.now() - t} ms`);
    await paletteEntries(wb.page, 'Developer: Reload Window', 'Reload Window');
    const reloaded = wb.page.waitForEvent('load', { timeout: 60_000 });
    await wb.page.keyboard.press('Enter');
    await reloaded;
    t = Date.now();
    const frame = await openTimeline(wb.page);
    const runRows = frame.locator('[role="treeitem"].kind-run');
    await runRows.first().waitFor({ timeout: 120_000 });
    console.log(`run list shown ${Date.now() - t} ms after the view was opened; rows: ${await runRows.count()}`);
    // The tree is virtual (the expanded run's steps fill it): a run row's set size counts the runs.
    await waitUntil('every run listed', async () => (await runRows.first().getAttribute('aria-setsize')) === String(RUNS), 120_000);
    console.log(`all ${RUNS} runs listed ${Date.now() - t} ms after the view was opened`);
    await shots(wb, 'field-1-many-runs');

    const input = frame.locator('textarea.composer-input');
    await frame
      .locator('a, button', { hasText: 'start a new run' })
      .first()
      .click()
      .catch(() => undefined);
    await input.fill(TASK);
    t = Date.now();
    await input.press('Enter');
    await allowUntilDone(frame, TASK);
    console.log(`run finished in ${Date.now() - t} ms (person's clicks included)`);
    const times = requestTimes;
    console.log(
      `requests: ${times.length}; gaps between them (ms): ${times
        .slice(1)
        .map((at, i) => at - times[i]!)
        .join(', ')}`,
    );
    await shots(wb, 'field-2-run-done');

    // Restore Both to before the command's edit, then instruct the fork.
    const sedStep = frame.locator('[role="treeitem"].kind-step', { hasText: /sed -i/ }).first();
    await sedStep.click();
    await sedStep.hover();
    await sedStep.locator('button[data-action="restore"]').click();
    await frame.locator('.dialog .modes .mode', { hasText: 'Both' }).click();
    const confirm = frame.locator('.dialog button.primary', { hasText: 'Restore files and session' });
    await waitUntil('the preview', async () => (await confirm.count()) === 1 && (await confirm.isEnabled()), 30_000);
    const preview = (await frame.locator('.dialog').textContent()) ?? '';
    console.log(`preview: ${preview.replace(/\s+/g, ' ').slice(0, 400)}`);
    await wb.screenshot('field-3-preview-300');
    await confirm.click();
    await frame.locator('.dialog').waitFor({ state: 'detached', timeout: 30_000 });
    const contributing = readFileSync(join(workspace, 'CONTRIBUTING.md'), 'utf8');
    assert.ok(/^## Chat/m.test(contributing), 'the command edit was rolled back');
    await frame.locator('.composer-target', { hasText: /Continues "Fork at step/ }).waitFor({ timeout: 30_000 });
    await input.fill(FORK_WORDS);
    await input.press('Enter');
    await allowUntilDone(frame, FORK_WORDS);
    await shots(wb, 'field-4-fork-instructed');
    console.log(`git status after the fork:\n${execFileSync('git', ['status', '--short'], { cwd: workspace, encoding: 'utf8' })}`);
  } catch (error) {
    await wb.screenshot('field-failed');
    execFileSync('bash', ['-c', `rm -rf /tmp/field-logs; cp -r ${csDir}/user-data/logs /tmp/field-logs`]);
    throw error;
  } finally {
    await wb.close();
    await fake.close();
    if (!process.env['FIELD_KEEP']) {
      rmSync(workspace, { recursive: true, force: true });
      rmSync(csDir, { recursive: true, force: true });
    } else console.log(`kept: ${workspace} ${store}`);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
