// The calls of one answer, in the model's order: consecutive read-only calls run at once (a few at
// a time), anything else alone. A call with a side effect is a barrier: the reads before it finish
// first, the reads after it start after it ends. Each call still saves its own `started` before it
// runs and its result when it ends (the session appends one commit group at a time), so a crash in
// the middle leaves what a sequential run would: finished calls reused, cut ones run again.

/** At most this many read-only calls of one answer run at once. */
export const MAX_CONCURRENT_READS = 4;

/** The order in which calls running at once may ask a person: a call waits for the one before it to have asked (or ended), then lets the next one ask. */
export interface ApprovalTurn {
  wait(): Promise<void>;
  pass(): void;
}

/**
 * Runs `work` for each index 0..count-1 and returns the results in index order. Runs of indexes for
 * which `concurrent` holds go `bound` at a time; every other index runs alone, after everything
 * before it and before anything after it. When a call throws, no further call starts, the ones in
 * flight finish, and the first error in index order is thrown.
 */
export async function runInAnswerOrder<T>(
  count: number,
  concurrent: (index: number) => boolean,
  work: (index: number, turn?: ApprovalTurn) => Promise<T>,
  bound = MAX_CONCURRENT_READS,
): Promise<T[]> {
  const results: T[] = [];
  for (let from = 0; from < count;) {
    let to = from;
    while (to < count && concurrent(to)) to++;
    if (to === from) {
      results.push(await work(from));
      from += 1;
    } else {
      results.push(...(await runGroup(from, to, work, bound)));
      from = to;
    }
  }
  return results;
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

async function runGroup<T>(from: number, to: number, work: (index: number, turn: ApprovalTurn) => Promise<T>, bound: number): Promise<T[]> {
  const turns = Array.from({ length: to - from }, deferred);
  const settled: PromiseSettledResult<T>[] = [];
  let next = from;
  let failed = false;
  const lane = async (): Promise<void> => {
    while (next < to && !failed) {
      const k = next++ - from;
      const turn: ApprovalTurn = { wait: () => (k === 0 ? Promise.resolve() : turns[k - 1]!.promise), pass: turns[k]!.resolve };
      try {
        settled[k] = { status: 'fulfilled', value: await work(from + k, turn) };
      } catch (reason) {
        settled[k] = { status: 'rejected', reason };
        failed = true;
      } finally {
        turn.pass();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(bound, to - from)) }, lane));
  const error = settled.find((r): r is PromiseRejectedResult => r?.status === 'rejected');
  if (error !== undefined) throw error.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<T>).value);
}
