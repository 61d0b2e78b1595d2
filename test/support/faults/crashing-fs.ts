import type { StoreFileHandle, StoreFileStat, StoreFs } from '../../../src/core/store/fs-port';
import { MemStoreFs, type CrashChoices, type FsImage } from './mem-fs';
import { Prng } from './prng';

export { MemStoreFs } from './mem-fs';
export type { CrashChoices, FsImage, WriteFate } from './mem-fs';

/** Where the power goes out: before the Nth fsync (file or folder) or before the Nth operation. */
export type CrashPoint = { readonly atSync: number } | { readonly atOp: number } | { readonly never: true };

export const POWER_LOSS_CODE = 'EPOWERLOSS';

/** What every operation of a file system that lost power rejects with: the process is gone. */
export class PowerLossError extends Error {
  readonly code = POWER_LOSS_CODE;
  constructor(op: string) {
    super(`power lost (during ${op})`);
    this.name = 'PowerLossError';
  }
}

export function isPowerLoss(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === POWER_LOSS_CODE;
}

export interface CrashReport {
  readonly image: FsImage;
  readonly choices: CrashChoices;
  /** Operation and fsync counts at the instant of the cut. */
  readonly ops: number;
  readonly syncs: number;
}

/**
 * A StoreFs that loses power at a chosen instant. Until then it is a MemStoreFs; at the cut the
 * operation in flight does not happen and every later operation rejects with PowerLossError (the
 * process is dead). `restart(seed)` gives the disk as the next process finds it: a fresh,
 * fully durable MemStoreFs over what survived, with seeded keep/drop/garble choices.
 */
export class CrashingFs implements StoreFs {
  ops = 0;
  syncs = 0;
  private powered = true;

  constructor(
    readonly disk: MemStoreFs = new MemStoreFs(),
    private point: CrashPoint = { never: true },
  ) {}

  get lostPower(): boolean {
    return !this.powered;
  }

  /** Arms (or re-arms) the cut, counted from the start of this wrapper. */
  arm(point: CrashPoint): void {
    this.point = point;
  }

  /** Cuts the power now (between operations). */
  cutPower(): void {
    this.powered = false;
  }

  /** The disk after the cut (or now, when the power is still on), as the next process sees it. */
  restart(seed: number): { fs: MemStoreFs; report: CrashReport } {
    const { image, choices } = this.disk.crashImage(new Prng(seed));
    this.powered = false;
    return { fs: MemStoreFs.fromImage(image), report: { image, choices, ops: this.ops, syncs: this.syncs } };
  }

  private gate(op: string, isSync: boolean): void {
    if (!this.powered) throw new PowerLossError(op);
    this.ops += 1;
    if (isSync) this.syncs += 1;
    const p = this.point;
    const hit = ('atOp' in p && p.atOp === this.ops) || (isSync && 'atSync' in p && p.atSync === this.syncs);
    if (hit) {
      this.powered = false;
      throw new PowerLossError(op);
    }
  }

  async openAppend(path: string): Promise<StoreFileHandle> {
    this.gate('openAppend', false);
    return this.disk.openAppend(path);
  }
  async openExclusive(path: string): Promise<StoreFileHandle> {
    this.gate('openExclusive', false);
    return this.disk.openExclusive(path);
  }
  async write(handle: StoreFileHandle, bytes: Uint8Array): Promise<void> {
    this.gate('write', false);
    return this.disk.write(handle, bytes);
  }
  async sync(handle: StoreFileHandle): Promise<void> {
    this.gate('sync', true);
    return this.disk.sync(handle);
  }
  async close(handle: StoreFileHandle): Promise<void> {
    this.gate('close', false);
    return this.disk.close(handle);
  }
  async size(handle: StoreFileHandle): Promise<number> {
    this.gate('size', false);
    return this.disk.size(handle);
  }
  async readFile(path: string): Promise<Uint8Array> {
    this.gate('readFile', false);
    return this.disk.readFile(path);
  }
  async truncate(path: string, length: number): Promise<void> {
    this.gate('truncate', true);
    return this.disk.truncate(path, length);
  }
  async rename(from: string, to: string): Promise<void> {
    this.gate('rename', false);
    return this.disk.rename(from, to);
  }
  async link(from: string, to: string): Promise<void> {
    this.gate('link', false);
    return this.disk.link(from, to);
  }
  async syncDir(path: string): Promise<void> {
    this.gate('syncDir', true);
    return this.disk.syncDir(path);
  }
  async mkdirp(path: string): Promise<void> {
    this.gate('mkdirp', false);
    return this.disk.mkdirp(path);
  }
  async readdir(path: string): Promise<string[]> {
    this.gate('readdir', false);
    return this.disk.readdir(path);
  }
  async stat(path: string): Promise<StoreFileStat | null> {
    this.gate('stat', false);
    return this.disk.stat(path);
  }
  async unlink(path: string): Promise<void> {
    this.gate('unlink', false);
    return this.disk.unlink(path);
  }
  async rmdir(path: string): Promise<void> {
    this.gate('rmdir', false);
    return this.disk.rmdir(path);
  }
}
