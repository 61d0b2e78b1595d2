import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { timelineHtml } from '../../src/host/vscode/timeline/html';

// Loads dist/webview.js in headless Chromium the way the Timeline view does (same HTML, same
// CSP), with a fake acquireVsCodeApi and theme variables standing in for VS Code's.

const ROOT = resolve(__dirname, '..', '..');
const PAGE_DIR = join(ROOT, 'test-results', 'timeline-page');

export type Theme = 'dark' | 'light';

const THEMES: Record<Theme, Record<string, string>> = {
  dark: {
    foreground: '#cccccc',
    'sideBar-background': '#181818',
    descriptionForeground: '#9d9d9d',
    'list-hoverBackground': '#2a2d2e',
    'list-activeSelectionBackground': '#04395e',
    'list-activeSelectionForeground': '#ffffff',
    'list-inactiveSelectionBackground': '#37373d',
    'list-focusOutline': '#0078d4',
    focusBorder: '#0078d4',
    'testing-iconPassed': '#73c991',
    errorForeground: '#f85149',
    'editorWarning-foreground': '#cca700',
    'charts-blue': '#3794ff',
    'charts-purple': '#b180d7',
    'badge-background': '#616161',
    'badge-foreground': '#f8f8f8',
    'editorWidget-background': '#202020',
    'editorWidget-border': '#454545',
    'widget-shadow': 'rgba(0,0,0,0.36)',
    'button-background': '#0078d4',
    'button-foreground': '#ffffff',
    'button-hoverBackground': '#026ec1',
    'button-secondaryBackground': '#313131',
    'button-secondaryForeground': '#cccccc',
    'toolbar-hoverBackground': 'rgba(90,93,94,0.31)',
    'panel-border': '#2b2b2b',
    'font-family': 'system-ui, sans-serif',
    'font-size': '13px',
    'font-weight': 'normal',
  },
  light: {
    foreground: '#3b3b3b',
    'sideBar-background': '#f8f8f8',
    descriptionForeground: '#717171',
    'list-hoverBackground': '#f2f2f2',
    'list-activeSelectionBackground': '#e8e8e8',
    'list-activeSelectionForeground': '#000000',
    'list-inactiveSelectionBackground': '#e4e6f1',
    'list-focusOutline': '#005fb8',
    focusBorder: '#005fb8',
    'testing-iconPassed': '#388a34',
    errorForeground: '#f85149',
    'editorWarning-foreground': '#bf8803',
    'charts-blue': '#1a85ff',
    'charts-purple': '#652d90',
    'badge-background': '#cccccc',
    'badge-foreground': '#3b3b3b',
    'editorWidget-background': '#f8f8f8',
    'editorWidget-border': '#c8c8c8',
    'widget-shadow': 'rgba(0,0,0,0.16)',
    'button-background': '#005fb8',
    'button-foreground': '#ffffff',
    'button-hoverBackground': '#0258a8',
    'button-secondaryBackground': '#e5e5e5',
    'button-secondaryForeground': '#3b3b3b',
    'toolbar-hoverBackground': 'rgba(184,184,184,0.31)',
    'panel-border': '#e5e5e5',
    'font-family': 'system-ui, sans-serif',
    'font-size': '13px',
    'font-weight': 'normal',
  },
};

function writePage(theme: Theme): string {
  mkdirSync(PAGE_DIR, { recursive: true });
  const vars = Object.entries(THEMES[theme])
    .map(([k, v]) => `  --vscode-${k}: ${v};`)
    .join('\n');
  writeFileSync(join(PAGE_DIR, `theme-${theme}.css`), `:root {\n${vars}\n}\n`);
  const rel = (p: string) => relative(PAGE_DIR, join(ROOT, p)).split('\\').join('/');
  const html = timelineHtml({
    nonce: 'bench0nonce0value0123456',
    cspSource: 'file:',
    scriptUri: rel('dist/webview.js'),
    styleUris: [`theme-${theme}.css`, rel('dist/codicons/codicon.css'), rel('media/timeline.css')],
  });
  const file = join(PAGE_DIR, `index-${theme}.html`);
  writeFileSync(file, html);
  return file;
}

// A string, not a function: tsx would wrap a function with helpers the page does not have.
const FAKE_API = `
  window.__posted = [];
  window.__state = undefined;
  window.acquireVsCodeApi = () => ({
    postMessage: (m) => window.__posted.push(m),
    getState: () => window.__state,
    setState: (s) => { window.__state = s; },
  });
`;

export interface TimelinePage {
  readonly browser: Browser;
  readonly page: Page;
  /** CSP violations and console errors seen so far. */
  readonly problems: string[];
}

export async function openTimelinePage(theme: Theme, viewport = { width: 420, height: 720 }): Promise<TimelinePage> {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const page = await browser.newPage({ viewport, colorScheme: theme });
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  await page.addInitScript({ content: FAKE_API });
  await page.goto(`file://${writePage(theme)}`);
  await page.evaluate(() =>
    document.body.classList.add('vscode-' + (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light')),
  );
  await page.waitForFunction(() => (window as unknown as { __posted: Array<{ type?: string }> }).__posted.some((m) => m.type === 'ready'));
  return { browser, page, problems };
}

/**
 * Puts a host message into the page ahead of time, as the structured clone of a postMessage
 * would, and lets the collector settle, so the timing below covers only the webview's work.
 */
async function stage(page: Page, message: unknown): Promise<void> {
  await page.evaluate((json) => {
    (window as unknown as { __staged: unknown }).__staged = JSON.parse(json);
  }, JSON.stringify(message));
  await page.waitForTimeout(300);
}

/** Dispatches a host message and resolves with ms until the frame that shows it was painted. */
export async function postAndTimePaint(page: Page, message: unknown): Promise<number> {
  await stage(page, message);
  return page.evaluate(async () => {
    const w = window as unknown as { __staged: unknown };
    const data = w.__staged;
    w.__staged = undefined;
    const t0 = performance.now();
    window.dispatchEvent(new MessageEvent('message', { data }));
    await new Promise<void>((done) =>
      requestAnimationFrame(() => {
        const channel = new MessageChannel();
        channel.port1.onmessage = () => done();
        channel.port2.postMessage(null);
      }),
    );
    return performance.now() - t0;
  });
}

export async function post(page: Page, message: unknown): Promise<void> {
  await page.evaluate((data) => window.dispatchEvent(new MessageEvent('message', { data })), message);
}
