import { StoreError } from './contract';
import { FORMAT_VERSION } from './records';

/** By N, what upgrades a raw record of version N to version N + 1. */
export type MigrationTable = ReadonlyMap<number, (raw: Record<string, unknown>) => Record<string, unknown>>;

/**
 * Format 2 drops a patch's unified diff (`patch.diff`): nothing read it, and it held a copy of
 * both contents' changed lines beside the blobs that hold them whole.
 */
function dropPatchDiff(raw: Record<string, unknown>): Record<string, unknown> {
  if (raw.type !== 'patch' || typeof raw.patch !== 'object' || raw.patch === null) return raw;
  const { diff: _dropped, ...patch } = raw.patch as Record<string, unknown>;
  return { ...raw, patch };
}

export const MIGRATIONS: MigrationTable = new Map([
  [1, dropPatchDiff],
  // Format 3 adds records (restore_done, ancestor_changes) and fields (a restore's confirm and hunks):
  // an older record reads as it is. The number moves so that a build of format 2 refuses a journal
  // holding them as newer than it reads (future_version), instead of taking them for damage.
  [2, (raw) => raw],
]);

/**
 * Brings a raw record to `target` through the table, one version at a time. A version newer
 * than this build understands, or a gap in the table, is an error naming the file.
 */
export function upgradeRecord(
  raw: Record<string, unknown>,
  file: string,
  table: MigrationTable = MIGRATIONS,
  target = FORMAT_VERSION,
): Record<string, unknown> {
  let record = raw;
  let version = record.v;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
    throw new StoreError(`record without a valid format version in ${file}`, 'invalid', file);
  }
  if (version > target) {
    throw new StoreError(
      `${file} was written by a newer version (format ${version}; this build reads up to ${target}); nothing was changed`,
      'future_version',
      file,
    );
  }
  while (version < target) {
    const step = table.get(version);
    if (!step) throw new StoreError(`no migration from format ${version} for ${file}`, 'invalid', file);
    record = { ...step(record), v: version + 1 };
    version += 1;
  }
  return record;
}
