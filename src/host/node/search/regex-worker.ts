import { Worker } from 'node:worker_threads';

// The Node fallback reads the files and runs the model's pattern in a worker thread, so a
// pattern that backtracks catastrophically can be stopped: the worker reports at least every
// 100 ms while it works, and one that goes quiet for STALL_MS is terminated, failing the search
// with a clear error. Reading there is synchronous (no thread-pool round trips) and never blocks:
// O_NONBLOCK, then fstat, and only regular files under the size cap are read.

/** Longest one file may take in the worker (a linear pattern needs milliseconds for a MiB). */
export const STALL_MS = 1000;

// Plain JavaScript evaluated in the worker (no bundler or TypeScript loader is involved there).
// For each file: read it if regular, small and not binary; a quick test of the whole text; then
// its matching lines with their context. Lines are split at "\n", a trailing "\r" dropped, no
// empty line after a final "\n": as ripgrep counts them with --crlf.
// MATCHER_SOURCE, the part that takes a text, is also run in this thread for a pattern that
// cannot backtrack (plain text, escaped): editor buffers then need no worker.
const MATCHER_SOURCE = `
const whole = new RegExp(workerData.source, workerData.flags + 'm');
const line = new RegExp(workerData.source, workerData.flags);
const literal = workerData.literal === null ? null : Buffer.from(workerData.literal, 'utf8');
// An editor buffer's text (unsaved edits), under the same size, literal and binary rules as a file.
function bufferText(text) {
  if (Buffer.byteLength(text, 'utf8') > workerData.maxBytes) return null;
  if (literal !== null && !text.includes(workerData.literal)) return null;
  return text.includes('\0') ? null : text;
}
// [line index, text, is a match] for each matching line and the context lines around it.
function hitLines(text) {
  const flat = text.includes('\\r') ? text.replace(/\\r\\n/g, '\\n') : text;
  whole.lastIndex = 0;
  if (!whole.test(flat)) return [];
  const lines = flat.split('\\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const strip = (l) => (l.endsWith('\\r') ? l.slice(0, -1) : l);
  const matched = [];
  for (let i = 0; i < lines.length; i++) {
    line.lastIndex = 0;
    if (line.test(strip(lines[i]))) matched.push(i);
  }
  const isMatch = new Set(matched);
  const out = [];
  let next = 0;
  for (const index of matched) {
    const to = Math.min(lines.length - 1, index + workerData.context);
    for (let i = Math.max(next, index - workerData.context); i <= to; i++) out.push([i, strip(lines[i]), isMatch.has(i)]);
    next = Math.max(next, to + 1);
  }
  return out;
}
`;

const WORKER_SOURCE = `
const fs = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
const FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK || 0);
${MATCHER_SOURCE}
function readText(path) {
  let fd;
  try { fd = fs.openSync(path, FLAGS); } catch { return null; }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.size > workerData.maxBytes) return null;
    const bytes = Buffer.allocUnsafe(st.size);
    let length = 0;
    while (length < st.size) {
      const n = fs.readSync(fd, bytes, length, st.size - length, length);
      if (n === 0) break;
      length += n;
    }
    const body = bytes.subarray(0, length);
    // Plain case-sensitive text: a file without its bytes is skipped undecoded.
    if (literal !== null && body.indexOf(literal) === -1) return null;
    return body.includes(0) ? null : decoder.decode(body);
  } catch { return null; } finally { fs.closeSync(fd); }
}
parentPort.postMessage({ ready: true });
parentPort.on('message', (batch) => {
  const hits = [];
  let told = Date.now();
  for (let i = 0; i < batch.paths.length; i++) {
    const text = batch.texts ? bufferText(batch.texts[i]) : readText(batch.paths[i]);
    if (text !== null) {
      const lines = hitLines(text);
      if (lines.length > 0) hits.push({ index: i, lines });
    }
    if (Date.now() - told > 100) { parentPort.postMessage({ id: batch.id, tick: true }); told = Date.now(); }
  }
  parentPort.postMessage({ id: batch.id, hits });
});
`;

