import { StoreRecord, type StoredRecord } from './records';

// What a fold needs to know of each journal line, as columns: the record's type, where the line
// ends (lines are contiguous, so that is where the next starts), a stepId, a message's index,
// where a lazily read part starts, and a ledger entry's callId or a patch's patchId. A scan fills
// them from the lines it reads; a writer from the lines it appends; the resume index
// (journal-index.ts) stores them, so that a resume need not read every line again.

export const RECORD_TYPES: readonly StoredRecord['type'][] = StoreRecord.options.map((option) => option.shape.type.value);
const TYPE_CODES = new Map(RECORD_TYPES.map((type, code) => [type, code]));
/** Set on a line whose record must be decoded whole (an older format, an unusual arrangement). */
const WHOLE = 0x80;
const FIRST_CAPACITY = 1024;

function grown<T extends Float64Array | Uint32Array | Uint8Array>(array: T, capacity: number): T {
  const next = new (array.constructor as new (length: number) => T)(capacity);
  next.set(array);
  return next;
}

/** The column arrays, each `length` long (the resume index stores and restores exactly these). */
export interface ColumnArrays {
  readonly types: Uint8Array;
  readonly ends: Float64Array;
  readonly steps: Float64Array;
  readonly indexes: Float64Array;
  readonly partOffsets: Uint32Array;
  /** The keys of the ledger and patch lines, in line order. */
  readonly keys: readonly string[];
}

export class LineColumns {
  length = 0;
  /** The largest stepId of a message or checkpoint (what the run's state file counts as steps). */
  maxStepId = 0;
  private types = new Uint8Array(FIRST_CAPACITY);
  private ends = new Float64Array(FIRST_CAPACITY);
  private steps = new Float64Array(FIRST_CAPACITY);
  private indexes = new Float64Array(FIRST_CAPACITY);
  private partOffsets = new Uint32Array(FIRST_CAPACITY);
  /** By line: a ledger entry's callId, a patch's patchId, or ''. */
  private keys: string[] = [];

  /** Columns from stored arrays; throws when they do not describe lines a scan could have read. */
  static restore(arrays: ColumnArrays): LineColumns {
    const columns = new LineColumns();
    const { types, ends, steps, indexes, partOffsets, keys } = arrays;
    let key = 0;
    for (let i = 0; i < types.length; i++) {
      const type = RECORD_TYPES[types[i]! & ~WHOLE];
      const start = i === 0 ? 0 : ends[i - 1]! + 1;
      if (!type || !(ends[i]! > start) || !Number.isSafeInteger(ends[i]) || partOffsets[i]! >= ends[i]! - start) throw new Error(`line ${i + 1} is not a line`);
      if (!Number.isSafeInteger(steps[i]) || steps[i]! < 0 || !Number.isSafeInteger(indexes[i]) || indexes[i]! < -1) throw new Error(`line ${i + 1} has no valid step or index`);
      const keyed = type === 'ledger' || type === 'patch';
      const lineKey = keyed ? keys[key++] : '';
      if (lineKey === undefined) throw new Error(`line ${i + 1} has no key`);
      columns.add(type, start, ends[i]!, steps[i]!, indexes[i]!, start + partOffsets[i]!, lineKey, (types[i]! & WHOLE) !== 0);
    }
    if (key !== keys.length) throw new Error(`${keys.length - key} keys more than keyed lines`);
    return columns;
  }

  /** The columns as arrays of exactly `length` entries (views, not copies). */
  arrays(): ColumnArrays {
    const n = this.length;
    const keys: string[] = [];
    for (let i = 0; i < n; i++) if (this.isKeyed(i)) keys.push(this.keys[i]!);
    return { types: this.types.subarray(0, n), ends: this.ends.subarray(0, n), steps: this.steps.subarray(0, n), indexes: this.indexes.subarray(0, n), partOffsets: this.partOffsets.subarray(0, n), keys };
  }

  add(type: StoredRecord['type'], start: number, end: number, stepId: number, index: number, partStart: number, key: string, whole: boolean): void {
    const i = this.length;
    if (i === this.types.length) this.grow();
    this.types[i] = TYPE_CODES.get(type)! | (whole ? WHOLE : 0);
    this.ends[i] = end;
    this.steps[i] = stepId;
    this.indexes[i] = index;
    this.partOffsets[i] = partStart - start;
    this.keys.push(key);
    this.length = i + 1;
    if ((type === 'message' || type === 'checkpoint') && stepId > this.maxStepId) this.maxStepId = stepId;
  }

  /** Forgets the lines from `length` on (an unfinished commit group). */
  truncate(length: number): void {
    if (length >= this.length) return;
    this.length = length;
    this.keys.length = length;
    this.maxStepId = 0;
    for (let i = 0; i < length; i++) {
      const type = this.typeAt(i);
      if ((type === 'message' || type === 'checkpoint') && this.steps[i]! > this.maxStepId) this.maxStepId = this.steps[i]!;
    }
  }

  /** A copy that grows on its own (a writer's, from the scan that opened the run). */
  clone(): LineColumns {
    const copy = new LineColumns();
    copy.length = this.length;
    copy.maxStepId = this.maxStepId;
    copy.types = this.types.slice();
    copy.ends = this.ends.slice();
    copy.steps = this.steps.slice();
    copy.indexes = this.indexes.slice();
    copy.partOffsets = this.partOffsets.slice();
    copy.keys = this.keys.slice();
    return copy;
  }

  typeAt(i: number): StoredRecord['type'] {
    return RECORD_TYPES[this.types[i]! & ~WHOLE]!;
  }

  isWhole(i: number): boolean {
    return (this.types[i]! & WHOLE) !== 0;
  }

  startOf(i: number): number {
    return i === 0 ? 0 : this.ends[i - 1]! + 1;
  }

  /** Where the line's newline is. */
  endOf(i: number): number {
    return this.ends[i]!;
  }

  stepIdAt(i: number): number {
    return this.steps[i]!;
  }

  indexAt(i: number): number {
    return this.indexes[i]!;
  }

  partStartOf(i: number): number {
    return this.startOf(i) + this.partOffsets[i]!;
  }

  keyAt(i: number): string {
    return this.keys[i]!;
  }

  private isKeyed(i: number): boolean {
    const type = this.typeAt(i);
    return type === 'ledger' || type === 'patch';
  }

  private grow(): void {
    const capacity = this.types.length * 2;
    this.types = grown(this.types, capacity);
    this.ends = grown(this.ends, capacity);
    this.steps = grown(this.steps, capacity);
    this.indexes = grown(this.indexes, capacity);
    this.partOffsets = grown(this.partOffsets, capacity);
  }
}
