// The resume half of bench:store: a 10,000-step journal laid out as a writer leaves it, resumed
// in fresh processes of both runtimes the product ships on.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { INDEX } from '../../src/core/store/journal-index';
import type { StoreFs } from '../../src/core/store/fs-port';
import { openFileStore } from '../../src/host/node/store-factory';
import { ensureCodeServer } from '../support/code-server';

export const RUN_ID = 'big';
const CRASH_TAIL_BYTES = 2 * 2 ** 20;
const PROCESSES = 5;

/**
 * How the resume index stands when a process resumes the run:
 * - after_crash: the least index a crash can leave. The writer appends a segment each time its
 *   journal has grown by a step (1 MiB) and one is not already being written, so at worst the
 *   last two steps of the journal are not in it: they are read line by line.
 * - after_close: the index a writer leaves when it closes (a pause, a window reload).
 * - without_index: none at all (a journal of a build before indexes, or the index lost).
 */
export type IndexLayout = 'after_crash' | 'after_close' | 'without_index';
export const LAYOUTS: readonly IndexLayout[] = ['after_crash', 'after_close', 'without_index'];

/** The journal's groups written as a writer would leave them, with the two indexes a writer writes for them. */
export async function layOutJournal(
  root: string,
  fs: StoreFs,
  groups: readonly Uint8Array[],
): Promise<Record<IndexLayout, Uint8Array | null>> {
  const store = openFileStore(root, { fs });
  const journal = store.journalPath(RUN_ID);
  const total = groups.reduce((n, g) => n + g.length, 0);
  let written = 0;
  let next = 0;
  const handle = await fs.openAppend(journal);
  for (; next < groups.length && written < total - CRASH_TAIL_BYTES; next++) {
    await fs.write(handle, groups[next]!);
    written += groups[next]!.length;
  }
  await (await store.openWriter(RUN_ID)).close();
  const afterCrash = readFileSync(join(store.runDir(RUN_ID), INDEX));
  for (; next < groups.length; next++) await fs.write(handle, groups[next]!);
  await fs.close(handle);
  await (await store.openWriter(RUN_ID)).close();
  const afterClose = readFileSync(join(store.runDir(RUN_ID), INDEX));
  return { after_crash: afterCrash, after_close: afterClose, without_index: null };
}

export interface ResumeFigures {
  readonly resume_ms: number;
  readonly resume_with_messages_ms: number;
  readonly resume_eventloop_max_ms: number;
}

/** The resume child bundled as the extension and the CLI ship (esbuild.mjs's Node options). */
export function bundleResumeChild(outDir: string): string {
  const outfile = join(outDir, 'store-resume-child.js');
  buildSync({
    entryPoints: [join(__dirname, 'store-resume-child.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'warning',
  });
  return outfile;
}

/** One resume in a new process of `node`, timed inside it. */
function resumeInNewProcess(node: string, child: string, root: string, steps: number): ResumeFigures {
  const out = execFileSync(node, [child, root, RUN_ID, String(steps)], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop()!) as ResumeFigures;
}

/**
 * PROCESSES fresh processes for each layout and runtime, interleaved so all meet the same disk
 * and host. The index is put back before each (the child's writer writes its own when it closes).
 */
export function resumeFigures(
  runtimes: readonly string[],
  child: string,
  root: string,
  indexes: Record<IndexLayout, Uint8Array | null>,
  steps: number,
): Map<string, ResumeFigures[]> {
  const figures = new Map<string, ResumeFigures[]>();
  const indexFile = join(root, 'runs', RUN_ID, INDEX);
  for (let i = 0; i < PROCESSES; i++) {
    for (const layout of LAYOUTS) {
      for (const node of runtimes) {
        const index = indexes[layout];
        if (index) writeFileSync(indexFile, index);
        else rmSync(indexFile, { force: true });
        const key = `${layout} ${node}`;
        figures.set(key, [...(figures.get(key) ?? []), resumeInNewProcess(node, child, root, steps)]);
      }
    }
  }
  return figures;
}

/** The Node the extension host runs on here: the offline VS Code's (code-server's engine). */
export function extensionHostNode(): string {
  return join(ensureCodeServer(), 'node24/node_modules/node/bin/node');
}

export function versionOf(node: string): string {
  return execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
}

export const RESUME_PROCESSES = PROCESSES;
