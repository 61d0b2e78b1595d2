import { lstatSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Whether links can be made in `dir`: Wine 8 (the Windows layer) reports success and makes none,
 * so a suite about links skips there, saying so, instead of proving nothing. Everywhere else true.
 */
export function linksWork(dir: string): boolean {
  const probe = join(dir, `probe-link-${process.pid}`);
  try {
    symlinkSync(dir, probe, 'junction');
    return lstatSync(probe).isSymbolicLink();
  } catch {
    return false;
  } finally {
    rmSync(probe, { force: true });
  }
}
