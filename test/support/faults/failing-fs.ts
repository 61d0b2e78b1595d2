import type { StoreFileHandle, StoreFileStat, StoreFs } from '../../../src/core/store/fs-port';

export type FaultCode = 'ENOSPC' | 'EIO' | 'EPERM' | 'EBUSY' | 'EACCES';
export const FAULT_CODES: readonly FaultCode[] = ['ENOSPC', 'EIO', 'EPERM', 'EBUSY'];

export interface FaultPlan {
  readonly code: FaultCode;
  /** 1-based number of the operation that fails (counted from the start or the last reset). */
  readonly atOp: number;
  /** Every operation after the first failure fails too, until `clear()`. */
  readonly sticky?: boolean;
  /** A failing write first writes half its bytes, as a disk filling up mid-write does. */
  readonly partialWrite?: boolean;
}

export interface InjectedFault {
  readonly op: string;
  readonly path: string;
  readonly code: FaultCode;
  readonly opNumber: number;
}

export function nodeError(code: FaultCode, op: string, path: string): Error {
  const text: Record<FaultCode, string> = {
    ENOSPC: 'no space left on device',
    EIO: 'i/o error',
    EPERM: 'operation not permitted',
    EBUSY: 'resource busy or locked',
    EACCES: 'permission denied',
  };
  return Object.assign(new Error(`${code}: ${text[code]}, ${op} '${path}'`), { code, syscall: op, path, errno: -1 });
}

/**
 * A StoreFs that throws a Node-style error (`code` ENOSPC, EIO, EPERM or EBUSY) at the Nth
 * operation, and optionally at every operation after it until the fault is cleared.
 */
export class FailingFs implements StoreFs {
  ops = 0;
  readonly injected: InjectedFault[] = [];
  private plan: FaultPlan | undefined;
  private failing = false;

  constructor(
    readonly inner: StoreFs,
    plan?: FaultPlan,
  ) {
    this.plan = plan;
  }

  /** Arms a fault; its op number counts from now. */
  arm(plan: FaultPlan): void {
    this.plan = { ...plan, atOp: this.ops + plan.atOp };
    this.failing = false;
  }

  /** The fault is gone (space freed, device back): operations succeed again. */
  clear(): void {
    this.plan = undefined;
    this.failing = false;
  }

  get fired(): boolean {
    return this.injected.length > 0;
  }

  private check(op: string, path: string): FaultPlan | undefined {
    this.ops += 1;
    const plan = this.plan;
    if (!plan) return undefined;
    if (this.ops === plan.atOp || (this.failing && plan.sticky)) {
      this.failing = true;
      this.injected.push({ op, path, code: plan.code, opNumber: this.ops });
      return plan;
    }
    return undefined;
  }

  private async guard<T>(op: string, path: string, run: () => Promise<T>): Promise<T> {
    const plan = this.check(op, path);
    if (plan) throw nodeError(plan.code, op, path);
    return run();
  }

  openAppend(path: string): Promise<StoreFileHandle> {
    return this.guard('open', path, () => this.inner.openAppend(path));
  }
  openExclusive(path: string): Promise<StoreFileHandle> {
    return this.guard('open', path, () => this.inner.openExclusive(path));
  }
  async write(handle: StoreFileHandle, bytes: Uint8Array): Promise<void> {
    const plan = this.check('write', handle.path);
    if (!plan) return this.inner.write(handle, bytes);
    if (plan.partialWrite && bytes.length > 1) await this.inner.write(handle, bytes.subarray(0, bytes.length >> 1));
    throw nodeError(plan.code, 'write', handle.path);
  }
  sync(handle: StoreFileHandle): Promise<void> {
    return this.guard('fsync', handle.path, () => this.inner.sync(handle));
  }
  close(handle: StoreFileHandle): Promise<void> {
    // A failed close still releases the descriptor, as close(2) does.
    const plan = this.check('close', handle.path);
    return this.inner.close(handle).then(() => {
      if (plan) throw nodeError(plan.code, 'close', handle.path);
    });
  }
  size(handle: StoreFileHandle): Promise<number> {
    return this.guard('fstat', handle.path, () => this.inner.size(handle));
  }
  readFile(path: string): Promise<Uint8Array> {
    return this.guard('read', path, () => this.inner.readFile(path));
  }
  truncate(path: string, length: number): Promise<void> {
    return this.guard('truncate', path, () => this.inner.truncate(path, length));
  }
  rename(from: string, to: string): Promise<void> {
    return this.guard('rename', to, () => this.inner.rename(from, to));
  }
  link(from: string, to: string): Promise<void> {
    return this.guard('link', to, () => this.inner.link(from, to));
  }
  syncDir(path: string): Promise<void> {
    return this.guard('fsync', path, () => this.inner.syncDir(path));
  }
  mkdirp(path: string): Promise<void> {
    return this.guard('mkdir', path, () => this.inner.mkdirp(path));
  }
  readdir(path: string): Promise<string[]> {
    return this.guard('scandir', path, () => this.inner.readdir(path));
  }
  stat(path: string): Promise<StoreFileStat | null> {
    return this.guard('stat', path, () => this.inner.stat(path));
  }
  unlink(path: string): Promise<void> {
    return this.guard('unlink', path, () => this.inner.unlink(path));
  }
  rmdir(path: string): Promise<void> {
    return this.guard('rmdir', path, () => this.inner.rmdir(path));
  }
}
