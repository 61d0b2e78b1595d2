// search_text, ripgrep (rg on PATH, else the one in the code-server install) against the Node
// fallback, on two trees. The headline figures (search_ms_rg, search_ms_fallback, hits_*) come
// from a generated tree shaped like a real repository (search-tree.ts: >= 9,000 files, nested
// .gitignore files, a 50 MB ignored node_modules), whose expected hits the generator counts. The
// node_modules_* figures come from a hard-linked copy of this repository's installed node_modules
// with a .gitignore that ignores some subtrees; their hits_expected is `grep -r` on the same tree
// minus the ignored paths (the copy drops files over the search's size cap and the packages' own
// ignore files, so that grep and the engines look at the same files). search_ms_* is the best of
// RUNS runs (wall clock); search_cpu_ms_fallback the CPU the fallback used (all its threads),
// which a busy machine does not inflate. First come the figures of issue 48 on a tree of babel's
// size (SEARCH_BENCH_REPO names a clone, else babel-tree.ts generates one): find_ms and search_ms
// from a call's start to its result with editor buffers laid over the disk (buffers_seen says the
// buffers were found), *_answer_to_request_ms from the model's answer to the next request in a
// scripted run, *_cpu_ms the CPU of this process and of ripgrep (which load does not inflate), and
// rg_alone_* for ripgrep by itself on the same tree with the engine's flags (its threads, in no
// order: the floor on this machine at this load).
// Prints ONE JSON object.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { BABEL_PATTERN, writeBabelTree } from './babel-tree';
import { answerToRequestMs } from './search-answer';
import { TREE_PATTERN, writeRepoTree } from './search-tree';
import { MAX_SEARCH_FILE_BYTES, ripgrepOnPath, ripgrepUnderAppRoot, searchText, type SearchSpec } from '../../src/host/node/search/index';
import type { BufferText } from '../../src/host/node/search/buffers';
import { workspaceFind, workspaceSearch } from '../../src/host/node/search/workspace-search';
import { engineQuery } from '../../src/host/node/search/engine-query';
import { ripgrepArgs, walkArgs } from '../../src/host/node/search/rg-engine';

const PATTERN = process.env.SEARCH_PATTERN ?? 'Copyright';
const RUNS = 3;
/** Ignored in the copy: whole packages (at any depth, as a .gitignore means) and one kind of file. */
const IGNORED_DIRS = ['typescript', '@esbuild', 'playwright-core', 'prettier'];
const IGNORED_FILES = ['*.map'];

function ripgrep(): string | null {
  const onPath = ripgrepOnPath();
  if (onPath !== null) return onPath;
  const cache = join(homedir(), '.cache', 'agent-checkpoints');
  const installs = readdirSync(cache).filter((name) => name.startsWith('code-server-'));
  for (const install of installs) {
    const found = ripgrepUnderAppRoot(join(cache, install, 'cs', 'node_modules', 'code-server', 'lib', 'vscode'));
    if (found !== null) return found;
  }
  return null;
}

function buildTree(): string {
  const root = mkdtempSync(join(tmpdir(), 'search-bench-'));
  const source = join(process.cwd(), 'node_modules');
  for (const name of readdirSync(source)) execFileSync('cp', ['-al', join(source, name), root]);
  // Same files for grep and the engines: nothing over the size cap, no ignore files but ours.
  execFileSync('find', [root, '-type', 'f', '-size', `+${MAX_SEARCH_FILE_BYTES}c`, '-delete']);
  execFileSync('find', [
    root,
    '-type',
    'f',
    '(',
    '-name',
    '.gitignore',
    '-o',
    '-name',
    '.ignore',
    '-o',
    '-name',
    '.rgignore',
    ')',
    '-delete',
  ]);
  writeFileSync(join(root, '.gitignore'), [...IGNORED_DIRS.map((d) => `${d}/`), ...IGNORED_FILES].join('\n') + '\n');
  return root;
}

function countFiles(root: string): number {
  return Number(execFileSync('sh', ['-c', `find "$1" -type f -not -path '*/.git/*' | wc -l`, 'sh', root], { encoding: 'utf8' }).trim());
}

/** grep -r over the tree minus the ignored paths: matching lines, binary files skipped (-I). */
function grepHits(root: string): number {
  const args = ['-r', '-I', '-c', '-F', '--', PATTERN, '.'];
  const excludes = [
    ...IGNORED_DIRS.map((d) => `--exclude-dir=${d}`),
    ...IGNORED_FILES.map((f) => `--exclude=${f}`),
    '--exclude=.gitignore',
  ];
  let out: string;
  try {
    out = execFileSync('grep', [...excludes, ...args], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, LC_ALL: 'C' },
      maxBuffer: 1 << 28,
    });
  } catch (error) {
    out = (error as { stdout?: string }).stdout ?? '';
  }
  return out
    .split('\n')
    .filter((l) => l !== '')
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(':') + 1)), 0);
}

