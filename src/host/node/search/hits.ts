import type { SearchFileHits, SearchLine, SearchStop } from '../../../core/ports';

/** A line longer than this is cut (minified code would fill the answer with one line). */
export const MAX_LINE_CHARS = 400;

export function clipLine(text: string): string {
  return text.length <= MAX_LINE_CHARS ? text : `${text.slice(0, MAX_LINE_CHARS)}… [+${text.length - MAX_LINE_CHARS} chars]`;
}

/**
 * Gathers the hits of files arriving in path order, for both engines: stops at maxMatches
 * matching lines and remembers exactly where (the file, and the line when it stopped inside
 * one). A cap that is exactly reached with nothing after it is not a stop.
 */
export class HitCollector {
  readonly files: SearchFileHits[] = [];
  matches = 0;
  stopped: SearchStop | undefined;
  /** The last file whose hits were taken. */
  private lastPath: string | null = null;

  constructor(private readonly maxMatches: number) {}

  get done(): boolean {
    return this.stopped !== undefined;
  }

  /** Adds one file's lines (matches and context); false once the search must stop. `clipped`: lines already cut to MAX_LINE_CHARS. */
  add(path: string, lines: readonly SearchLine[], clipped = false): boolean {
    if (this.done) return false;
    const matching = lines.filter((l) => l.match).length;
    if (matching === 0) return true;
    const room = this.maxMatches - this.matches;
    if (room === 0) {
      this.stopped = { reason: 'max_matches', lastPath: this.lastPath };
      return false;
    }
    const shown = clipped ? lines : lines.map((l) => ({ ...l, text: clipLine(l.text) }));
    if (matching <= room) {
      this.files.push({ path, lines: shown });
      this.matches += matching;
      this.lastPath = path;
      return true;
    }
    let seen = 0;
    const cut = shown.findIndex((l) => l.match && ++seen === room);
    const kept = shown.slice(0, cut + 1);
    this.files.push({ path, lines: kept });
    this.matches += room;
    this.stopped = { reason: 'max_matches', lastPath: path, lastLine: kept[kept.length - 1]!.line };
    return false;
  }

  /** The time budget ran out: files after the last one with hits may not have been searched. */
  outOfTime(budgetMs: number, lastSearched: string | null): void {
    this.stopped ??= { reason: 'time_budget', lastPath: lastSearched, budgetMs };
  }
}
