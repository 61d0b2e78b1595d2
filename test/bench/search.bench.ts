// search_text, ripgrep (rg on PATH, else the one in the code-server install) against the Node
// fallback, on two trees. The headline figures (search_ms_rg, search_ms_fallback, hits_*) come
// from a generated tree shaped like a real repository (search-tree.ts: >= 9,000 files, nested
// .gitignore files, a 50 MB ignored node_modules), whose expected hits the generator counts. The
// node_modules_* figures come from a hard-linked copy of this repository's installed node_modules
// with a .gitignore that ignores some subtrees; their hits_expected is `grep -r` on the same tree
// minus the ignored paths (the copy drops files over the search's size cap and the packages' own
// ignore files, so that grep and the engines look at the same files). search_ms_* is the best of
// RUNS runs (wall clock); search_cpu_ms_fallback the CPU the fallback used (all its threads),
// which a busy machine does not inflate. Prints ONE JSON object.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { TREE_PATTERN, writeRepoTree } from './search-tree';
import { MAX_SEARCH_FILE_BYTES, ripgrepOnPath, ripgrepUnderAppRoot, searchText, type SearchSpec } from '../../src/host/node/search/index';

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
  return Number(execFileSync('sh', ['-c', `find "$1" -type f | wc -l`, 'sh', root], { encoding: 'utf8' }).trim());
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

async function main(): Promise<void> {
  const rgPath = ripgrep();
  const repo = await repoTreeFigures(rgPath);
  const nodeModules = await nodeModulesFigures(rgPath);
  console.log(JSON.stringify({ rg_path: rgPath, ...repo, ...nodeModules, runs: RUNS, load_average_1m: Number(loadavg()[0]!.toFixed(2)) }));
}

void main();
