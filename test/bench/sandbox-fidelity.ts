// restore_fidelity for bench:sandbox: a scripted run of agent steps, half of them sandboxed
// commands (sed -i, mv of a file and of a folder, rm, a generator that makes a script and chmods
// one +x, a git mv the sandbox refuses) and half file edits, with the person's own edits between
// steps. The workspace is snapshotted after every step (bytes and the executable bit); then, from
// the final state each time, the run is restored to every step (its later patches rolled back)
// and compared with that step's snapshot plus the person's later edits (which must survive).
// restore_fidelity: the share of steps restored exactly; user_bytes_lost: bytes of the person's
// edits missing after the restores.
import { spawnSync } from 'node:child_process';
import { cpSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyPreparedWrite, prepareWrite } from '../../src/core/patches/record';
import type { Patch } from '../../src/core/patches/schema';
import type { Workspace } from '../../src/core/ports';
import { rollbackFiles } from '../../src/core/restore/rollback';
import { applyCommandChanges } from '../../src/core/tools/command-changes';
import type { PreparedWrite, ToolContext } from '../../src/core/tools/types';
import { createNodeCommandRunner } from '../../src/host/node/command-runner';
import { NodeWorkspace } from '../../src/host/node/node-workspace';
import { MemoryBlobs, MemoryJournal, MemoryLog, fixedClock, newId } from '../unit/patches/fakes';

type Tree = Map<string, { text: string; exec: boolean }>;
type Step =
  { readonly command: string; readonly refused?: true } | { readonly edit: string; readonly text: (old: string | null) => string };
interface PersonEdit {
  readonly path: string;
  readonly added: string;
  readonly apply: (old: string) => string;
}

const lines = (prefix: string, n: number): string => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join('\n') + '\n';
const replaceLine = (text: string, from: string, to: string): string => text.replace(new RegExp(`^${from}$`, 'm'), to);

const INITIAL: Record<string, string> = {
  'a.txt': lines('line', 30),
  'b.txt': lines('b', 24),
  'old.txt': 'to be moved\n',
  'del.txt': 'to be removed\n',
  'tool.sh': '#!/bin/sh\necho tool\n',
  'lib/one.js': 'module.exports = 1;\n',
  'lib/deep/two.js': 'module.exports = 2;\n',
  'notes.md': '# notes\n',
};

const STEPS: Step[] = [
  { command: "sed -i 's/^line 3$/LINE 3 (sed)/' a.txt" },
  { edit: 'b.txt', text: (old) => replaceLine(old!, 'b 2', 'B 2 (edit)') },
  { command: 'mv old.txt new.txt' },
  { edit: 'c.txt', text: () => 'created by an edit\n' },
  { command: 'mv lib lib2' },
  { edit: 'a.txt', text: (old) => replaceLine(old!, 'line 15', 'LINE 15 (edit)') },
  { command: 'rm del.txt' },
  { command: "printf '#!/bin/sh\\necho generated\\n' > gen.sh && chmod +x gen.sh tool.sh" },
  { command: 'git mv b.txt b2.txt', refused: true },
  { edit: 'b.txt', text: (old) => replaceLine(old!, 'b 10', 'B 10 (edit)') },
  { edit: 'new.txt', text: (old) => `${old!}appended by an edit\n` },
];

/** The person's edits, after the step of the same index (lines far from the agent's hunks). */
const PERSON: (PersonEdit | undefined)[] = [
  { path: 'a.txt', added: ' (person)', apply: (t) => replaceLine(t, 'line 25', 'line 25 (person)') },
  undefined,
  { path: 'notes.md', added: 'person one\n', apply: (t) => `${t}person one\n` },
  undefined,
  { path: 'b.txt', added: ' (person)', apply: (t) => replaceLine(t, 'b 20', 'b 20 (person)') },
  undefined,
  undefined,
  { path: 'notes.md', added: 'person two\n', apply: (t) => `${t}person two\n` },
  undefined,
  { path: 'a.txt', added: ' (person, late)', apply: (t) => replaceLine(t, 'line 29', 'line 29 (person, late)') },
  undefined,
];

function snapshot(root: string, rel = '', out: Tree = new Map()): Tree {
  for (const name of readdirSync(join(root, rel))) {
    const child = rel === '' ? name : `${rel}/${name}`;
    if (child === '.git') continue;
    const st = lstatSync(join(root, child));
    if (st.isDirectory()) snapshot(root, child, out);
    else out.set(child, { text: readFileSync(join(root, child), 'utf8'), exec: (st.mode & 0o100) !== 0 });
  }
  return out;
}

/** The paths whose bytes differ, and those whose executable bit alone differs. */
function differences(a: Tree, b: Tree): { bytes: string[]; modes: string[] } {
  const paths = [...new Set([...a.keys(), ...b.keys()])].sort();
  const bytes = paths.filter((p) => a.get(p)?.text !== b.get(p)?.text);
  return { bytes, modes: paths.filter((p) => !bytes.includes(p) && a.get(p)?.exec !== b.get(p)?.exec) };
}

export interface FidelityFigures {
  /** Bytes and executable bits identical to the step. */
  readonly restore_fidelity: number;
  /** Bytes identical to the step (the executable bit aside). */
  readonly restore_fidelity_bytes: number;
  readonly user_bytes_lost: number;
  readonly restore_steps: number;
  readonly restore_command_steps: number;
  readonly restore_mismatches?: string[];
}

