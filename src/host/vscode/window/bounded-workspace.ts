import type { FileQuery, TextSearchQuery, TreeQuery, Workspace } from '../../../core/ports';

// The live workspace asks the editor (documents, buffers, saves), and the editor may be a client
// that went away (a closed browser tab during a remote session's reconnection grace): then the
// call would wait for good. Every call gets a time limit; one that passes it fails the tool call
// with a clear error, and the run goes on (or is resumed and reconciled later, as after a crash).

export const READ_LIMIT_MS = 30_000;
export const WRITE_LIMIT_MS = 120_000;

export class EditorTimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(
      `the editor did not answer ${what} within ${ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`} (is the window still connected?)`,
    );
    this.name = 'EditorTimeoutError';
  }
}

export function withinLimit<T>(what: string, ms: number, work: () => Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new EditorTimeoutError(what, ms)), ms);
  });
  return Promise.race([work(), limit]).finally(() => clearTimeout(timer));
}

/** The workspace with a time limit on every call: reads and listings, and (longer) writes and deletes. */
export function boundedWorkspace(inner: Workspace, limits = { readMs: READ_LIMIT_MS, writeMs: WRITE_LIMIT_MS }): Workspace {
  const read = <T>(what: string, work: () => Promise<T>) => withinLimit(what, limits.readMs, work);
  const write = <T>(what: string, work: () => Promise<T>) => withinLimit(what, limits.writeMs, work);
  const bounded: Workspace = {
    roots: inner.roots,
    normalize: (path, intent) => read(`resolving ${path}`, () => inner.normalize(path, intent)),
    read: (path) => read(`reading ${path}`, () => inner.read(path)),
    write: (path, bytes, before) => write(`writing ${path}`, () => inner.write(path, bytes, before)),
    delete: (path, before) => write(`deleting ${path}`, () => inner.delete(path, before)),
    list: (dir) => read(`listing ${dir}`, () => inner.list(dir)),
    stat: (path) => read(`reading ${path}`, () => inner.stat(path)),
  };
  const { isDirty, writeWhenReady, executable, setExecutable, searchText, findFiles, listTree } = inner;
  return {
    ...bounded,
    ...(isDirty ? { isDirty: (path: string) => read(`checking ${path}`, () => isDirty.call(inner, path)) } : {}),
    ...(executable ? { executable: (path: string) => read(`reading ${path}`, () => executable.call(inner, path)) } : {}),
    ...(setExecutable
      ? {
          setExecutable: (path: string, on: boolean, expected?: boolean) =>
            write(`changing the mode of ${path}`, () => setExecutable.call(inner, path, on, expected)),
        }
      : {}),
    ...(writeWhenReady
      ? {
          writeWhenReady: (path: string, bytes: Uint8Array, before: string, ready: Promise<unknown>) =>
            write(`writing ${path}`, () => writeWhenReady.call(inner, path, bytes, before, ready)),
        }
      : {}),
    // The listings and searches carry their own budget (they stop and say where); the limit here
    // only guards against an editor that never answers.
    ...(searchText
      ? {
          searchText: (query: TextSearchQuery, signal?: AbortSignal) =>
            read(`searching ${query.dir}`, () => searchText.call(inner, query, signal)),
        }
      : {}),
    ...(findFiles
      ? {
          findFiles: (query: FileQuery, signal?: AbortSignal) =>
            read(`finding files in ${query.dir}`, () => findFiles.call(inner, query, signal)),
        }
      : {}),
    ...(listTree
      ? { listTree: (query: TreeQuery, signal?: AbortSignal) => read(`listing ${query.dir}`, () => listTree.call(inner, query, signal)) }
      : {}),
  };
}
