import { StoreRecord, type StoredRecord } from './records';
import { SLICE, type Sliced } from './slices';

// What a fold needs to know of each journal line, as columns: the record's type, where the line
// ends (lines are contiguous, so that is where the next starts), a stepId, a message's index,
// where a lazily read part starts, and a key: a ledger entry's callId or a patch's patchId, each
// distinct key stored once. A scan fills them from the lines it reads; a writer from the lines it
// appends; the resume index (journal-index.ts) stores them, so that a resume need not read every
// line again.

export const RECORD_TYPES: readonly StoredRecord['type'][] = StoreRecord.options.map((option) => option.shape.type.value);
const TYPE_CODES = new Map(RECORD_TYPES.map((type, code) => [type, code]));
/** Set on a line whose record must be decoded whole (an older format, an unusual arrangement). */
const WHOLE = 0x80;
const NO_KEY = -1;
const FIRST_CAPACITY = 1024;

function grown<
  T extends Float64Array<ArrayBufferLike> | Uint32Array<ArrayBufferLike> | Int32Array<ArrayBufferLike> | Uint8Array<ArrayBufferLike>,
>(array: T, capacity: number): T {
  const next = new (array.constructor as new (length: number) => T)(capacity);
  next.set(array.subarray(0, Math.min(array.length, capacity)) as never);
  return next;
}

/** The column arrays, each `length` long, and the distinct keys (the resume index stores exactly these). */
export interface ColumnArrays {
  readonly types: Uint8Array;
  readonly ends: Float64Array;
  readonly steps: Float64Array;
  readonly indexes: Float64Array;
  readonly partOffsets: Uint32Array;
  /** By line: the key's place in `keys`, or -1. */
  readonly keyIds: Int32Array;
  readonly keys: readonly string[];
}

function checkLine(arrays: ColumnArrays, i: number): void {
  const { types, ends, steps, indexes, partOffsets, keyIds, keys } = arrays;
  const type = RECORD_TYPES[types[i]! & ~WHOLE];
  const start = i === 0 ? 0 : ends[i - 1]! + 1;
  if (!type || !Number.isSafeInteger(ends[i]) || !(ends[i]! > start) || partOffsets[i]! >= ends[i]! - start)
    throw new Error(`line ${i + 1} is not a line`);
  if (!Number.isSafeInteger(steps[i]) || steps[i]! < 0 || !Number.isSafeInteger(indexes[i]) || indexes[i]! < -1)
    throw new Error(`line ${i + 1} has no valid step or index`);
  const keyed = type === 'ledger' || type === 'patch';
  if (keyed ? !(keyIds[i]! >= 0 && keyIds[i]! < keys.length) : keyIds[i] !== NO_KEY) throw new Error(`line ${i + 1} has no valid key`);
}

export class LineColumns {
  length = 0;
  /** The largest stepId of a message or checkpoint (what the run's state file counts as steps). */
  maxStepId = 0;
  private types: Uint8Array<ArrayBufferLike> = new Uint8Array(FIRST_CAPACITY);
  private ends: Float64Array<ArrayBufferLike> = new Float64Array(FIRST_CAPACITY);
  private steps: Float64Array<ArrayBufferLike> = new Float64Array(FIRST_CAPACITY);
  private indexes: Float64Array<ArrayBufferLike> = new Float64Array(FIRST_CAPACITY);
  private partOffsets: Uint32Array<ArrayBufferLike> = new Uint32Array(FIRST_CAPACITY);
  private keyIds: Int32Array<ArrayBufferLike> = new Int32Array(FIRST_CAPACITY);
  private keys: string[] = [];
  /** Each key's place in `keys`; built when first needed (a restored copy may never add a line). */
  private keyIdOf: Map<string, number> | undefined = new Map();

