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

export async function fidelityFigures(base: string): Promise<FidelityFigures> {
  const ws = join(base, 'fidelity-ws');
  const views = join(base, 'fidelity-store', 'command-views');
  for (const [path, text] of Object.entries(INITIAL)) {
    mkdirSync(join(ws, path, '..'), { recursive: true });
    writeFileSync(join(ws, path), text, { mode: 0o644 });
  }
  const git = (...args: string[]) => spawnSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@b', ...args], { cwd: ws });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'start');
  const blobs = new MemoryBlobs();
  const patches: Patch[] = [];
  const workspace = (): Workspace => new NodeWorkspace({ roots: [ws], ripgrep: null });
  const context = (stepId: number): ToolContext =>
    ({
      workspace: workspace(),
      async applyWrite(write: PreparedWrite): Promise<Patch> {
        const deps = { workspace: workspace(), blobs, clock: fixedClock, log: new MemoryLog(), newId };
        const patch = await applyPreparedWrite(deps, { runId: 'r', stepId, toolCallId: `call-${stepId}` }, write);
        patches.push(patch);
        return patch;
      },
    }) as unknown as ToolContext;
  const runner = createNodeCommandRunner({
    env: { PATH: process.env['PATH'], HOME: base },
    sandbox: () => ({ roots: [ws], protectedPaths: [], hidden: [], homePaths: [], network: false, views }),
  });
  const shots: Tree[] = [snapshot(ws)];
  for (const [i, step] of STEPS.entries()) {
    const stepId = i + 1;
    if ('command' in step) {
      const result = await runner.run(step.command, { cwd: ws, timeoutMs: 30_000, maxOutputBytes: 64 * 1024 });
      if ((result.exitCode === 0) === (step.refused === true)) throw new Error(`${step.command}: exit ${result.exitCode} ${result.stderr}`);
      if (result.changes !== undefined) await applyCommandChanges(context(stepId), result.changes);
      await result.changes?.discard();
    } else {
      const live = await workspace().read(step.edit);
      const after = step.text(live === null ? null : Buffer.from(live.bytes).toString('utf8'));
      await context(stepId).applyWrite(await prepareWrite(workspace(), step.edit, new TextEncoder().encode(after)));
    }
    shots.push(snapshot(ws));
    const person = PERSON[i];
    if (person !== undefined) writeFileSync(join(ws, person.path), person.apply(readFileSync(join(ws, person.path), 'utf8')));
  }
  const final = join(base, 'fidelity-final');
  cpSync(ws, final, { recursive: true, preserveTimestamps: true });
  let exact = 0;
  let exactBytes = 0;
  let lost = 0;
  const mismatches: string[] = [];
  for (let k = 0; k < shots.length; k++) {
    rmSync(ws, { recursive: true, force: true });
    cpSync(final, ws, { recursive: true, preserveTimestamps: true });
    const later = patches.filter((p) => p.stepId > k);
    const deps = { workspace: workspace(), blobs, journal: new MemoryJournal(), clock: fixedClock, log: new MemoryLog(), newId };
    await rollbackFiles(deps, { patches: later, allCheckpoints: [] }, { kind: 'run' });
    const expected: Tree = new Map([...shots[k]!].map(([p, v]) => [p, { ...v }]));
    // The person's edit that follows step j is in the snapshots after it: those after k come on top.
    for (const person of PERSON.slice(Math.max(0, k - 1))) {
      if (person === undefined) continue;
      const file = expected.get(person.path);
      if (file !== undefined) file.text = person.apply(file.text);
    }
    const restored = snapshot(ws);
    const wrong = differences(expected, restored);
    if (wrong.bytes.length === 0) exactBytes += 1;
    if (wrong.bytes.length === 0 && wrong.modes.length === 0) exact += 1;
    else mismatches.push(`step ${k}: ${[...wrong.bytes.map((p) => `${p} (bytes)`), ...wrong.modes.map((p) => `${p} (mode)`)].join(', ')}`);
    for (const person of PERSON)
      if (person !== undefined && !(restored.get(person.path)?.text ?? '').includes(person.added)) lost += person.added.length;
  }
  return {
    restore_fidelity: Math.round((exact / shots.length) * 1000) / 1000,
    restore_fidelity_bytes: Math.round((exactBytes / shots.length) * 1000) / 1000,
    user_bytes_lost: lost,
    restore_steps: shots.length,
    restore_command_steps: STEPS.filter((s) => 'command' in s).length,
    ...(mismatches.length > 0 ? { restore_mismatches: mismatches } : {}),
  };
}
