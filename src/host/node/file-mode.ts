import { promises as fs } from 'node:fs';
import { StaleContentError } from '../../core/ports';
import { nullOnMissing } from './live-file-io';

// The executable bit of a workspace file, the one mode a patch holds (core/patches/exec-bit.ts),
// for the Node workspace and the editor's live workspace alike. "Executable" is any `x` bit; set,
// it is given where the file is readable (as `chmod +x` under the usual umask); cleared, every `x`
// bit goes; the other bits stay. Windows has no such bit: the workspaces leave these out there.

const X_BITS = 0o111;

/** Whether the platform has file modes (not Windows). */
export const hasFileModes = (platform: string = process.platform): boolean => platform !== 'win32';

/** Whether the file is executable; null when there is none. */
export async function executableAt(absolute: string): Promise<boolean | null> {
  const stats = await fs.stat(absolute).catch(nullOnMissing);
  return stats === null ? null : (stats.mode & X_BITS) !== 0;
}

const bitWord = (executable: boolean): string => (executable ? 'mode +x' : 'mode -x');

/** Sets or clears the bit; with `expected`, StaleContentError (naming `path`) when the live bit is not that. */
export async function setExecutableAt(path: string, absolute: string, executable: boolean, expected?: boolean): Promise<void> {
  const stats = await fs.stat(absolute);
  const now = (stats.mode & X_BITS) !== 0;
  if (expected !== undefined && now !== expected) throw new StaleContentError(path, bitWord(expected), bitWord(now));
  if (now === executable) return;
  const mode = stats.mode & 0o7777;
  await fs.chmod(absolute, executable ? mode | ((mode & 0o444) >> 2) | 0o100 : mode & ~X_BITS);
}
