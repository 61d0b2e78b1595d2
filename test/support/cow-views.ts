import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { detectSandbox, noViewReason } from '../../src/host/node/sandbox/index';
import { tempDir } from '../unit/runtime/harness';

/**
 * For a `before` hook: skips the suite, saying why, where this machine cannot give a command a
 * copy-on-write view (no bubblewrap, no unprivileged user namespaces, a file system overlayfs refuses).
 */
export function skipWithoutViews(ctx: Mocha.Context): void {
  const probe = tempDir('view-probe');
  mkdirSync(join(probe, 'ws'));
  const why = noViewReason(detectSandbox(), {
    roots: [join(probe, 'ws')],
    protectedPaths: [],
    hidden: [],
    homePaths: [],
    network: false,
    views: join(probe, 'v'),
  });
  rmSync(probe, { recursive: true, force: true });
  if (why === undefined) return;
  console.log(`      (skipped: no copy-on-write view here: ${why})`);
  ctx.skip();
}
