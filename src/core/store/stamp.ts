import { StoreError, type ForkRequest } from './contract';
import { FORMAT_VERSION, StoreRecord, type ForkPoint, type NewRecord, type StoredRecord } from './records';

/**
 * Validates new records through the zod schemas (which also drops any field the schema does
 * not know, such as a stray apiKey) and gives them version, time and sequence numbers.
 */
export function stampRecords(records: readonly NewRecord[], firstSeq: number, now: number): StoredRecord[] {
  return records.map((record, i) => {
    if (record.type === 'run' && firstSeq + i !== 1) throw new StoreError('a run record may only start a journal', 'invalid');
    const parsed = StoreRecord.safeParse({ ...record, v: FORMAT_VERSION, at: now });
    if (!parsed.success) {
      throw new StoreError(`invalid ${String(record.type)} record: ${parsed.error.message}`, 'invalid');
    }
    return { ...parsed.data, seq: firstSeq + i };
  });
}

/**
 * The first record of a fork of `parentId` (any store): the parent's point it stands on (its last
 * record now, and in a file store that line's end and checksum), numbered after it. Refuses a
 * step the parent does not have.
 */
export function forkRecords(
  parentId: string,
  fork: ForkRequest,
  end: { seq: number; steps: number; journalBytes?: number; lineCrc?: string },
  now: number,
): StoredRecord[] {
  // A point (checkpointId) of a run that has made no step yet (its run_start, as a fork made at step 1 has) is a point of step 1.
  const steps = fork.checkpointId === undefined ? end.steps : Math.max(1, end.steps);
  if (!Number.isInteger(fork.step) || fork.step < 1 || fork.step > steps)
    throw new StoreError(`run ${parentId} has no step ${fork.step} to fork from (it has ${end.steps})`, 'invalid');
  const parent: ForkPoint = {
    runId: parentId,
    step: fork.step,
    ...(fork.checkpointId !== undefined ? { checkpointId: fork.checkpointId } : {}),
    seq: end.seq,
    ...(end.journalBytes !== undefined ? { journalBytes: end.journalBytes } : {}),
    ...(end.lineCrc !== undefined ? { lineCrc: end.lineCrc } : {}),
    files: fork.files,
  };
  return stampRecords([{ type: 'fork', runId: fork.runId, createdAt: now, parent }], end.seq + 1, now);
}

/** The steps a new fork has made: those before its step, and that step too when it starts at a point inside it. */
export function forkSteps(fork: Pick<ForkRequest, 'step' | 'checkpointId'>): number {
  return fork.checkpointId === undefined ? fork.step - 1 : fork.step;
}
