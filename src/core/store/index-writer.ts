import { crc32 } from './crc32';
import type { StoreFs } from './fs-port';
import { appendSegment, encodeSegments, type SegmentSpan } from './journal-index';
import { addLinesOf, type ReadOptions } from './journal-log';
import type { LineColumns } from './line-columns';

/** Where a writer's journal and its resume index stand (journal-index.ts). */
export interface IndexState {
  /** The writer's own copy of the journal's line columns: it adds the lines it appends. */
  readonly columns: LineColumns;
  /** crc32 of the journal's bytes. */
  crc: number;
  /** The journal bytes, lines and keys the index file's good part covers, and that part's length. */
  indexedBytes: number;
  lines: number;
  keys: number;
  fileBytes: number;
  readonly read: ReadOptions;
  /** A segment is appended each time the journal has grown by this much, and at close; shorter journals get no index. */
  readonly stepBytes: number;
}

/**
 * Keeps a run's resume index up with its journal: the columns and crc of every group appended,
 * a segment in the background each time the journal has grown by a step (so after a crash at most
 * a step of lines is read one by one), and the last one at close. It is a cache: a failure stops
 * it for this writer and costs a later resume only time.
 */
export class ResumeIndexWriter {
  private pending: Promise<void> | null = null;
  private broken = false;

  constructor(
    private readonly fs: StoreFs,
    private readonly runDir: string,
    private readonly state: IndexState,
  ) {}

  /** The group just appended (durably) at `base`. */
  noteAppended(bytes: Uint8Array, base: number): void {
    if (this.broken) return;
    try {
      addLinesOf(this.state.columns, bytes, base, this.state.read);
      this.state.crc = crc32(bytes, this.state.crc);
    } catch {
      this.broken = true;
    }
  }

  /** After an append that took the journal to `journalBytes`. */
  maybeAppend(journalBytes: number): void {
    if (this.pending || !this.due(journalBytes, this.state.stepBytes)) return;
    this.pending = this.append(journalBytes).finally(() => {
      this.pending = null;
    });
  }

  /** At close: waits for a segment being written, then writes the last. */
  async finish(journalBytes: number): Promise<void> {
    await this.pending;
    if (this.due(journalBytes, 1)) await this.append(journalBytes);
  }

  private due(journalBytes: number, step: number): boolean {
    return !this.broken && journalBytes >= this.state.stepBytes && journalBytes - this.state.indexedBytes >= step;
  }

  private async append(journalBytes: number): Promise<void> {
    const { state } = this;
    const { columns, read } = state;
    // Taken now: the columns only grow, so this span reads the same however long the writes take.
    const span: SegmentSpan = {
      fromLine: state.lines,
      toLine: columns.length,
      fromKey: state.keys,
      toKey: columns.keyCount,
      journalBytes,
      journalCrc: state.crc,
    };
    const whole: SegmentSpan = { ...span, fromLine: 0, fromKey: 0 };
    try {
      let segment = encodeSegments(columns, span, read.readVersion);
      let fileBytes = state.fileBytes;
      if (segment && !(await appendSegment(this.fs, this.runDir, fileBytes, segment))) {
        // The file lost its good part (removed, cut): it starts over with every line.
        segment = encodeSegments(columns, whole, read.readVersion);
        fileBytes = 0;
        if (segment && !(await appendSegment(this.fs, this.runDir, 0, segment))) segment = null;
      }
      if (!segment) return;
      state.fileBytes = fileBytes + segment.length;
      state.lines = span.toLine;
      state.keys = span.toKey;
      state.indexedBytes = journalBytes;
    } catch {
      this.broken = true;
    }
  }
}
