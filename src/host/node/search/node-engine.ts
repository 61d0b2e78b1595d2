import { availableParallelism } from 'node:os';
import * as nodePath from 'node:path';
import type { HitCollector } from './hits';
import { RegexWorker } from './regex-worker';
import { walkGroups } from './walk';
import type { EngineQuery } from './engine-query';

// The complete Node fallback: the shared walk (path order, ignore files, excludes), then the
// files handed in batches, as the walk finds them, to workers that read and match them and can be stopped.

const BATCH_FILES = 256;
/** Batches queued per worker, so that none waits for the next while the main thread takes results. */
const QUEUED_PER_WORKER = 2;
const MAX_WORKERS = 2;

interface Batch {
  readonly paths: readonly string[];
  readonly hits: ReturnType<RegexWorker['run']>;
}

export async function nodeSearch(query: EngineQuery, collector: HitCollector, signal: AbortSignal): Promise<void> {
  // The walk is bounded by the time budget too.
  const walkSignal = AbortSignal.any([signal, AbortSignal.timeout(Math.max(0, query.deadline - Date.now()))]);
  const root = query.filter.ignore.rootAbs;
  const literal = !query.regex && query.caseSensitive ? query.pattern : null;
  const options = { maxBytes: query.maxFileBytes, literal, context: query.contextLines };
  const workers = Array.from(
    { length: Math.max(1, Math.min(MAX_WORKERS, availableParallelism())) },
    () => new RegexWorker(query.source, query.flags, options),
  );
  const inFlight: Batch[] = [];
  let sent = 0;
  let lastSearched: string | null = null;
  const send = (paths: string[]): void => {
    const worker = workers[sent++ % workers.length]!;
    inFlight.push({ paths, hits: worker.run(paths.map((p) => nodePath.join(root, p))) });
  };
  const settleOldest = async (): Promise<void> => {
    const batch = inFlight.shift()!;
    for (const hit of await batch.hits) {
      const lines = hit.lines.map(([index, text, match]) => ({ line: index + 1, text, match }));
      if (!collector.add(batch.paths[hit.index]!, lines)) return;
    }
    lastSearched = batch.paths[batch.paths.length - 1] ?? lastSearched;
  };
  try {
    const pending: string[] = [];
    for await (const group of walkGroups(query.filter, walkSignal)) {
      pending.push(...group.filter((p) => query.selected(p)));
      while (pending.length >= BATCH_FILES) send(pending.splice(0, BATCH_FILES));
      while (inFlight.length >= QUEUED_PER_WORKER * workers.length && !collector.done) await settleOldest();
      if (collector.done || signal.aborted) return;
    }
    if (walkSignal.aborted && !signal.aborted) return collector.outOfTime(query.budgetMs, lastSearched);
    if (pending.length > 0) send(pending);
    while (inFlight.length > 0 && !collector.done && !signal.aborted) {
      await settleOldest();
      if (Date.now() > query.deadline && inFlight.length > 0) return collector.outOfTime(query.budgetMs, lastSearched);
    }
  } finally {
    for (const worker of workers) worker.close();
    for (const pending of inFlight) pending.hits.catch(() => undefined);
  }
}
