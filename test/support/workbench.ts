// A real workbench in code-server, opened by headless Chromium, for e2e tests and screenshots.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, REPO_ROOT, startCodeServer, workbenchUrl, type RunningCodeServer } from './code-server';

export const SCREENSHOT_DIR = join(REPO_ROOT, 'test-results', 'screenshots');

export interface Workbench {
  /** The page showing the workbench now (a new one after `dropAndReopen`). */
  readonly page: Page;
  readonly workspace: string;
  readonly server: RunningCodeServer;
  screenshot(name: string): Promise<string>;
  /**
   * Kills the browser without a goodbye, as a dropped connection or a crashed tab does: the
   * server keeps the old extension host alive (reconnection grace). Then opens the workspace
   * again in a fresh browser, which gets an extension host of its own.
   */
  dropAndReopen(): Promise<Page>;
  close(): Promise<void>;
}

interface Browser {
  readonly context: BrowserContext;
  readonly page: Page;
  readonly profile: string;
}

async function openBrowser(server: RunningCodeServer, workspace: string): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'agent-checkpoints-e2e-chromium-'));
  let context: BrowserContext | undefined;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: CHROMIUM_ARGS,
      headless: true,
      viewport: { width: 1400, height: 900 },
    });
    const page = context.pages()[0] ?? (await context.newPage());
    // A loaded machine (several workbenches at once) can take well over Playwright's default 30 s.
    await page.goto(workbenchUrl(server, workspace, { extensionDevelopmentPath: REPO_ROOT }), { timeout: 120_000 });
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    await page.locator('.activitybar').waitFor({ timeout: 60_000 });
    return { context, page, profile };
  } catch (err) {
    await context?.close().catch(() => undefined);
    rmSync(profile, { recursive: true, force: true });
    throw err;
  }
}

/** The browser's main process: the one started with this profile that is not a child (`--type=`). */
function browserPid(profile: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (args.includes(`--user-data-dir=${profile}`) && !args.some((a) => a.startsWith('--type='))) return Number(entry);
  }
  return undefined;
}

async function killBrowser(browser: Browser): Promise<void> {
  const pid = browserPid(browser.profile);
  if (pid === undefined) throw new Error(`no browser process found for the profile ${browser.profile}`);
  process.kill(pid, 'SIGKILL');
  const until = Date.now() + 10_000;
  while (existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ') && Date.now() < until)
    await new Promise((r) => setTimeout(r, 100));
  await browser.context.close().catch(() => undefined);
}

/** Best effort: a killed browser's children may still be writing to its profile for a moment. */
function removeProfile(profile: string): void {
  try {
    rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  } catch {
    // Left in the temp folder; nothing depends on it.
  }
}

export async function openWorkbench(
  options: {
    env?: Record<string, string>;
    settings?: Record<string, unknown>;
    files?: Record<string, string>;
    /** A folder to open as it is (kept on close); otherwise a fresh copy of the demo workspace. */
    workspace?: string;
    /** The server's state folder (user data, extensions), when the caller reads or fills it. */
    stateDir?: string;
  } = {},
): Promise<Workbench> {
  const given = options.workspace;
  const workspace = given ?? mkdtempSync(join(tmpdir(), 'agent-checkpoints-e2e-ws-'));
  const source = join(REPO_ROOT, 'test/demo/workspace');
  if (given === undefined && existsSync(source)) cpSync(source, workspace, { recursive: true });
  for (const [path, text] of Object.entries(options.files ?? {})) writeFileSync(join(workspace, path), text);
  const server = await startCodeServer({ env: options.env, settings: options.settings, stateDir: options.stateDir });
  let browser: Browser;
  try {
    browser = await openBrowser(server, workspace);
  } catch (err) {
    await server.stop();
    throw err;
  }
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const killed: string[] = [];
  return {
    get page() {
      return browser.page;
    },
    workspace,
    server,
    async screenshot(name) {
      const file = join(SCREENSHOT_DIR, `${name}.png`);
      await browser.page.screenshot({ path: file });
      return file;
    },
    async dropAndReopen() {
      await killBrowser(browser);
      killed.push(browser.profile);
      browser = await openBrowser(server, workspace);
      return browser.page;
    },
    async close() {
      await browser.context.close().catch(() => undefined);
      await server.stop();
      for (const profile of [...killed, browser.profile]) removeProfile(profile);
      if (given === undefined) rmSync(workspace, { recursive: true, force: true });
    },
  };
}

/**
 * Opens the command palette and types a query; returns the visible entries' labels once one
 * contains `expect` (contributions arrive a little after the workbench paints) or the time is up.
 */
export async function paletteEntries(page: Page, query: string, expect: string, timeoutMs = 30_000): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  let labels: string[] = [];
  while (Date.now() < deadline) {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ timeout: 10_000 });
    await input.fill(`>${query}`);
    const rows = page.locator('.quick-input-list .monaco-list-row');
    await rows.first().waitFor({ timeout: 10_000 });
    await page.waitForTimeout(300);
    labels = await rows.evaluateAll((els) => els.map((e) => (e.getAttribute('aria-label') ?? e.textContent ?? '').trim()));
    if (labels.some((l) => l.includes(expect))) return labels;
    await page.keyboard.press('Escape');
    await page.waitForTimeout(1_000);
  }
  return labels;
}

/** Opens the Agent Checkpoints container and returns the Timeline webview's inner frame. */
export async function openTimeline(page: Page) {
  const title = page.locator('.sidebar .composite.title', { hasText: /Timeline/i }).first();
  // Clicking the icon of the container already in view closes the side bar, and after a reload the
  // workbench may restore the container between our look and our click: click, and if that closed it,
  // click again. A container with a single view shows it without a pane header: wait for its title.
  for (let attempt = 0; attempt < 4 && !(await title.isVisible()); attempt++) {
    await page.locator('.activitybar [aria-label^="Agent Checkpoints"]').first().click();
    await title.waitFor({ timeout: 10_000 }).catch(() => undefined);
  }
  await title.waitFor({ timeout: 45_000 });
  // The extension activates and the webview loads after the workbench paints: slow on a busy machine.
  const frame = page.frameLocator('iframe.webview.ready').last().frameLocator('iframe#active-frame');
  await frame.locator('body').waitFor({ timeout: 45_000 });
  return frame;
}
