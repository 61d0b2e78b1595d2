import { strict as assert } from 'node:assert';
import { StoreError } from '../../../src/core/store/contract';
import type { DeviceWatch, JournalDevice, LeaseRead, NewListingRow } from '../../../src/core/store/device';
import { encodeGroup } from '../../../src/core/store/journal-format';
import type { LeaseInfo } from '../../../src/core/store/lease-policy';
import { stampRecords } from '../../../src/core/store/stamp';
import { message, runInput } from './fixtures';

// What the device conformance cases (device-conformance.ts) are built of.

export interface DeviceUnderTest {
  readonly device: JournalDevice;
  other(): JournalDevice;
  close(): Promise<void>;
}

export type DeviceFactory = () => Promise<DeviceUnderTest>;

/** The device of the running case and a way to open another on its storage. */
export interface DeviceCase {
  readonly d: JournalDevice;
  other(): JournalDevice;
}

export const T0 = 1_700_000_000_000;

/** The first group of a run: its run record, seq 1. */
export function firstGroup(runId: string): Uint8Array {
  return encodeGroup(stampRecords([{ ...runInput(runId), type: 'run' }], 1, T0));
}

/** A group of `n` message records from `firstSeq`; their text is not ASCII, so bytes and characters differ. */
export function group(firstSeq: number, n: number, text = 'ünïcødé ✓'): Uint8Array {
  const records = Array.from({ length: n }, (_, i) => message(firstSeq + i, 1, 'user', `${text} ${firstSeq + i}`));
  return encodeGroup(stampRecords(records, firstSeq, T0));
}

export function lease(holderId: string, generation: number, change: Partial<LeaseInfo> = {}): LeaseInfo {
  return { holderId, pid: 4242, hostname: 'box', acquiredAt: T0, renewedAt: T0, generation, ...change };
}

export function listing(runId: string, change: Partial<NewListingRow> = {}): NewListingRow {
  return {
    runId,
    task: 'fix the tests',
    createdAt: T0,
    status: 'running',
    lastSeq: 1,
    updatedAt: T0,
    steps: 0,
    journalBytes: 0,
    ...change,
  };
}

export const held = (info: LeaseInfo): LeaseRead => ({ kind: 'held', lease: info });

export function concat(...parts: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}

export const isStoreError = (code: StoreError['code']) => (e: unknown) => e instanceof StoreError && e.code === code;

/** Asserts `actual` holds the bytes of `expected` (a Buffer as well as a Uint8Array: the port's type is Uint8Array). */
export function sameBytes(actual: Uint8Array | null, expected: Uint8Array, message?: string): void {
  assert.ok(actual !== null, message ?? 'bytes, not null');
  const [a, e] = [
    Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength),
    Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength),
  ];
  assert.equal(a.toString('utf8'), e.toString('utf8'), message);
  assert.ok(a.equals(e), message ?? `${a.length} bytes, expected ${e.length}`);
}

/** The lease as held, or a failure naming what was read. */
export function heldLease(read: LeaseRead): LeaseInfo {
  assert.equal(read.kind, 'held', `a held lease, read ${JSON.stringify(read)}`);
  return (read as { lease: LeaseInfo }).lease;
}

/** Run ids a watch tells, and a wait for one of them (no fixed sleep: it settles when the notice comes). */
export function heard(
  device: JournalDevice,
  kind: 'appends' | 'leases',
): { told: string[]; watch: DeviceWatch | undefined; next(runId: string): Promise<void> } {
  const told: string[] = [];
  const waiting: Array<{ runId: string; resolve: () => void }> = [];
  const watch = device.watch(kind, (runId) => {
    told.push(runId);
    for (const w of waiting.filter((x) => x.runId === runId)) w.resolve();
  });
  const next = (runId: string) => {
    const notice = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${kind} notice of ${runId}; told ${JSON.stringify(told)}`)), 10_000);
      waiting.push({ runId, resolve: () => (clearTimeout(timer), resolve()) });
    });
    // A case that fails before it awaits the notice leaves no unhandled rejection behind.
    notice.catch(() => undefined);
    return notice;
  };
  return { told, watch, next };
}
