import { strict as assert } from 'node:assert';
import { openTimeline, openWorkbench, paletteEntries, type Workbench } from '../support/workbench';

describe('e2e: the real workbench', function () {
  let wb: Workbench;

  before(async () => {
    wb = await openWorkbench();
  });
  after(async () => {
    await wb?.close();
  });

  it('the command palette lists "Agent: Run" and "Agent: Resume"', async () => {
    const entries = await paletteEntries(wb.page, 'Agent: R', 'Agent: Resume');
    const file = await wb.screenshot('palette-agent-commands');
    console.log(`      screenshot: ${file}`);
    assert.ok(
      entries.some((e) => e.includes('Agent: Run')),
      `palette shows: ${entries.join(' | ')}`,
    );
    assert.ok(
      entries.some((e) => e.includes('Agent: Resume')),
      `palette shows: ${entries.join(' | ')}`,
    );
    await wb.page.keyboard.press('Escape');
  });

  it('the Agent Checkpoints container opens the Timeline view', async () => {
    const frame = await openTimeline(wb.page);
    // A fresh workspace has no runs: the view says so and how to start one.
    const empty = frame.getByText('No agent runs yet', { exact: false });
    await empty.waitFor({ timeout: 20_000 });
    assert.match((await empty.textContent()) ?? '', /Agent: Run/);
    const file = await wb.screenshot('timeline-view');
    console.log(`      screenshot: ${file}`);
  });
});
