import { fstatSync } from 'node:fs';
import { NODE_FS_CALLS, type RawFsCalls } from '../../../src/host/node/platform-fs';
import { nodeError, type FaultCode } from './failing-fs';

export type RawOp = 'open' | 'rename' | 'unlink';

export interface FlakyPlan {
  readonly op: RawOp;
  readonly code: FaultCode;
  /** How many calls of that op fail before they succeed again; Infinity for a lasting refusal. */
  readonly times: number;
  /** Only calls on a path containing this text fail (all of that op when absent). */
  readonly pathIncludes?: string;
}

/**
 * The raw calls under the platform layer (platform-fs.ts) over the real node:fs, with faults
 * injected: the first `times` calls of an op refused with a Node-style error, as a scanner
 * holding a file does on Windows. `windowsFolders` makes an fsync of a folder handle fail with
 * EPERM, as Windows does (a fake at least as strict as the real thing). Every call is logged.
 */
export class FlakyCalls implements RawFsCalls {
  readonly log: string[] = [];
  private readonly paths = new Map<number, string>();
  private readonly failed = new Map<FlakyPlan, number>();

  constructor(
    private readonly plans: readonly FlakyPlan[] = [],
    private readonly windowsFolders = false,
  ) {}

  count(entry: RegExp): number {
    return this.log.filter((line) => entry.test(line)).length;
  }

  private gate(op: RawOp, path: string): void {
    this.log.push(`${op} ${path}`);
    for (const plan of this.plans) {
      if (plan.op !== op || (plan.pathIncludes !== undefined && !path.includes(plan.pathIncludes))) continue;
      const n = this.failed.get(plan) ?? 0;
      if (n >= plan.times) continue;
      this.failed.set(plan, n + 1);
      throw nodeError(plan.code, op, path);
    }
  }

  openSync(path: string, flags: string | number, mode?: number): number {
    this.gate('open', path);
    const fd = NODE_FS_CALLS.openSync(path, flags, mode);
    this.paths.set(fd, path);
    return fd;
  }
  async open(path: string, flags: string | number, mode?: number): Promise<number> {
    this.gate('open', path);
    const fd = await NODE_FS_CALLS.open(path, flags, mode);
    this.paths.set(fd, path);
    return fd;
  }
  async fsync(fd: number): Promise<void> {
    const folder = fstatSync(fd).isDirectory();
    const path = this.paths.get(fd) ?? `fd ${fd}`;
    this.log.push(`fsync ${folder ? 'folder' : 'file'} ${path}`);
    if (folder && this.windowsFolders) throw nodeError('EPERM', 'fsync', path);
    return NODE_FS_CALLS.fsync(fd);
  }
  closeSync(fd: number): void {
    this.paths.delete(fd);
    NODE_FS_CALLS.closeSync(fd);
  }
  renameSync(from: string, to: string): void {
    this.gate('rename', to);
    NODE_FS_CALLS.renameSync(from, to);
  }
  async rename(from: string, to: string): Promise<void> {
    this.gate('rename', to);
    return NODE_FS_CALLS.rename(from, to);
  }
  async unlink(path: string): Promise<void> {
    this.gate('unlink', path);
    return NODE_FS_CALLS.unlink(path);
  }
}
