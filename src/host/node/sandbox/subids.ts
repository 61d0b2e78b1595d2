import { existsSync, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import * as nodePath from 'node:path';

// The ids a view's user namespace maps (overlay.ts). overlayfs copies a file up with its owner, so
// a file whose uid or gid the namespace does not map cannot be copied up (EOVERFLOW). With only the
// person's own ids (`unshare -r`: one uid, one gid) every file of another owner is out; where the
// person has subordinate ids (/etc/subuid, /etc/subgid: what rootless containers use) and the
// setuid helpers newuidmap/newgidmap exist, unshare maps the first range of each too (inside: 1..count,
// as rootless podman does), so the files such a container wrote copy up. Root is treated alike: its
// own id plus root's subordinate ranges, if it has any (root could write any uid_map itself; a view
// that maps every id is not made, so one rule holds for everyone).

/** One block of subordinate ids: `start`..`start + count - 1` outside the namespace, 1..count inside. */
export interface IdRange {
  readonly start: number;
  readonly count: number;
}

/** The largest id (`(uid_t)-1` is no id). */
const MAX_ID = 4294967294;

/**
 * The first range an /etc/subuid- or /etc/subgid-style `text` gives the person (`owner:start:count`,
 * the owner being their name or their uid in decimal). A line that is not exactly that (other
 * fields, signs, spaces, numbers past the id space, a zero count), and a range holding id 0 or the
 * person's own id (unshare would punch a hole in it), is skipped.
 */
export function subordinateRange(text: string, person: { name?: string; uid: number; own: number }): IdRange | undefined {
  for (const line of text.split('\n')) {
    const match = /^([^:\s]+):(\d{1,10}):(\d{1,10})$/.exec(line.replace(/\r$/, ''));
    if (match === null || (match[1] !== person.name && match[1] !== String(person.uid))) continue;
    const start = Number(match[2]);
    const count = Number(match[3]);
    const last = start + count - 1;
    if (count < 1 || start < 1 || last > MAX_ID || (person.own >= start && person.own <= last)) continue;
    return { start, count };
  }
  return undefined;
}

/** The ids of a view's namespace, and unshare's options that make it. */
export interface ViewIds {
  /** unshare's options: a user and mount namespace with these ids mapped. */
  readonly args: readonly string[];
  readonly uid: number;
  readonly gid: number;
  readonly uids?: IdRange;
  readonly gids?: IdRange;
  /** Why the person's subordinate ids are not mapped although they have some (what newuidmap said). */
  readonly refused?: string;
}

/** The person's facts that decide the ids of a view. */
export interface IdFacts {
  readonly uid: number;
  readonly gid: number;
  readonly name?: string;
  readonly subuid: string;
  readonly subgid: string;
  /** newuidmap and newgidmap are on the PATH (unshare runs them by name). */
  readonly newuidmap: boolean;
  readonly newgidmap: boolean;
}

/** The ids of a view for `facts`: the person's own, plus each subordinate range the system lets unshare map. */
export function idsFrom(facts: IdFacts): ViewIds {
  const uids = facts.newuidmap ? subordinateRange(facts.subuid, { name: facts.name, uid: facts.uid, own: facts.uid }) : undefined;
  const gids = facts.newgidmap ? subordinateRange(facts.subgid, { name: facts.name, uid: facts.uid, own: facts.gid }) : undefined;
  const args = [
    '-Urm',
    ...(uids !== undefined ? [`--map-users=${uids.start},1,${uids.count}`] : []),
    ...(gids !== undefined ? [`--map-groups=${gids.start},1,${gids.count}`] : []),
  ];
  return { args, uid: facts.uid, gid: facts.gid, ...(uids !== undefined ? { uids } : {}), ...(gids !== undefined ? { gids } : {}) };
}

/** The same ids without the subordinate ranges (where newuidmap refused them: `refused` says what it printed). */
export function ownIdsOnly(ids: ViewIds, refused: string): ViewIds {
  return { args: ['-Urm'], uid: ids.uid, gid: ids.gid, refused: refused.slice(0, 300) };
}

const inRange = (id: number, range: IdRange | undefined): boolean =>
  range !== undefined && id >= range.start && id < range.start + range.count;

/** Whether a file of `uid`:`gid` can be copied up in the view (both ids mapped). */
export function mapsOwner(ids: ViewIds, uid: number, gid: number): boolean {
  return (uid === ids.uid || inRange(uid, ids.uids)) && (gid === ids.gid || inRange(gid, ids.gids));
}

const NO_SUBIDS = 'no subordinate ids of yours in /etc/subuid and /etc/subgid, or no newuidmap/newgidmap: sudo apt-get install uidmap';

/** What the view maps, for a tool result. */
export function mappedText(ids: ViewIds): string {
  const range = (what: string, r: IdRange | undefined): string[] =>
    r !== undefined ? [`${what} ${r.start}-${r.start + r.count - 1}`] : [];
  const sub = [...range('subordinate uids', ids.uids), ...range('subordinate gids', ids.gids)];
  if (sub.length > 0) return `uid ${ids.uid}, gid ${ids.gid} and ${sub.join(', ')}`;
  const why = ids.refused !== undefined ? `newuidmap/newgidmap refused your subordinate ids: ${ids.refused}` : NO_SUBIDS;
  return `uid ${ids.uid}, gid ${ids.gid} only (${why})`;
}

function readOr(path: string): string {
  try {
    return readFileSync(path, 'utf8').slice(0, 1 << 20);
  } catch {
    return '';
  }
}

function onPath(name: string): boolean {
  return (process.env['PATH'] ?? '').split(nodePath.delimiter).some((dir) => dir !== '' && existsSync(nodePath.join(dir, name)));
}

function nameOf(): string | undefined {
  try {
    return userInfo().username;
  } catch {
    return undefined; // no passwd entry: the uid alone names the person
  }
}

/** This process's facts, read from the system. */
export function systemIdFacts(): IdFacts {
  const name = nameOf();
  return {
    uid: process.getuid?.() ?? 0,
    gid: process.getgid?.() ?? 0,
    ...(name !== undefined ? { name } : {}),
    subuid: readOr('/etc/subuid'),
    subgid: readOr('/etc/subgid'),
    newuidmap: onPath('newuidmap'),
    newgidmap: onPath('newgidmap'),
  };
}
