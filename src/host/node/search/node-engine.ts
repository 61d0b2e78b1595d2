import { availableParallelism } from 'node:os';
import * as nodePath from 'node:path';
import type { HitCollector } from './hits';
import { RegexWorker } from './regex-worker';
import { listFiles } from './walk';
import type { EngineQuery } from './engine-query';

// The complete Node fallback: the shared walk (path order, ignore files, excludes), then the
// files handed in batches to the worker that reads and matches them and can be stopped.

const BATCH_FILES = 256;
/** Batches queued per worker, so that none waits for the next while the main thread takes results. */
const QUEUED_PER_WORKER = 2;
const MAX_WORKERS = 2;

interface Batch {
  readonly paths: readonly string[];
  readonly hits: ReturnType<RegexWorker['run']>;
}

export async function nodeSearch(query: EngineQuery, collector: HitCollector, signal: AbortSignal): Promise<void> {
  // The walk is bounded by the time budget too: a walk cut short searches nothing and says so.
  const walkSignal = AbortSignal.any([signal, AbortSignal.timeout(Math.max(0, query.deadline - Date.now()))]);
  const paths = (await listFiles(query.filter, walkSignal)).filter((p) => query.selected(p));
  if (walkSignal.aborted && !signal.aborted) return collector.outOfTime(query.budgetMs, null);
  const root = query.filter.ignore.rootAbs;
  const literal = !query.regex && query.caseSensitive ? query.pattern : null;
  const count = Math.max(1, Math.min(MAX_WORKERS, availableParallelism(), Math.ceil(paths.length / BATCH_FILES)));
  const workers = Array.from(
    { length: count },
    () => new RegexWorker(query.source, query.flags, { maxBytes: query.maxFileBytes, literal, context: query.contextLines }),
  );
  const inFlight: Batch[] = [];
  let next = 0;
  let sent = 0;
  const send = (): void => {
    const batch = paths.slice(next, next + BATCH_FILES);
    next += batch.length;
    const worker = workers[sent++ % workers.length]!;
    inFlight.push({ paths: batch, hits: worker.run(batch.map((p) => nodePath.join(root, p))) });
  };
  try {
    while (next < paths.length && inFlight.length < QUEUED_PER_WORKER * workers.length) send();
    while (inFlight.length > 0 && !collector.done && !signal.aborted) {
      const batch = inFlight.shift()!;
      const hits = await batch.hits;
      for (const hit of hits) {
        const lines = hit.lines.map(([index, text, match]) => ({ line: index + 1, text, match }));
        if (!collector.add(batch.paths[hit.index]!, lines)) break;
      }
      if (Date.now() > query.deadline && (inFlight.length > 0 || next < paths.length))
        return collector.outOfTime(query.budgetMs, batch.paths[batch.paths.length - 1] ?? null);
      if (next < paths.length) send();
    }
  } finally {
    for (const worker of workers) worker.close();
    for (const pending of inFlight) pending.hits.catch(() => undefined);
  }
}
