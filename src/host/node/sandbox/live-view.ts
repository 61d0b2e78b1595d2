import { lstatSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync, type Stats } from 'node:fs';
import * as nodePath from 'node:path';
import type { CommandChanges } from '../../../core/ports';
import { hashContent } from '../../../core/patches/hash';
import { ABSENT } from '../../../core/patches/schema';
import { captureView, type Entry } from './capture';
import { changeSetOf } from './changes';
import type { View } from './overlay';
import type { SandboxRequest } from './plan';

// The copy-on-write view of a long-lived process (an MCP server), captured at the end of each of
// its calls while it keeps running. Its upper folder keeps every file the server touched, applied
// or not, so a capture reports a path only when the server's version of it changed since the last
// capture: a file applied to the workspace reads the same as the lower one (no change), and one
// refused or in conflict stays as it was reported (not offered again). A file the server had
// already touched was changed from the server's earlier version, not the workspace's: that
// version's hash is the before-hash checked against the live content, so an edit the person made
// since is never overwritten (the call's change to it is a conflict).

/** A path of the upper folder as the server left it: its content hash (or absent) and executable bit. */
interface Seen {
  /** Changes with the file (inode, size, time, mode): the hash is read again only then. */
  readonly stamp: string;
  readonly hash: string;
  readonly state: string;
}

const keyOf = (root: string, rel: string): string => `${root}\0${rel}`;
const isWhiteout = (st: Stats): boolean => st.isCharacterDevice() && st.rdev === 0;

export class LiveView {
  private seen = new Map<string, Seen>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly view: View,
    private readonly request: SandboxRequest,
    /** The process whose mount namespace holds the view (the wrapper of the server). */
    private readonly pid: () => number | null | undefined,
  ) {}

  /** The change set since the last capture (one at a time), or undefined when nothing changed. */
  capture(callStart: number): Promise<CommandChanges | undefined> {
    const next = this.queue.then(() => this.captureNow(callStart));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async captureNow(callStart: number): Promise<CommandChanges | undefined> {
    this.writeMerged();
    const now = this.snapshot();
    const filter = (entry: Entry): Entry | undefined => this.fresh(entry, now);
    const captured = await captureView({ ...this.view, startedAt: callStart }, this.request.protectedPaths, filter);
    this.seen = now;
    const changes = await changeSetOf(this.view, captured, this.request.trackLimit, true);
    if (changes.files.length > 0 || changes.refused.length > 0 || changes.notes.length > 0) return changes;
    await changes.discard();
    return undefined;
  }

  /** The entry when the server's version changed since the last capture, with that earlier version as its before-hash. */
  private fresh(entry: Entry, now: Map<string, Seen>): Entry | undefined {
    const key = keyOf(entry.root, entry.rel);
    if (entry.kind === 'delete' && !now.has(key)) now.set(key, { stamp: 'deleted', hash: ABSENT, state: ABSENT });
    const current = now.get(key);
    const before = this.seen.get(key);
    if (before === undefined) return entry;
    if (current !== undefined && current.state === before.state) return undefined;
    return before.hash.startsWith('link:') ? entry : { ...entry, beforeHash: before.hash };
  }

  /** Every path of the upper folders with its state (hashes reused where the file did not change). */
  private snapshot(): Map<string, Seen> {
    const out = new Map<string, Seen>();
    for (const layer of this.view.layers) this.walk(layer.root, layer.upper, '', out);
    return out;
  }

  private walk(root: string, upper: string, rel: string, out: Map<string, Seen>): void {
    let names: string[];
    try {
      names = readdirSync(nodePath.join(upper, rel));
    } catch {
      return;
    }
    for (const name of names) {
      const child = rel === '' ? name : `${rel}/${name}`;
      const path = nodePath.join(upper, child);
      const st = lstatSync(path);
      if (st.isDirectory()) this.walk(root, upper, child, out);
      else out.set(keyOf(root, child), this.seenOf(keyOf(root, child), path, st));
    }
  }

  private seenOf(key: string, path: string, st: Stats): Seen {
    if (isWhiteout(st)) return { stamp: 'whiteout', hash: ABSENT, state: ABSENT };
    if (st.isSymbolicLink()) {
      const link = `link:${readlinkSync(path)}`;
      return { stamp: link, hash: link, state: link };
    }
    const stamp = `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.mode}`;
    const earlier = this.seen.get(key);
    if (earlier?.stamp === stamp) return earlier;
    const hash = st.isFile() ? hashContent(readFileSync(path)) : `other:${st.mode}`;
    return { stamp, hash, state: `${hash}:${(st.mode & 0o111) !== 0 ? 'x' : '-'}` };
  }

  /**
   * The merged listing the capture reads (what an opaque folder still holds), taken through the
   * server's mount namespace; none when it cannot be read (deletions under a replaced folder are then missed).
   */
  private writeMerged(): void {
    const pid = this.pid();
    for (const layer of this.view.layers) {
      try {
        if (pid === null || pid === undefined) throw new Error('no process');
        const merged = `/proc/${pid}/root${layer.root}`;
        readdirSync(merged); // the namespace can be read (else no listing: never an empty one)
        const names: string[] = [];
        this.listMerged(merged, layer.upper, '', names);
        writeFileSync(layer.merged, names.map((n) => `./${n}\0`).join(''));
      } catch {
        rmSync(layer.merged, { force: true });
      }
    }
  }

  /** For every folder the upper holds, the entries of that folder in the merged view. */
  private listMerged(merged: string, upper: string, rel: string, out: string[]): void {
    for (const entry of readdirSync(nodePath.join(upper, rel), { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      for (const name of readdirSync(nodePath.join(merged, child))) out.push(`${child}/${name}`);
      this.listMerged(merged, upper, child, out);
    }
  }
}
