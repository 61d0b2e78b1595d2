// Screenshots of the first-hour stories at 300 and 800 px wide, light and dark. The side bar is
// sized by dragging its sash (the element, not the side bar's edge, takes the drag) and checked;
// the theme is switched with Preferences: Color Theme (a settings file written behind the
// workbench's back is not picked up in code-server).
import type { Page } from 'playwright-core';
import type { Workbench } from '../support/workbench';

/** As the theme picker labels them (the setting's ids carry a "Default " in front). */
const THEMES = { light: 'Light Modern', dark: 'Dark Modern' } as const;

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
  await page.waitForTimeout(400);
  const now = await sideBarWidth(page);
  if (Math.abs(now - width) > 8) throw new Error(`the side bar is ${now}px wide, not ${width}px`);
  return now;
}

const wearing = (theme: keyof typeof THEMES) => (theme === 'light' ? '.monaco-workbench.vs' : '.monaco-workbench.vs-dark');

/** Switches the colour theme with Preferences: Color Theme; false when the workbench did not take it. */
export async function setTheme(wb: Workbench, theme: keyof typeof THEMES): Promise<boolean> {
  const page = wb.page;
  if ((await page.locator(wearing(theme)).count()) > 0) return true;
  try {
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    await page.locator('.quick-input-widget input').first().waitFor({ timeout: 10_000 });
    await page.keyboard.type('Preferences: Color Theme');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Preferences: Color Theme' }).first().waitFor({ timeout: 10_000 });
    await page.keyboard.press('Enter');
    // The theme picker replaces the palette in the same widget: wait for its rows, then type.
    await page
      .locator('.quick-input-list .monaco-list-row', { hasText: /Modern|High Contrast/ })
      .first()
      .waitFor({ timeout: 15_000 });
    await page.keyboard.type(THEMES[theme]);
    await page.waitForTimeout(500);
    await page.keyboard.press('Enter');
    await page.locator(wearing(theme)).first().waitFor({ timeout: 15_000 });
    await page.waitForTimeout(500);
    return true;
  } catch (error) {
    await page.keyboard.press('Escape');
    console.log(`      the ${theme} theme could not be set: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
    return false;
  }
}

/** `first-hour-<name>-{300,800}-{light,dark}.png`; leaves the side bar at 300 px, dark. */
export async function shots(wb: Workbench, name: string, options: { themes?: readonly (keyof typeof THEMES)[] } = {}): Promise<void> {
  for (const theme of options.themes ?? (['dark', 'light'] as const)) {
    if (!(await setTheme(wb, theme))) continue;
    for (const width of [300, 800]) {
      await setSideBarWidth(wb.page, width);
      console.log(`      screenshot: ${await wb.screenshot(`first-hour-${name}-${width}-${theme}`)}`);
    }
  }
  await setTheme(wb, 'dark');
  await setSideBarWidth(wb.page, 300);
}
