// A generated tree shaped like a real repository, for bench:search: a monorepo of packages with
// nested .gitignore files (one with a negation), generated and log files they ignore, docs, and
// a 50 MB node_modules the root .gitignore ignores (its files hold the pattern, so ignoring it is
// what keeps the search fast and the hits right). The expected hits are counted as it is written.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const TREE_PATTERN = 'TODO(search-bench)';
const PACKAGES = 30;
const DIRS = ['components', 'utils', 'lib', 'api', 'models', 'hooks', 'styles', 'tests'];
const FILES_PER_DIR = 38;
const IGNORED_MB = 50;

export interface RepoTree {
  readonly files: number;
  readonly searchedFiles: number;
  readonly ignoredBytes: number;
  readonly expectedHits: number;
}

/** Deterministic text: `lines` lines of code-like words; every `every`-th line holds the pattern. */
function source(seed: number, lines: number, every: number): { text: string; hits: number } {
  const out: string[] = [];
  let hits = 0;
  for (let i = 0; i < lines; i++) {
    const n = (seed * 31 + i * 17) % 997;
    if (every > 0 && (i + seed) % every === 0) {
      out.push(`  // ${TREE_PATTERN}: revisit value${n} before the release`);
      hits += 1;
    } else out.push(`  export const value${n} = compute(${n}, 'field_${i}'); // line ${i}`);
  }
  return { text: out.join('\n') + '\n', hits };
}

export function writeRepoTree(root: string): RepoTree {
  let files = 0;
  let searchedFiles = 0;
  let expectedHits = 0;
  const put = (path: string, text: string, hits: number, searched: boolean) => {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
    files += 1;
    if (searched) {
      searchedFiles += 1;
      expectedHits += hits;
    }
  };
  put('.gitignore', 'node_modules/\ndist/\n*.log\n', 0, false);
  for (let p = 0; p < PACKAGES; p++) {
    const pkg = `packages/pkg-${String(p).padStart(2, '0')}`;
    put(`${pkg}/.gitignore`, 'generated/\n*.snap\n!keep.snap\n', 0, false);
    put(`${pkg}/package.json`, `{ "name": "pkg-${p}", "version": "1.0.${p}" }\n`, 0, true);
    DIRS.forEach((dir, d) => {
      for (let f = 0; f < FILES_PER_DIR; f++) {
        const { text, hits } = source(p * 1000 + d * 100 + f, 40 + ((p + f) % 60), 30 + (f % 13));
        put(`${pkg}/src/${dir}/file-${f}.ts`, text, hits, true);
      }
    });
    for (let g = 0; g < 8; g++) {
      const { text, hits } = source(p + g, 30, 2);
      put(`${pkg}/generated/out-${g}.ts`, text, hits, false);
    }
    const snap = source(p, 20, 3);
    put(`${pkg}/src/view.snap`, snap.text, snap.hits, false);
    put(`${pkg}/src/keep.snap`, snap.text, snap.hits, true);
    put(`${pkg}/build.log`, snap.text, snap.hits, false);
    put(`${pkg}/dist/index.js`, snap.text, snap.hits, false);
  }
  for (let d = 0; d < 150; d++) {
    const { text, hits } = source(d, 80, 11);
    put(`docs/guide/page-${d}.md`, text, hits, true);
  }
  // The ignored folder: IGNORED_MB of 256 KB files, each full of the pattern.
  const big = source(7, 4800, 2).text.slice(0, 256 * 1024);
  const count = (IGNORED_MB * 1024) / 256;
  for (let i = 0; i < count; i++) put(`node_modules/dep-${i % 40}/lib/chunk-${i}.js`, big, 0, false);
  return { files, searchedFiles, ignoredBytes: count * big.length, expectedHits };
}
