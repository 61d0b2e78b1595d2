// Window maths of the virtualised list: fixed row height, only rows near the viewport exist.

export interface RowWindow {
  /** First row index in the DOM (inclusive). */
  readonly start: number;
  /** One past the last row index in the DOM. */
  readonly end: number;
}

export function visibleWindow(scrollTop: number, viewportHeight: number, rowHeight: number, count: number, overscan: number): RowWindow {
  if (count <= 0 || rowHeight <= 0) return { start: 0, end: 0 };
  const first = Math.floor(Math.max(0, scrollTop) / rowHeight);
  const visible = Math.ceil(Math.max(0, viewportHeight) / rowHeight) + 1;
  const start = Math.max(0, Math.min(count - 1, first) - overscan);
  const end = Math.min(count, first + visible + overscan);
  return { start, end: Math.max(start, end) };
}

/** The scrollTop that brings row `index` fully into view, moving as little as possible. */
export function revealScrollTop(index: number, scrollTop: number, viewportHeight: number, rowHeight: number): number {
  const top = index * rowHeight;
  const bottom = top + rowHeight;
  if (top < scrollTop) return top;
  if (bottom > scrollTop + viewportHeight) return Math.max(0, bottom - viewportHeight);
  return scrollTop;
}

/** The largest scrollTop of a list of `count` rows. */
export function maxScrollTop(count: number, viewportHeight: number, rowHeight: number): number {
  return Math.max(0, count * rowHeight - viewportHeight);
}

export function pageSize(viewportHeight: number, rowHeight: number): number {
  return Math.max(1, Math.floor(viewportHeight / rowHeight) - 1);
}
