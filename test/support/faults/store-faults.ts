import { CrashingFs, MemStoreFs } from './crashing-fs';
import { FailingFs, type FaultCode } from './failing-fs';
import {
  checkRecovered,
  describeError,
  faultStore,
  FIRST_PROCESS,
  NEXT_PROCESS,
  prepareRoot,
  storeWorkload,
  type RecoveryCheck,
} from './store-workload';

// Store-level fault points: power loss before every fsync, and an I/O error at every operation.

export interface PointResult extends RecoveryCheck {
  readonly point: string;
}

/** Counts the fsyncs and operations of one clean workload run. */
export async function measureWorkload(groups: number): Promise<{ syncs: number; ops: number }> {
  const fs = new CrashingFs();
  await prepareRoot(fs.disk);
  const result = await storeWorkload(faultStore(fs, FIRST_PROCESS), groups);
  if (result.error) throw result.error;
  return { syncs: fs.syncs, ops: fs.ops };
}

/** Power goes out before fsync number `atSync`; the disk keeps a seeded subset of what was not synced. */
export async function powerLossPoint(groups: number, atSync: number, seed: number): Promise<PointResult> {
  const fs = new CrashingFs(new MemStoreFs(), { atSync });
  await prepareRoot(fs.disk);
  const result = await storeWorkload(faultStore(fs, FIRST_PROCESS), groups);
  const point = `sync ${atSync} seed ${seed}`;
  if (result.error !== undefined && !fs.lostPower)
    return { point, ok: false, recovered: 0, problem: `the workload failed without a cut: ${describeError(result.error)}` };
  const { fs: disk, report } = fs.restart(seed);
  const garbled = report.choices.writes.includes('garbled');
  const check = await checkRecovered(faultStore(disk, NEXT_PROCESS), result, undefined, garbled).catch((error: unknown) => ({
    ok: false,
    recovered: 0,
    problem: `recovery crashed: ${describeError(error)}`,
  }));
  return { point, ...check };
}

/**
 * An I/O error at operation `atOp` (sticky until cleared, as a full disk is): the workload stops
 * with a StoreError naming the code, nothing acknowledged is lost, and once the fault is cleared
 * the same process reopens the run and continues it.
 */
export async function ioErrorPoint(groups: number, atOp: number, code: FaultCode, sticky: boolean): Promise<PointResult> {
  const disk = new MemStoreFs();
  await prepareRoot(disk);
  const fs = new FailingFs(disk, { code, atOp, sticky, partialWrite: true });
  const store = faultStore(fs, FIRST_PROCESS);
  const result = await storeWorkload(store, groups);
  const point = `${code} at op ${atOp}${sticky ? ' (sticky)' : ''}`;
  // A failure the store absorbs (listing cache, closing) is fine when nothing is lost; one it
  // reports must name the problem.
  if (result.error !== undefined && !describeError(result.error).includes(code)) {
    return { point, ok: false, recovered: 0, problem: `the error does not name ${code}: ${describeError(result.error)}` };
  }
  fs.clear();
  const sameProcess = await checkRecovered(store, result).catch((error: unknown) => ({
    ok: false,
    recovered: 0,
    problem: `reopening crashed: ${describeError(error)}`,
  }));
  if (!sameProcess.ok) return { point, ...sameProcess };
  const nextProcess = await checkRecovered(faultStore(MemStoreFs.fromImage(disk.cleanImage()), NEXT_PROCESS), result);
  return { point, ...nextProcess };
}