export class PatternTimeoutError extends Error {
  constructor(readonly path: string) {
    super(
      `the pattern ran for more than ${STALL_MS} ms on ${path} and was stopped: it backtracks catastrophically ` +
        '(nested repetition such as (a+)+). Simplify the pattern, or search plain text (regex: false).',
    );
    this.name = 'PatternTimeoutError';
  }
}

/** A file of a batch that has matching lines: its index in the batch, and [line index, text, is a match] of each line to show. */
export interface WorkerHit {
  readonly index: number;
  readonly lines: readonly (readonly [number, string, boolean])[];
}

/** The matching part of the worker's source, as this thread runs it. */
interface Matcher {
  bufferText(text: string): string | null;
  hitLines(text: string): WorkerHit['lines'];
}

/**
 * Editor buffers matched in this thread by the worker's own code: only for a pattern that cannot
 * backtrack (plain text, escaped), which needs no watchdog and so no worker to start.
 */
export function matchTextsHere(
  source: string,
  flags: string,
  options: { maxBytes: number; literal: string | null; context: number },
  texts: readonly string[],
): WorkerHit[] {
  // Our own constant source; the pattern comes in as data (workerData), as in the worker.
  const build = new Function('workerData', `${MATCHER_SOURCE}\nreturn { bufferText, hitLines };`) as (data: unknown) => Matcher;
  const matcher = build({ source, flags, ...options });
  const hits: WorkerHit[] = [];
  texts.forEach((text, index) => {
    const kept = matcher.bufferText(text);
    const lines = kept === null ? [] : matcher.hitLines(kept);
    if (lines.length > 0) hits.push({ index, lines });
  });
  return hits;
}

interface Pending {
  readonly id: number;
  readonly paths: readonly string[];
  resolve(hits: WorkerHit[]): void;
  reject(error: Error): void;
}

/** One worker running one compiled pattern over batches of files (absolute paths), in order. */
export class RegexWorker {
  private readonly worker: Worker;
  private readonly pending: Pending[] = [];
  private nextId = 0;
  private watchdog: NodeJS.Timeout | undefined;
  private failure: Error | undefined;
  /** The watchdog runs only once the worker has started: a slow start on a busy machine is not a stall. */
  private ready = false;

  /**
   * @param literal The pattern when it is plain case-sensitive text: files without it are not decoded.
   * @param context Lines of context around each match.
   */
  constructor(source: string, flags: string, options: { maxBytes: number; literal: string | null; context: number }) {
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { source, flags, ...options } });
    this.worker.on('message', (message: { ready?: true; id: number; tick?: true; hits?: WorkerHit[] }) => {
      if (message.ready) {
        this.ready = true;
        this.arm();
      } else this.answered(message);
    });
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', () => this.fail(new Error('the search worker stopped')));
  }

  /** Searches the files at `paths`; with `texts`, those texts instead (editor buffers; `paths` then only name them). */
  run(paths: readonly string[], texts?: readonly string[]): Promise<WorkerHit[]> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise<WorkerHit[]>((resolve, reject) => {
      this.pending.push({ id, paths, resolve, reject });
      this.worker.postMessage({ id, paths, ...(texts !== undefined ? { texts } : {}) });
      if (this.pending.length === 1) this.arm();
    });
  }

  private arm(): void {
    clearTimeout(this.watchdog);
    const head = this.pending[0];
    if (head === undefined || !this.ready) return;
    this.watchdog = setTimeout(() => this.fail(new PatternTimeoutError(`files from ${head.paths[0]}`)), STALL_MS);
  }

  private answered(message: { id: number; tick?: true; hits?: WorkerHit[] }): void {
    const head = this.pending[0];
    if (head === undefined || head.id !== message.id) return this.fail(new Error('the search worker answered out of order'));
    if (message.hits !== undefined) {
      this.pending.shift();
      head.resolve(message.hits);
    }
    this.arm();
  }

  private fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    clearTimeout(this.watchdog);
    for (const pending of this.pending.splice(0)) pending.reject(error);
    void this.worker.terminate();
  }

  close(): void {
    this.fail(new Error('the search worker was closed'));
  }
}