  /** Columns over stored arrays (used as they are, not copied); throws when they do not describe lines a scan could have read. */
  static *restoring(arrays: ColumnArrays): Sliced<LineColumns> {
    if (new Set(arrays.keys).size !== arrays.keys.length) throw new Error('a key is stored twice');
    const columns = new LineColumns();
    for (let i = 0; i < arrays.types.length; i++) {
      if (i % SLICE === SLICE - 1) yield;
      checkLine(arrays, i);
      const type = RECORD_TYPES[arrays.types[i]! & ~WHOLE];
      if ((type === 'message' || type === 'checkpoint') && arrays.steps[i]! > columns.maxStepId) columns.maxStepId = arrays.steps[i]!;
    }
    columns.length = arrays.types.length;
    columns.types = arrays.types;
    columns.ends = arrays.ends;
    columns.steps = arrays.steps;
    columns.indexes = arrays.indexes;
    columns.partOffsets = arrays.partOffsets;
    columns.keyIds = arrays.keyIds;
    columns.keys = [...arrays.keys];
    columns.keyIdOf = undefined;
    return columns;
  }

  /** The columns as arrays of exactly `length` entries (views, not copies). */
  arrays(): ColumnArrays {
    const n = this.length;
    const at = (array: Float64Array<ArrayBufferLike>) => array.subarray(0, n);
    return {
      types: this.types.subarray(0, n),
      ends: at(this.ends),
      steps: at(this.steps),
      indexes: at(this.indexes),
      partOffsets: this.partOffsets.subarray(0, n),
      keyIds: this.keyIds.subarray(0, n),
      keys: this.keys,
    };
  }

  add(
    type: StoredRecord['type'],
    start: number,
    end: number,
    stepId: number,
    index: number,
    partStart: number,
    key: string,
    whole: boolean,
  ): void {
    const i = this.length;
    if (i === this.types.length) this.resize(Math.max(FIRST_CAPACITY, i * 2));
    this.types[i] = TYPE_CODES.get(type)! | (whole ? WHOLE : 0);
    this.ends[i] = end;
    this.steps[i] = stepId;
    this.indexes[i] = index;
    this.partOffsets[i] = partStart - start;
    this.keyIds[i] = type === 'ledger' || type === 'patch' ? this.keyId(key) : NO_KEY;
    this.length = i + 1;
    if ((type === 'message' || type === 'checkpoint') && stepId > this.maxStepId) this.maxStepId = stepId;
  }

  get keyCount(): number {
    return this.keys.length;
  }

  /** Forgets the lines from `length` on (an unfinished commit group), and with `keyCount` the keys from there on (only those lines used them). */
  truncate(length: number, keyCount = this.keys.length): void {
    if (keyCount < this.keys.length) {
      this.keys.length = keyCount;
      this.keyIdOf = undefined;
    }
    if (length >= this.length) return;
    this.length = length;
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
    copy.keys = [...this.keys];
    copy.keyIdOf = undefined;
    copy.types = this.types;
    copy.ends = this.ends;
    copy.steps = this.steps;
    copy.indexes = this.indexes;
    copy.partOffsets = this.partOffsets;
    copy.keyIds = this.keyIds;
    copy.resize(Math.max(FIRST_CAPACITY, this.length * 2));
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
    const id = this.keyIds[i]!;
    return id === NO_KEY ? '' : this.keys[id]!;
  }

  /** The line's key as a number: equal keys, equal numbers (-1 for none). */
  keyIdAt(i: number): number {
    return this.keyIds[i]!;
  }

  private keyId(key: string): number {
    const ids = (this.keyIdOf ??= new Map(this.keys.map((k, id) => [k, id])));
    let id = ids.get(key);
    if (id === undefined) {
      id = this.keys.length;
      this.keys.push(key);
      ids.set(key, id);
    }
    return id;
  }

  /** New arrays of `capacity` entries holding the current lines (never shared with another LineColumns). */
  private resize(capacity: number): void {
    this.types = grown(this.types, capacity);
    this.ends = grown(this.ends, capacity);
    this.steps = grown(this.steps, capacity);
    this.indexes = grown(this.indexes, capacity);
    this.partOffsets = grown(this.partOffsets, capacity);
    this.keyIds = grown(this.keyIds, capacity);
  }
}
