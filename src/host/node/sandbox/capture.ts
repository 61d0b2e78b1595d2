import type { Stats } from 'node:fs';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import * as nodePath from 'node:path';
import { hashContent, isBinary } from '../../../core/patches/hash';
import { protectedPathReason } from '../../../core/tools/protected-paths';
import { IgnoreRules } from '../search/filters';
import { GIT_RULE } from './plan';
import type { Layer, View } from './overlay';

// A command's change set, read from its view's upper folders: the walk follows what the command
// changed, never the whole workspace. A file copied up but left with the lower file's bytes and
// mode (an open for writing, a touch, a chmod to the same mode) is no change. Deletions are
// whiteouts (character devices 0/0) and, for a folder the command replaced whole (opaque), what the
// lower folder holds that the merged listing the wrapper wrote after the command lacks.

/** One path of the change set. `upper`: where the command's version lies (a write). */
export interface Entry {
  readonly root: string;
  /** Root-relative, forward slashes. */
  readonly rel: string;
  readonly kind: 'write' | 'delete' | 'mode';
  readonly upper?: string;
  /** The lower file's hash (`absent` when it had none). */
  readonly beforeHash: string;
  readonly conflict?: string;
  readonly size: number;
  readonly mode: number;
  readonly binary: boolean;
  /** A symbolic link the command made (placed only among ignored paths). */
  readonly link?: string;
  /** Under the workspace's ignore rules: placed without a patch. */
  readonly ignored: boolean;
  /** An ignored folder the lower layer lacks, placed whole (one rename): how many files it holds (`size`: their bytes). */
  readonly files?: number;
}

