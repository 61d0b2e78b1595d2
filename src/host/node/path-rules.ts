import { realpathSync } from 'node:fs';
import * as nodePath from 'node:path';

// Path helpers shared by every Workspace adapter (Node and VS Code): the same rules decide what
// "inside a workspace folder after resolving symlinks" means everywhere.

export function isInside(child: string, parent: string): boolean {
  const rel = nodePath.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !nodePath.isAbsolute(rel));
}

/**
 * realpath of the deepest existing ancestor, plus the part that does not exist yet (a file
 * about to be created). Synchronous: a cached lookup takes microseconds, a thread-pool round
 * trip far more.
 */
export function realpathOfDeepest(path: string): string {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    try {
      return nodePath.join(realpathSync.native(current), ...missing.reverse());
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
      const parent = nodePath.dirname(current);
      if (parent === current) return path;
      missing.push(nodePath.basename(current));
      current = parent;
    }
  }
}
