// Screenshots of the Timeline webview (light and dark) with a sample run, the tree expanded
// and the restore preview open: test-results/timeline-<theme>.png, timeline-<theme>-restore.png.
import { join, resolve } from 'node:path';
import { buildRunView } from '../../src/host/vscode/timeline/view-build';
import type { RestorePreview } from '../../src/protocol/viewModel';
import { sampleRun } from '../unit/webview/fixtures';
import { openTimelinePage, post, type Theme } from './timelinePage';

const OUT = resolve(__dirname, '..', '..', 'test-results');

async function shoot(theme: Theme): Promise<string[]> {
  const live = sampleRun(14, { runId: 'run-live', running: true });
  const liveView = buildRunView(live.state, live.live, true);
  const done = sampleRun(6, { runId: 'run-old', task: 'Rename the config loader and update its callers' });
  const doneView = buildRunView({ ...done.state, status: 'interrupted' }, done.live, false);
  doneView.header.createdAt -= 3_600_000;
  doneView.header.undoableRestores = 1;
  const { browser, page, problems } = await openTimelinePage(theme, { width: 460, height: 620 });
  try {
    await post(page, { type: 'snapshot', runs: [liveView, doneView] });
    const tree = page.locator('.tree');
    await tree.focus();
    // Keyboard only: into the run, open step 1 (write_file) and its call, then step 3 (http_post).
    for (const key of ['ArrowDown', 'ArrowDown', 'ArrowRight', 'ArrowDown', 'ArrowRight']) await page.keyboard.press(key);
    await page.locator('.row', { hasText: 'Step 3' }).click();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowRight');
    await page.locator('.row', { hasText: 'Step 5' }).click();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.waitForTimeout(300);
    const tree1 = join(OUT, `timeline-${theme}.png`);
    await page.screenshot({ path: tree1 });

    // The live run is being written, so restore is offered on the interrupted one.
    await page.locator('.row', { hasText: 'Rename the config loader' }).click();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('End');
    const step = page.locator('.row', { hasText: 'Step 3' }).last();
    await step.hover();
    await step.locator('button[data-action="restore"]').click();
    const request = await page.waitForFunction(() =>
      (window as unknown as { __posted: Array<{ method?: string }> }).__posted.find((m) => m.method === 'restorePreview'),
    );
    const { requestId, params } = (await request.jsonValue()) as { requestId: string; params: { runId: string; checkpointId: string } };
    const preview: RestorePreview = {
      runId: params.runId,
      checkpointId: params.checkpointId,
      mode: 'files',
      previewId: 'pv1',
      files: [
        { path: 'src/module1.ts', action: 'revert', detail: 'patch of step 1' },
        { path: 'src/module5.ts', action: 'conflict', detail: 'you edited lines 12-14 since step 5' },
        { path: 'src/module4.ts', action: 'already' },
      ],
      externalEffects: [
        {
          callId: 'toolu_3',
          toolName: 'http_post',
          label: 'http_post {"url":"https://api.example.com/issues","title":"Greeting bug"}',
          effect: { effects: ['network.post'], compensation: 'close the created issue by hand', reversible: true },
          result: '{"number":42,"state":"open"}',
        },
        {
          callId: 'toolu_6',
          toolName: 'run_command',
          label: 'run `npm publish --tag next` -> exit 0',
          effect: { effects: ['process.spawn'], compensation: 'not reversible', reversible: false },
          undoneBy: ['run_command (toolu_9)'],
        },
      ],
    };
    await post(page, { type: 'reply', requestId, ok: true, result: preview });
    await page.waitForTimeout(200);
    const tree2 = join(OUT, `timeline-${theme}-restore.png`);
    await page.screenshot({ path: tree2 });
    if (problems.length > 0) throw new Error(`page problems: ${problems.join('; ')}`);
    return [tree1, tree2];
  } finally {
    await browser.close();
  }
}

async function main(): Promise<void> {
  const files = [...(await shoot('dark')), ...(await shoot('light'))];
  console.log(JSON.stringify({ screenshots: files }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
