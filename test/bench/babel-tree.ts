// A tree of babel's shape for bench:search and bench:sandbox when no clone of a repository that
// size is at hand: 27.7k files in 13k folders, most of them small test fixtures two to a folder
// (input and output), a package.json in each of 150 packages, a root .gitignore that hides each
// package's lib/ (present, as after a build) and node_modules/, and a .git folder (a protected
// path the sandbox must keep). A few files hold BABEL_PATTERN, so a search for it reads the whole
// tree, as a rare identifier does.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const BABEL_PATTERN = 'isTSSatisfiesExpression';
const PACKAGES = 150;
const CASES_PER_PACKAGE = 82;
const SRC_FILES = 12;

export interface BabelTree {
  readonly files: number;
  readonly folders: number;
  readonly packageJsons: number;
}

function code(seed: number, lines: number, hit: boolean): string {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) out.push(`const v${(seed * 31 + i) % 997} = t.identifier("n${i}"); // ${seed}`);
  if (hit) out.push(`if (t.${BABEL_PATTERN}(node)) return;`);
  return out.join('\n') + '\n';
}

export function writeBabelTree(root: string): BabelTree {
  let files = 0;
  const folders = new Set<string>();
  const put = (path: string, text: string): void => {
    const parts = path.split('/');
    const dir = parts.slice(0, -1).join('/');
    if (dir !== '' && !folders.has(dir)) mkdirSync(join(root, dir), { recursive: true });
    for (let i = 1; i < parts.length; i++) folders.add(parts.slice(0, i).join('/'));
    writeFileSync(join(root, path), text);
    files += 1;
  };
  mkdirSync(join(root, '.git', 'objects'), { recursive: true });
  folders.add('.git').add('.git/objects');
  put('.gitignore', 'node_modules/\npackages/*/lib/\n*.log\n');
  put('package.json', '{ "name": "babel", "private": true }\n');
  for (let p = 0; p < PACKAGES; p++) {
    const pkg = `packages/babel-pkg-${String(p).padStart(3, '0')}`;
    put(`${pkg}/package.json`, `{ "name": "@babel/pkg-${p}", "version": "7.0.${p}" }\n`);
    for (let s = 0; s < SRC_FILES; s++)
      put(`${pkg}/src/${s % 3 === 0 ? 'helpers/' : ''}file-${s}.ts`, code(p * 100 + s, 60, p % 37 === 0 && s === 1));
    put(`${pkg}/lib/index.js`, code(p, 60, true));
    for (let c = 0; c < CASES_PER_PACKAGE; c++) {
      const at = `${pkg}/test/fixtures/case-${c}`;
      put(`${at}/input.js`, code(p + c, 8, false));
      put(`${at}/output.js`, code(p + c + 1, 8, false));
      if (c % 12 === 0) put(`${at}/options.json`, '{ "plugins": ["transform-x"] }\n');
    }
  }
  return { files, folders: folders.size, packageJsons: PACKAGES + 1 };
}
