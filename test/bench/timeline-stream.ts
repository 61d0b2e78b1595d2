// stream_e2e_ms_p95 of bench:timeline: streamed model text from the wire to the painted
// Timeline, in the real workbench (code-server, the extension in its extension host, the webview
// in Chromium). The fake Messages API streams TOKENS text deltas EVERY_MS apart and logs when
// each write left for the socket; the webview's frame stamps the end of the first frame (its
// animation frame callbacks, layout and paint) that begins after each token appears in its DOM.
// The figure starts before the runtime's text event in the extension host (it includes the SDK's
// parse of the SSE line on loopback), so it bounds that path from above.
import type { Frame } from 'playwright-core';
import { openAgentWorkbench, waitUntil } from '../support/e2e-story';
import { startFakeAnthropic } from '../support/fake-anthropic/server';
import { openTimeline } from '../support/workbench';

const TOKENS = 60;
const EVERY_MS = Number(process.env['STREAM_EVERY_MS'] ?? 60);

const token = (i: number) => `tk${i}x `;

/** The frame holding the Timeline's document (the webview's inner frame). */
async function timelineFrame(frames: readonly Frame[]): Promise<Frame> {
  for (const frame of frames) if ((await frame.$('textarea.composer-input').catch(() => null)) !== null) return frame;
  throw new Error('no frame holds the Timeline');
}

/**
 * Records, in the page, the time (ms since the epoch) the frame after each token appeared was
 * painted (the task after that frame's rendering), and the parts of the way (`__probe`).
 * A string: the bundler's helpers (keepNames) do not exist in the page.
 */
const WATCH_TOKENS = `(() => {
  const seen = {};
  const probe = { arrived: {}, hostAt: {}, inDom: {} };
  window.__painted = seen;
  window.__probe = probe;
  const now = () => performance.timeOrigin + performance.now();
  window.addEventListener('message', (event) => {
    const data = event.data;
    if (!data || data.type !== 'stream') return;
    for (const match of String(data.text).matchAll(/tk(\\d+)x/g)) {
      probe.arrived[match[1]] = now();
      probe.hostAt[match[1]] = data.at;
    }
  }, true);
  const scan = () => {
    for (const match of (document.body.textContent || '').matchAll(/tk(\\d+)x/g)) {
      const id = match[1];
      if (seen[id] !== undefined) continue;
      seen[id] = -1;
      probe.inDom[id] = now();
      requestAnimationFrame(() => {
        const channel = new MessageChannel();
        channel.port1.onmessage = () => { seen[id] = now(); };
        channel.port2.postMessage(null);
      });
    }
  };
  new MutationObserver(scan).observe(document.body, { subtree: true, childList: true, characterData: true });
})()`;

export interface StreamE2e {
  readonly p95: number;
  readonly median: number;
  readonly tokens: number;
  /** Per token, in the order sent (ms). */
  readonly latencies: readonly number[];
  /** p95 and median (ms) of each part of the way, from the page's and the host's stamps. */
  readonly parts: Record<string, { readonly p95: number; readonly median: number }>;
}

interface Probe {
  readonly arrived: Record<string, number>;
  readonly hostAt: Record<string, number>;
  readonly inDom: Record<string, number>;
}

function spread(values: readonly number[]): { p95: number; median: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => Math.round((sorted[Math.floor(sorted.length * q)] ?? NaN) * 10) / 10;
  return { p95: at(0.95), median: at(0.5) };
}

export async function streamE2eMs(): Promise<StreamE2e> {
  const deltas = Array.from({ length: TOKENS }, (_, i) => token(i));
  const answer = {
    content: [{ type: 'text' as const, text: deltas.join('') }],
    stop_reason: 'end_turn',
    eventDelayMs: EVERY_MS,
    textDeltas: deltas,
  };
  const fake = await startFakeAnthropic(() => answer);
  const wb = await openAgentWorkbench(fake.url);
  try {
    const outer = await openTimeline(wb.page);
    await outer.locator('textarea.composer-input').waitFor({ timeout: 60_000 });
    const frame = await timelineFrame(wb.page.frames());
    await frame.evaluate(WATCH_TOKENS);
    const input = frame.locator('textarea.composer-input');
    await input.fill('Say the tokens');
    await input.press('Enter');
    const painted = async () => (await frame.evaluate('window.__painted')) as Record<string, number>;
    await waitUntil(
      'every streamed token painted',
      async () => Object.values(await painted()).filter((t) => t > 0).length >= TOKENS,
      120_000,
    );
    const at = await painted();
    const latencies = fake.textSent.map((sent) => {
      const id = /tk(\d+)x/.exec(sent.text)?.[1];
      const paint = id === undefined ? undefined : at[id];
      if (paint === undefined || paint < 0) throw new Error(`token ${sent.text} was never painted`);
      return paint - sent.at;
    });
    const probe = (await frame.evaluate('window.__probe')) as Probe;
    const part = (from: (id: string, sent: number) => number | undefined, to: (id: string, sent: number) => number | undefined) =>
      spread(
        fake.textSent.flatMap((sent) => {
          const id = /tk(\d+)x/.exec(sent.text)?.[1] ?? '';
          const a = from(id, sent.at);
          const b = to(id, sent.at);
          return a === undefined || b === undefined ? [] : [b - a];
        }),
      );
    const parts = {
      wire_to_host_event: part(
        (_, sent) => sent,
        (id) => probe.hostAt[id],
      ),
      host_event_to_webview: part(
        (id) => probe.hostAt[id],
        (id) => probe.arrived[id],
      ),
      webview_to_dom: part(
        (id) => probe.arrived[id],
        (id) => probe.inDom[id],
      ),
      dom_to_frame: part(
        (id) => probe.inDom[id],
        (id) => at[id],
      ),
    };
    const sorted = [...latencies].sort((a, b) => a - b);
    return {
      parts,
      p95: sorted[Math.floor(sorted.length * 0.95)]!,
      median: sorted[Math.floor(sorted.length / 2)]!,
      tokens: sorted.length,
      latencies: latencies.map(Math.round),
    };
  } finally {
    await wb.close();
    await fake.close();
  }
}
