// Screenshots of the first-hour stories at 300 and 800 px wide, light and dark. The side bar is
// sized by dragging its sash (the element, not the side bar's edge, takes the drag) and checked;
// the theme is switched with "Preferences: Toggle between Light/Dark Themes" (the theme picker does
// not answer in code-server, and a settings file written behind the workbench's back is not read).
import type { Page } from 'playwright-core';
import { waitUntil } from '../support/e2e-story';
import { paletteEntries, type Workbench } from '../support/workbench';

/** The side bar's width now, in px. */
async function sideBarWidth(page: Page): Promise<number> {
  return (await page.locator('.part.sidebar').boundingBox())?.width ?? 0;
}

/** Drags the sash at the side bar's right edge until the side bar is `width` px wide. */
export async function setSideBarWidth(page: Page, width: number): Promise<number> {
  const bar = await page.locator('.part.sidebar').boundingBox();
  if (!bar) throw new Error('no side bar in view');
  const edge = bar.x + bar.width;
  const sashes = await page.locator('.monaco-sash.vertical').evaluateAll((els) =>
    els.map((e, i) => {
      const r = e.getBoundingClientRect();
      return { i, x: r.x + r.width / 2, y: r.y + r.height / 2, w: r.width, h: r.height };
    }),
  );
  const sash = sashes.filter((s) => s.h > 100 && Math.abs(s.x - edge) < 6).sort((a, b) => Math.abs(a.x - edge) - Math.abs(b.x - edge))[0];
  if (!sash) throw new Error(`no sash at the side bar's edge (${edge}px)`);
  await page.mouse.move(sash.x, sash.y);
  await page.mouse.down();
  await page.mouse.move(sash.x + (width - bar.width) / 2, sash.y, { steps: 4 });
  await page.mouse.move(bar.x + width, sash.y, { steps: 4 });
  await page.mouse.up();
  // Off the sash, so it does not show its hover colour in the screenshot.
  await page.mouse.move(bar.x + width + 300, sash.y);
  await page.waitForTimeout(400);
  const now = await sideBarWidth(page);
  if (Math.abs(now - width) > 8) throw new Error(`the side bar is ${now}px wide, not ${width}px`);
  return now;
}

type Theme = 'light' | 'dark';

/** The theme the workbench wears now; undefined until a colour theme is applied (the first paint has none). */
async function wornTheme(page: Page): Promise<Theme | undefined> {
  const classes = ((await page.locator('.monaco-workbench').first().getAttribute('class')) ?? '').split(/\s+/);
  if (!classes.some((c) => c.startsWith('vscode-theme-'))) return undefined;
  return classes.includes('vs-dark') ? 'dark' : classes.includes('vs') ? 'light' : undefined;
}

/**
 * Puts the workbench in the light or dark theme with "Preferences: Toggle between Light/Dark
 * Themes" (the default light and dark themes a new user meets); false when it did not take.
 */
export async function setTheme(wb: Workbench, theme: Theme): Promise<boolean> {
  const page = wb.page;
  for (let attempt = 0; attempt < 3; attempt++) {
    const worn = await wornTheme(page);
    if (worn === theme) return true;
    await page.keyboard.press('Escape');
    await paletteEntries(page, 'Preferences: Toggle between Light/Dark Themes', 'Toggle between Light/Dark');
    await page.keyboard.press('Enter');
    await waitUntil('the theme to change', async () => (await wornTheme(page)) !== worn, 15_000).catch(() => undefined);
  }
  const worn = await wornTheme(page);
  if (worn !== theme) console.log(`      the ${theme} theme could not be set (wearing ${worn ?? 'none'})`);
  return worn === theme;
}

/**
 * `first-hour-<name>-{300,800}-{light,dark}.png` (or other `widths`, another `prefix`): the theme worn now first,
 * then the other (one switch per call); leaves the side bar at the narrow width. `before` runs before each, told its width and theme (e.g. hover a toast to keep it).
 */
export async function shots(
  wb: Workbench,
  name: string,
  options: { before?: (shot: string) => Promise<void>; widths?: readonly [number, number]; prefix?: string } = {},
): Promise<void> {
  const [narrow, wide] = options.widths ?? [300, 800];
  const first: Theme = (await wornTheme(wb.page)) === 'dark' ? 'dark' : 'light';
  const order = [first, first === 'dark' ? 'light' : 'dark'] as const;
  for (const [i, theme] of order.entries()) {
    if (!(await setTheme(wb, theme))) continue;
    for (const width of i === 0 ? [narrow, wide] : [wide, narrow]) {
      await setSideBarWidth(wb.page, width);
      await options.before?.(`${width} px, ${theme}`);
      console.log(`      screenshot: ${await wb.screenshot(`${options.prefix ?? 'first-hour'}-${name}-${width}-${theme}`)}`);
    }
  }
  await setSideBarWidth(wb.page, narrow);
}
