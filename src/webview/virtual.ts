// Window maths of the virtualised list: rows of known heights (by kind), only rows near the
// viewport exist. `offsets[i]` is the top of row i; `offsets[count]` the total height.

export interface RowWindow {
  /** First row index in the DOM (inclusive). */
  readonly start: number;
  /** One past the last row index in the DOM. */
  readonly end: number;
}

/** Tops of rows of the given heights, plus the total height at the end. */
export function rowOffsets(heights: readonly number[]): number[] {
  const offsets = new Array<number>(heights.length + 1);
  offsets[0] = 0;
  for (let i = 0; i < heights.length; i++) offsets[i + 1] = offsets[i]! + heights[i]!;
  return offsets;
}

/** Index of the row at vertical position y (clamped to the rows). */
export function rowAt(offsets: readonly number[], y: number): number {
  const count = offsets.length - 1;
  if (count <= 0) return 0;
  let lo = 0;
  let hi = count - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (offsets[mid]! <= y) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

export function visibleWindow(scrollTop: number, viewportHeight: number, offsets: readonly number[], overscan: number): RowWindow {
  const count = offsets.length - 1;
  if (count <= 0) return { start: 0, end: 0 };
  const top = Math.max(0, scrollTop);
  const first = rowAt(offsets, top);
  const last = rowAt(offsets, top + Math.max(0, viewportHeight));
  const start = Math.max(0, first - overscan);
  const end = Math.min(count, last + 1 + overscan);
  return { start, end: Math.max(start, end) };
}

/** The scrollTop that brings row `index` fully into view, moving as little as possible. */
export function revealScrollTop(index: number, scrollTop: number, viewportHeight: number, offsets: readonly number[]): number {
  const top = offsets[index] ?? 0;
  const bottom = offsets[index + 1] ?? top;
  if (top < scrollTop) return top;
  if (bottom > scrollTop + viewportHeight) return Math.max(0, bottom - viewportHeight);
  return scrollTop;
}

/** The largest scrollTop of the list. */
export function maxScrollTop(offsets: readonly number[], viewportHeight: number): number {
  return Math.max(0, (offsets[offsets.length - 1] ?? 0) - viewportHeight);
}

/** Rows a Page Up/Down moves: a viewport's worth at the smallest row height, less one. */
export function pageSize(viewportHeight: number, rowHeight: number): number {
  return Math.max(1, Math.floor(viewportHeight / rowHeight) - 1);
}
