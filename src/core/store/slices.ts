// Long, synchronous work of the store (decoding an index, folding a journal) written as a
// generator that yields between slices: run at once where nothing else waits (tests, the memory
// store), or slice by slice with the event loop let run in between (a resume in the extension
// host, where no persistence call may hold the loop for long).

/** Lines or records handled between two yields: well under a millisecond of work (the pause decides when the loop runs). */
export const SLICE = 512;

export type Sliced<T> = Generator<void, T, void>;

/** Runs the work to its end at once. */
export function drain<T>(work: Sliced<T>): T {
  let step = work.next();
  while (!step.done) step = work.next();
  return step.value;
}

/** Runs the work, letting `pause` (the event loop) run at each yield; without `pause`, at once. */
export async function inSlices<T>(work: Sliced<T>, pause?: () => Promise<void>): Promise<T> {
  if (!pause) return drain(work);
  let step = work.next();
  for (; !step.done; step = work.next()) await pause();
  return step.value;
}
