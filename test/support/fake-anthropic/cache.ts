import { createHash } from 'node:crypto';

// Token counting and prompt caching as the Messages API does them, close enough for tests: a
// request is a sequence of segments (each tool definition, each system block, each content block
// of each message), a token is 4 bytes of a segment's JSON, and cache_control marks breakpoints.
// A prefix that ends at a breakpoint is written to the cache; a later request whose prefix up to
// a breakpoint (or up to 20 segments before one) equals a cached prefix reads it from the cache.
// cache_control itself is not part of what is compared, as with the real API.

export const BYTES_PER_TOKEN = 4;
const LOOKBACK = 20;

export interface CacheUsage {
  readonly input_tokens: number;
  readonly cache_read_input_tokens: number;
  readonly cache_creation_input_tokens: number;
}

interface Segment {
  readonly tokens: number;
  readonly key: string;
  readonly breakpoint: boolean;
}

type Json = Record<string, unknown>;

function strip(block: Json): { canonical: string; breakpoint: boolean } {
  const { cache_control, ...rest } = block;
  return { canonical: JSON.stringify(rest), breakpoint: cache_control !== undefined && cache_control !== null };
}

export function tokensOfText(text: string): number {
  return Math.ceil(Buffer.byteLength(text, 'utf8') / BYTES_PER_TOKEN);
}

function blocksOf(content: unknown): Json[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? (content as Json[]) : [];
}

/** The request's segments, each keyed by the hash of everything up to and including it. */
function segmentsOf(body: Json): Segment[] {
  const raw: { canonical: string; breakpoint: boolean }[] = [];
  raw.push({ canonical: JSON.stringify({ model: body['model'] }), breakpoint: false });
  for (const tool of (body['tools'] as Json[] | undefined) ?? []) raw.push(strip(tool));
  for (const block of blocksOf(body['system'])) raw.push(strip(block));
  for (const message of (body['messages'] as Json[] | undefined) ?? []) {
    blocksOf(message['content']).forEach((block, i) => {
      const part = strip(block);
      raw.push({ canonical: i === 0 ? `${String(message['role'])}:${part.canonical}` : part.canonical, breakpoint: part.breakpoint });
    });
  }
  let key = '';
  return raw.map(({ canonical, breakpoint }) => {
    key = createHash('sha256').update(key).update(canonical).digest('hex');
    return { tokens: tokensOfText(canonical), key, breakpoint };
  });
}

/** The input tokens of a request, however they are cached. */
export function requestTokens(body: unknown): number {
  return segmentsOf(body as Json).reduce((sum, s) => sum + s.tokens, 0);
}

/** The prompt cache of one server: prefix keys written by earlier requests. */
export class PromptCache {
  private readonly written = new Set<string>();

  /** Usage of a request: the longest cached prefix is read, up to the last breakpoint is written, the rest is input. */
  use(body: unknown): CacheUsage {
    const segments = segmentsOf(body as Json);
    const breakpoints = segments.flatMap((s, i) => (s.breakpoint ? [i] : []));
    let hit = -1;
    for (const b of breakpoints) {
      for (let j = b; j >= Math.max(0, b - LOOKBACK); j--) {
        if (this.written.has(segments[j]!.key)) {
          hit = Math.max(hit, j);
          break;
        }
      }
    }
    const last = breakpoints.at(-1) ?? -1;
    let read = 0;
    let write = 0;
    let input = 0;
    segments.forEach((s, i) => {
      if (i <= hit) read += s.tokens;
      else if (i <= last) write += s.tokens;
      else input += s.tokens;
    });
    for (const b of breakpoints) this.written.add(segments[b]!.key);
    return { input_tokens: input, cache_read_input_tokens: read, cache_creation_input_tokens: write };
  }
}

const SIGNING_KEY = 'fake-anthropic-thinking-key';

/** The signature the fake gives a thinking block: it proves the text came back unchanged. */
export function signThinking(thinking: string): string {
  return createHash('sha256').update(SIGNING_KEY).update(thinking).digest('base64');
}