export interface Captured {
  /** Folders of the lower layer the command removed (absolute, deepest first): removed once empty, after the files are applied. */
  readonly folders: string[];
  readonly tracked: Entry[];
  readonly ignored: Entry[];
  readonly refused: { path: string; rule: string }[];
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

const isWhiteout = (st: Stats): boolean => st.isCharacterDevice() && st.rdev === 0;

/** The merged listing the wrapper wrote: root-relative paths (null when the command was cut before it). */
function mergedListing(layer: Layer): Set<string> | null {
  try {
    const text = readFileSync(layer.merged, 'latin1');
    return new Set(
      Buffer.from(text, 'latin1')
        .toString('utf8')
        .split('\0')
        .filter((p) => p !== '')
        .map((p) => p.replace(/^\.\//, '')),
    );
  } catch {
    return null;
  }
}

/** Every file under a lower folder (what deleting the folder deletes). */
function lowerFiles(abs: string, rel: string, out: string[], folders: string[]): void {
  let names: string[];
  try {
    names = readdirSync(abs);
  } catch {
    return;
  }
  for (const name of names) {
    const st = lstatOrNull(nodePath.join(abs, name));
    if (st?.isDirectory()) lowerFiles(nodePath.join(abs, name), `${rel}/${name}`, out, folders);
    else if (st !== null) out.push(`${rel}/${name}`);
  }
  folders.push(abs);
}

type IgnoredTest = (rel: string, dir: boolean) => Promise<boolean>;

/**
 * A new folder's files and bytes, or null when it holds what must be looked at path by path: a
 * path a rule refuses (a nested `.git`), or what is neither a file, a folder nor a link.
 */
function wholeFolder(abs: string, rel: string, extra: readonly string[]): { files: number; bytes: number } | null {
  const sum = { files: 0, bytes: 0 };
  for (const entry of readdirSync(abs, { withFileTypes: true })) {
    const child = `${rel}/${entry.name}`;
    if (refusal(child, extra) !== undefined) return null;
    if (entry.isDirectory()) {
      const inner = wholeFolder(nodePath.join(abs, entry.name), child, extra);
      if (inner === null) return null;
      sum.files += inner.files;
      sum.bytes += inner.bytes;
    } else if (entry.isFile() || entry.isSymbolicLink()) {
      sum.files += 1;
      sum.bytes += lstatSync(nodePath.join(abs, entry.name)).size;
    } else return null;
  }
  return sum;
}

class Walk {
  readonly entries: Entry[] = [];
  readonly folders: string[] = [];
  constructor(
    private readonly layer: Layer,
    private readonly merged: Set<string> | null,
    private readonly since: number,
    private readonly ignored: IgnoredTest,
    /** Protected paths of the person's (set when new ignored folders may be placed whole). */
    private readonly whole?: readonly string[],
  ) {}

  private lower(rel: string): string {
    return nodePath.join(this.layer.root, rel);
  }

  private deleted(rel: string, ignored: boolean): void {
    const st = lstatOrNull(this.lower(rel));
    if (st === null) return;
    if (!st.isDirectory()) return this.push(rel, 'delete', st, ignored);
    const files: string[] = [];
    lowerFiles(this.lower(rel), rel, files, this.folders);
    for (const file of files) this.deleted(file, ignored);
  }

  private push(
    rel: string,
    kind: Entry['kind'],
    lower: Stats | null,
    ignored: boolean,
    upper?: { path: string; st: Stats; bytes?: Buffer },
    whole?: { files: number; bytes: number },
  ): void {
    const lowerBytes = lower?.isFile() && !ignored ? readFileSync(this.lower(rel)) : null;
    const changedMeanwhile = lower !== null && lower.mtimeMs >= this.since;
    const link = upper?.st.isSymbolicLink() ? readlinkSync(upper.path) : undefined;
    this.entries.push({
      root: this.layer.root,
      rel,
      kind,
      ...(upper !== undefined ? { upper: upper.path } : {}),
      beforeHash: lowerBytes === null ? 'absent' : hashContent(lowerBytes),
      ...(changedMeanwhile
        ? { conflict: `${rel} was changed while the command ran (saved by someone else): the command's version was not applied` }
        : {}),
      size: whole?.bytes ?? upper?.st.size ?? 0,
      mode: upper?.st.mode ?? 0,
      binary: (upper?.bytes !== undefined && isBinary(upper.bytes)) || (lowerBytes !== null && isBinary(lowerBytes)),
      ...(link !== undefined ? { link } : {}),
      ignored,
      ...(whole !== undefined ? { files: whole.files } : {}),
    });
  }

  /** One folder of the upper layer (root-relative `rel`, '' for the top). */
  async dir(rel: string, ignored: boolean): Promise<void> {
    const names = readdirSync(nodePath.join(this.layer.upper, rel));
    const lower = lstatOrNull(this.lower(rel));
    if (rel !== '' && lower !== null && lower.isDirectory() && this.merged !== null) {
      // An opaque folder hides the lower entries the command removed: the merged listing lacks them.
      const kept = new Set(names);
      for (const name of readdirSync(this.lower(rel))) {
        const child = `${rel}/${name}`;
        if (!kept.has(name) && !this.merged.has(child)) this.deleted(child, ignored);
      }
    } else if (rel !== '' && lower !== null && !lower.isDirectory()) this.deleted(rel, ignored);
    for (const name of names) await this.entry(rel === '' ? name : `${rel}/${name}`, ignored);
  }

  private async entry(rel: string, parentIgnored: boolean): Promise<void> {
    const path = nodePath.join(this.layer.upper, rel);
    const st = lstatSync(path);
    const ignored = parentIgnored || (await this.ignored(rel, st.isDirectory()));
    const lower = lstatOrNull(this.lower(rel));
    if (isWhiteout(st)) return this.deleted(rel, ignored);
    if (st.isDirectory() && ignored && lower === null && this.whole !== undefined) {
      // A new ignored folder (node_modules of an npm ci, a build output) goes to the workspace whole.
      const sum = wholeFolder(path, rel, this.whole);
      if (sum !== null) return this.push(rel, 'write', null, true, { path, st }, sum);
    }
    if (st.isDirectory()) return this.dir(rel, ignored);
    if (lower?.isDirectory()) this.deleted(rel, ignored);
    const lowerFile = lower?.isDirectory() ? null : lower;
    if (st.isSymbolicLink()) {
      if (lower?.isSymbolicLink() && readlinkSync(this.lower(rel)) === readlinkSync(path)) return;
      return this.push(rel, 'write', lowerFile, ignored, { path, st });
    }
    if (!st.isFile()) return;
    if (ignored) return this.push(rel, 'write', lowerFile, true, { path, st });
    const bytes = readFileSync(path);
    const same = lowerFile?.isFile() === true && lowerFile.size === st.size && readFileSync(this.lower(rel)).equals(bytes);
    if (same && (lowerFile.mode & 0o111) === (st.mode & 0o111)) return;
    this.push(rel, same ? 'mode' : 'write', lowerFile, false, { path, st, bytes });
  }
}

/** The rule that keeps a command's change out of the workspace: `.git/` of any repository, a protected path, a link outside. */
function refusal(rel: string, extra: readonly string[]): string | undefined {
  if (rel.split('/').includes('.git')) return GIT_RULE;
  const reason = protectedPathReason(rel, extra);
  if (reason !== undefined)
    return `protected path: ${/\(protected path (.*?)\)/.exec(reason)?.[1] ?? rel} (use write_file or edit_file: the person approves each such write)`;
  return undefined;
}

/** Whether the path is ignored by the workspace's own rules (.gitignore and the like, read from the lower folder), or under node_modules. */
async function ignoredPath(rules: IgnoreRules, rel: string, dir: boolean): Promise<boolean> {
  if (rel.split('/').includes('node_modules')) return true;
  return rules.pathIgnored(rel, '', dir);
}

/** Keeps, rewrites or drops one entry of the walk (a long-lived view drops what an earlier call reported). */
export type EntryFilter = (entry: Entry) => Entry | undefined;

/**
 * Reads a finished command's view into its change set (nothing applied yet). Without a filter, a
 * new ignored folder is one entry (placed with one rename); a filter sees every file.
 */
export async function captureView(view: View, extra: readonly string[], filter?: EntryFilter): Promise<Captured> {
  const captured: Captured = { folders: [], tracked: [], ignored: [], refused: [] };
  for (const layer of view.layers) {
    const rules = new IgnoreRules(layer.root);
    const ignored: IgnoredTest = (rel, dir) => ignoredPath(rules, rel, dir);
    const walk = new Walk(layer, mergedListing(layer), view.startedAt, ignored, filter === undefined ? extra : undefined);
    await walk.dir('', false);
    captured.folders.push(...walk.folders);
    for (const walked of walk.entries) {
      const entry = filter === undefined ? walked : filter(walked);
      if (entry === undefined) continue;
      const rule = refusal(entry.rel, extra);
      if (rule !== undefined) captured.refused.push({ path: entry.rel, rule });
      else if (entry.ignored) captured.ignored.push(entry);
      else if (entry.link !== undefined)
        captured.refused.push({ path: entry.rel, rule: 'a symbolic link (file tools write regular files only): not applied' });
      else captured.tracked.push(entry);
    }
  }
  return captured;
}
