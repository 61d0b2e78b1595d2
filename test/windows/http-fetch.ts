// A fetch over node:http for the Windows layer: Node's own fetch (undici) cannot connect under
// Wine 8, while node:http can. The product keeps globalThis.fetch as its default; only the suites
// bundled for Node for Windows get this one (run-windows.ts injects it), so the real SDK path runs
// against the loopback fake API there too. Loopback http only: what the tests use.
import { request } from 'node:http';
import { Readable } from 'node:stream';

function headerPairs(headers: HeadersInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  new Headers(headers).forEach((value, name) => (out[name] = value));
  return out;
}

async function bodyBytes(body: BodyInit | null | undefined): Promise<Buffer | undefined> {
  if (body === undefined || body === null) return undefined;
  return Buffer.from(await new Response(body).arrayBuffer());
}

export async function httpFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const req = input instanceof Request ? input : undefined;
  const url = new URL(req?.url ?? String(input));
  if (url.protocol !== 'http:') throw new TypeError(`the Windows layer's fetch speaks http only: ${url.href}`);
  const method = init.method ?? req?.method ?? 'GET';
  const headers = headerPairs(init.headers ?? req?.headers);
  const body = await bodyBytes(init.body ?? (req !== undefined && req.body !== null ? await req.arrayBuffer() : undefined));
  const signal = init.signal ?? req?.signal;
  return new Promise<Response>((resolve, reject) => {
    const outgoing = request(
      url,
      { method, headers: { ...headers, ...(body ? { 'content-length': String(body.length) } : {}) } },
      (res) => {
        const resHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) resHeaders.append(name, one);
        }
        const status = res.statusCode ?? 500;
        const stream = status === 204 || status === 304 ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
        resolve(new Response(stream, { status, statusText: res.statusMessage ?? '', headers: resHeaders }));
      },
    );
    const abort = (): void => {
      const error = new Error('This operation was aborted');
      error.name = 'AbortError';
      outgoing.destroy(error);
      reject(error);
    };
    if (signal?.aborted) return abort();
    signal?.addEventListener('abort', abort, { once: true });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

if (process.platform === 'win32') globalThis.fetch = httpFetch as typeof fetch;
