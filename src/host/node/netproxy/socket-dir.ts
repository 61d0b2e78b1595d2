import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The proxy's socket lives in a private folder under the system's temp folder. A host that ends
// normally removes its own; one killed (kill -9, a crash, a closed terminal) cannot, so each new
// proxy first removes the folders whose socket no longer answers: a connection refused means no
// process listens on it, whatever process or container made it. A folder made a moment ago may
// not have its socket yet, so a folder without one is left for a minute.

const PREFIX = 'ac-netproxy-';
const SOCKET = 'proxy.sock';
const YOUNG_MS = 60_000;
const BATCH = 64;

/** A new private (0700) folder for a proxy socket, after the dead ones were removed. */
export async function makeSocketDir(base = tmpdir()): Promise<{ dir: string; socket: string }> {
  await sweepSocketDirs(base);
  const dir = mkdtempSync(join(base, PREFIX));
  return { dir, socket: join(dir, SOCKET) };
}

/** Whether nothing listens on the socket: refused (or absent in a folder older than a minute). */
function dead(dir: string, now: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(join(dir, SOCKET));
    probe.once('connect', () => {
      probe.destroy();
      resolve(false);
    });
    probe.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED') return resolve(true);
      if (error.code !== 'ENOENT') return resolve(false);
      try {
        resolve(now - statSync(dir).mtimeMs > YOUNG_MS);
      } catch {
        resolve(false);
      }
    });
  });
}

/** Removes the proxy socket folders under `base` that nothing listens on; returns how many. Another user's are left alone. */
export async function sweepSocketDirs(base = tmpdir(), now = Date.now()): Promise<number> {
  let names: string[];
  try {
    names = readdirSync(base).filter((name) => name.startsWith(PREFIX));
  } catch {
    return 0;
  }
  let removed = 0;
  // A batch of probes at a time (2,000 dead folders: 3.6 s on a loaded two-core machine, once).
  for (let at = 0; at < names.length; at += BATCH) {
    const batch = names.slice(at, at + BATCH).map((name) => join(base, name));
    const verdicts = await Promise.all(batch.map((dir) => dead(dir, now)));
    for (const [i, dir] of batch.entries()) {
      if (!verdicts[i]) continue;
      try {
        rmSync(dir, { recursive: true, force: true });
        removed += 1;
      } catch {
        // Not ours to remove (another user's folder in a shared /tmp), or gone already.
      }
    }
  }
  return removed;
}