interface Recorded {
  readonly ws: string;
  readonly blobs: MemoryBlobs;
  readonly patches: Patch[];
  /** The workspace after each step (0: before the first). */
  readonly shots: Tree[];
}

const workspaceOf = (ws: string): Workspace => new NodeWorkspace({ roots: [ws], ripgrep: null });

/** Plays the steps and the person's edits in a fresh git workspace: the patches of each step and the snapshots. */
async function record(base: string): Promise<Recorded> {
  const ws = join(base, 'fidelity-ws');
  for (const [path, text] of Object.entries(INITIAL)) {
    mkdirSync(join(ws, path, '..'), { recursive: true });
    writeFileSync(join(ws, path), text, { mode: 0o644 });
  }
  const git = (...args: string[]) => spawnSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@b', ...args], { cwd: ws });
  for (const args of [
    ['init', '-q'],
    ['add', '-A'],
    ['commit', '-qm', 'start'],
  ])
    git(...args);
  const done: Recorded = { ws, blobs: new MemoryBlobs(), patches: [], shots: [snapshot(ws)] };
  const context = (stepId: number): ToolContext =>
    ({
      workspace: workspaceOf(ws),
      async applyWrite(write: PreparedWrite): Promise<Patch> {
        const deps = { workspace: workspaceOf(ws), blobs: done.blobs, clock: fixedClock, log: new MemoryLog(), newId };
        const patch = await applyPreparedWrite(deps, { runId: 'r', stepId, toolCallId: `call-${stepId}` }, write);
        done.patches.push(patch);
        return patch;
      },
    }) as unknown as ToolContext;
  const views = join(base, 'fidelity-store', 'command-views');
  const runner = createNodeCommandRunner({
    env: { PATH: process.env['PATH'], HOME: base },
    sandbox: () => ({ roots: [ws], protectedPaths: [], hidden: [], homePaths: [], network: false, views }),
  });
  for (const [i, step] of STEPS.entries()) {
    if ('command' in step) {
      const result = await runner.run(step.command, { cwd: ws, timeoutMs: 30_000, maxOutputBytes: 64 * 1024 });
      if ((result.exitCode === 0) === (step.refused === true)) throw new Error(`${step.command}: exit ${result.exitCode} ${result.stderr}`);
      if (result.changes !== undefined) await applyCommandChanges(context(i + 1), result.changes);
      await result.changes?.discard();
    } else {
      const live = await workspaceOf(ws).read(step.edit);
      const after = step.text(live === null ? null : Buffer.from(live.bytes).toString('utf8'));
      await context(i + 1).applyWrite(await prepareWrite(workspaceOf(ws), step.edit, new TextEncoder().encode(after)));
    }
    done.shots.push(snapshot(ws));
    const person = PERSON[i];
    if (person !== undefined) writeFileSync(join(ws, person.path), person.apply(readFileSync(join(ws, person.path), 'utf8')));
  }
  return done;
}

/** The run restored to step k from its final state (`final`, copied back first): what differs from what it should be. */
async function restoreTo(
  run: Recorded,
  final: string,
  k: number,
): Promise<{ wrong: { bytes: string[]; modes: string[] }; restored: Tree }> {
  rmSync(run.ws, { recursive: true, force: true });
  cpSync(final, run.ws, { recursive: true, preserveTimestamps: true });
  const later = run.patches.filter((p) => p.stepId > k);
  const deps = {
    workspace: workspaceOf(run.ws),
    blobs: run.blobs,
    journal: new MemoryJournal(),
    clock: fixedClock,
    log: new MemoryLog(),
    newId,
  };
  await rollbackFiles(deps, { patches: later, allCheckpoints: [] }, { kind: 'run' });
  const expected: Tree = new Map([...run.shots[k]!].map(([p, v]) => [p, { ...v }]));
  // The person's edit that follows step j is in the snapshots after it: those after k come on top.
  for (const person of PERSON.slice(Math.max(0, k - 1))) {
    const file = person !== undefined ? expected.get(person.path) : undefined;
    if (file !== undefined) file.text = person!.apply(file.text);
  }
  const restored = snapshot(run.ws);
  return { wrong: differences(expected, restored), restored };
}

export async function fidelityFigures(base: string): Promise<FidelityFigures> {
  const run = await record(base);
  const final = join(base, 'fidelity-final');
  cpSync(run.ws, final, { recursive: true, preserveTimestamps: true });
  let exact = 0;
  let exactBytes = 0;
  let lost = 0;
  const mismatches: string[] = [];
  for (let k = 0; k < run.shots.length; k++) {
    const { wrong, restored } = await restoreTo(run, final, k);
    if (wrong.bytes.length === 0) exactBytes += 1;
    if (wrong.bytes.length === 0 && wrong.modes.length === 0) exact += 1;
    else mismatches.push(`step ${k}: ${[...wrong.bytes.map((p) => `${p} (bytes)`), ...wrong.modes.map((p) => `${p} (mode)`)].join(', ')}`);
    for (const person of PERSON)
      if (person !== undefined && !(restored.get(person.path)?.text ?? '').includes(person.added)) lost += person.added.length;
  }
  const share = (n: number): number => Math.round((n / run.shots.length) * 1000) / 1000;
  return {
    restore_fidelity: share(exact),
    restore_fidelity_bytes: share(exactBytes),
    user_bytes_lost: lost,
    restore_steps: run.shots.length,
    restore_command_steps: STEPS.filter((s) => 'command' in s).length,
    ...(mismatches.length > 0 ? { restore_mismatches: mismatches } : {}),
  };
}