interface Timed {
  readonly ms: number;
  /** CPU of this process, all threads (the fallback's workers included; ripgrep's own process not). */
  readonly cpuMs: number;
  readonly hits: number;
  readonly engine: string;
  readonly files: number;
}

async function timed(spec: SearchSpec, rgPath: string | null): Promise<Timed> {
  let best = Infinity;
  let bestCpu = Infinity;
  let last = { hits: 0, engine: '', files: 0 };
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    const cpu = process.cpuUsage();
    const result = await searchText(spec, { rgPath });
    best = Math.min(best, performance.now() - started);
    const used = process.cpuUsage(cpu);
    bestCpu = Math.min(bestCpu, (used.user + used.system) / 1000);
    if (result.stopped) throw new Error(`the ${result.engine} search stopped: ${JSON.stringify(result.stopped)}`);
    last = { hits: result.matches, engine: result.engine, files: result.files.length };
  }
  return { ms: Math.round(best), cpuMs: Math.round(bestCpu), ...last };
}

function specOf(root: string, pattern: string): SearchSpec {
  return {
    rootAbs: root,
    base: '',
    pattern,
    regex: false,
    caseSensitive: true,
    include: [],
    exclude: [],
    contextLines: 0,
    maxMatches: 10_000_000,
    maxFileBytes: MAX_SEARCH_FILE_BYTES,
    budgetMs: 120_000,
  };
}

/** The repository-shaped tree (search-tree.ts): both engines, the same hits as the generator counted. */
async function repoTreeFigures(rgPath: string | null): Promise<Record<string, unknown>> {
  const root = mkdtempSync(join(tmpdir(), 'search-bench-repo-'));
  try {
    const tree = writeRepoTree(root);
    const spec = specOf(root, TREE_PATTERN);
    const rg = rgPath === null ? null : await timed(spec, rgPath);
    const fallback = await timed(spec, null);
    return {
      files_in_tree: tree.files,
      files_searched: tree.searchedFiles,
      ignored_mb: Math.round(tree.ignoredBytes / 2 ** 20),
      pattern: TREE_PATTERN,
      search_ms_rg: rg?.ms ?? null,
      search_ms_fallback: fallback.ms,
      search_cpu_ms_fallback: fallback.cpuMs,
      hits_rg: rg?.hits ?? null,
      hits_fallback: fallback.hits,
      hits_expected: tree.expectedHits,
      same_hits: rg !== null && rg.hits === fallback.hits && fallback.hits === tree.expectedHits,
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** The hard-linked copy of node_modules: real files no one here wrote. */
async function nodeModulesFigures(rgPath: string | null): Promise<Record<string, unknown>> {
  const root = buildTree();
  try {
    const spec = specOf(root, PATTERN);
    const rg = rgPath === null ? null : await timed(spec, rgPath);
    const fallback = await timed(spec, null);
    return {
      node_modules_files_in_tree: countFiles(root),
      node_modules_pattern: PATTERN,
      node_modules_ignored: [...IGNORED_DIRS.map((d) => `${d}/`), ...IGNORED_FILES],
      node_modules_search_ms_rg: rg?.ms ?? null,
      node_modules_search_ms_fallback: fallback.ms,
      node_modules_search_cpu_ms_fallback: fallback.cpuMs,
      node_modules_hits_rg: rg?.hits ?? null,
      node_modules_hits_fallback: fallback.hits,
      node_modules_hits_expected: grepHits(root),
      node_modules_files_with_hits_rg: rg?.files ?? null,
      node_modules_files_with_hits_fallback: fallback.files,
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** Targets of issue 48 (ms): call start to result, and the model's answer to the next request. */
const BABEL_TARGETS = { find_ms: 300, search_ms: 500, find_answer_to_request_ms: 400, search_answer_to_request_ms: 600 };
const FIND_GLOB = '**/package.json';
/** An editor buffer of a file not saved yet, and one over a file on disk: both hold the pattern. */
const BUFFERS: readonly BufferText[] = [
  { path: 'packages/zz-unsaved/package.json', text: `{ "note": "${BABEL_PATTERN}" }\n`, onDisk: false },
  { path: 'package.json', text: `{ "name": "babel", "note": "${BABEL_PATTERN}" }\n`, onDisk: true },
];

/** CPU ms so far of this process (all threads) and of its children that ended (ripgrep): Linux's /proc, clock ticks of 10 ms. */
function cpuMs(): number {
  const own = process.cpuUsage();
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  const children = (Number(fields[13]) + Number(fields[14])) * 10;
  return (own.user + own.system) / 1000 + children;
}

/** Best wall clock and best CPU (this process and ripgrep) of RUNS runs; CPU is what a busy machine does not inflate. */
async function best<T>(run: () => Promise<T>): Promise<{ ms: number; cpuMs: number; last: T }> {
  let ms = Infinity;
  let cpu = Infinity;
  let last: T | undefined;
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    const cpuStart = cpuMs();
    last = await run();
    ms = Math.min(ms, performance.now() - started);
    cpu = Math.min(cpu, cpuMs() - cpuStart);
  }
  return { ms: Math.round(ms), cpuMs: Math.round(cpu), last: last! };
}

/**
 * find_files and search_text on a tree of babel's size: a clone named by SEARCH_BENCH_REPO, else a
 * generated one (babel-tree.ts). find_ms and search_ms: the host's path with the editor's buffers
 * laid over the disk (call start to result); *_answer_to_request_ms: a scripted run (search-answer.ts).
 */
async function babelFigures(rgPath: string | null): Promise<Record<string, unknown>> {
  const given = process.env['SEARCH_BENCH_REPO'];
  const root = given ?? mkdtempSync(join(tmpdir(), 'search-bench-babel-'));
  try {
    if (given === undefined) writeBabelTree(root);
    const at = { rootAbs: root, base: '', prefix: '' };
    const options = { rgPath, buffers: BUFFERS };
    const find = await best(() => workspaceFind(at, { dir: '', glob: FIND_GLOB, exclude: [], max: 1000 }, options));
    const query = {
      dir: '',
      pattern: BABEL_PATTERN,
      regex: false,
      caseSensitive: true,
      include: [],
      exclude: [],
      contextLines: 0,
      maxMatches: 100,
    };
    const search = await best(() => workspaceSearch(at, query, options));
    const hitPaths = new Set(search.last.files.map((f) => f.path));
    // The floor: ripgrep alone, listing and searching the tree with the engine's own flags.
    const rgAlone = async (args: string[]) =>
      rgPath === null ? null : await best(async () => spawnSync(rgPath, args, { cwd: root, maxBuffer: 1 << 28 }));
    const rgFilesMs = await rgAlone(['--files', '--null', ...(await walkArgs(root)), '.']);
    const engine = await engineQuery({ ...specOf(root, BABEL_PATTERN), maxMatches: query.maxMatches }, Date.now());
    const rgSearchMs = await rgAlone(await ripgrepArgs(engine, false));
    const calls = [
      ['find_files', { pattern: FIND_GLOB }],
      ['search_text', { pattern: BABEL_PATTERN }],
    ] as const;
    let answers = [Infinity, Infinity];
    for (let i = 0; i < RUNS; i++) answers = (await answerToRequestMs(root, rgPath, calls)).map((ms, k) => Math.min(ms, answers[k]!));
    const figures = {
      find_ms: find.ms,
      search_ms: search.ms,
      find_answer_to_request_ms: answers[0]!,
      search_answer_to_request_ms: answers[1]!,
    };
    return {
      babel_tree: given ?? 'generated (babel-tree.ts)',
      babel_files: countFiles(root),
      babel_folders: Number(
        execFileSync('sh', ['-c', `find "$1" -mindepth 1 -type d -not -path '*/.git*' | wc -l`, 'sh', root], { encoding: 'utf8' }).trim(),
      ),
      ...figures,
      find_cpu_ms: find.cpuMs,
      search_cpu_ms: search.cpuMs,
      rg_alone_files_ms: rgFilesMs?.ms ?? null,
      rg_alone_search_ms: rgSearchMs?.ms ?? null,
      rg_alone_files_cpu_ms: rgFilesMs?.cpuMs ?? null,
      rg_alone_search_cpu_ms: rgSearchMs?.cpuMs ?? null,
      find_total: find.last.total,
      search_matches: search.last.matches,
      search_complete: search.last.stopped === undefined,
      buffers_seen: find.last.paths.includes(BUFFERS[0]!.path) && BUFFERS.every((b) => hitPaths.has(b.path)),
      babel_targets: BABEL_TARGETS,
      babel_targets_met: Object.entries(BABEL_TARGETS).every(([k, limit]) => figures[k as keyof typeof figures] <= limit),
    };
  } finally {
    if (given === undefined) rmSync(root, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const rgPath = ripgrep();
  const babel = await babelFigures(rgPath);
  const repo = await repoTreeFigures(rgPath);
  const nodeModules = await nodeModulesFigures(rgPath);
  console.log(
    JSON.stringify({ rg_path: rgPath, ...babel, ...repo, ...nodeModules, runs: RUNS, load_average_1m: Number(loadavg()[0]!.toFixed(2)) }),
  );
}

void main();
