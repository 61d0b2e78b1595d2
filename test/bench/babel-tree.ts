// A generated tree of babel's shape for bench:sandbox: about 27.7k files in 13k folders (a monorepo
// of packages whose tests hold one folder per fixture, each with an input and an output file), a
// .gitignore for node_modules and build outputs, and a .git folder. The counts are what it wrote.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const PACKAGES = 150;
const GROUPS_PER_PACKAGE = 10;
const TARGET_FOLDERS = 13_000;
const TARGET_FILES = 27_700;

export interface BabelTree {
  readonly files: number;
  readonly folders: number;
}

export function writeBabelTree(root: string): BabelTree {
  let files = 0;
  let folders = 0;
  const dir = (path: string): void => {
    mkdirSync(join(root, path));
    folders += 1;
  };
  const put = (path: string, text: string): void => {
    writeFileSync(join(root, path), text);
    files += 1;
  };
  mkdirSync(root, { recursive: true });
  for (const d of ['.git', '.git/objects', 'packages']) dir(d);
  put('.gitignore', 'node_modules/\nlib/\n*.log\ncoverage/\n');
  put('package.json', '{ "name": "babel-shaped", "private": true }\n');
  const cases = TARGET_FOLDERS - folders - PACKAGES * (4 + GROUPS_PER_PACKAGE);
  for (let p = 0; p < PACKAGES; p++) {
    const pkg = `packages/babel-${String(p).padStart(3, '0')}`;
    for (const d of ['', '/src', '/test', '/test/fixtures']) dir(`${pkg}${d}`);
    for (let g = 0; g < GROUPS_PER_PACKAGE; g++) dir(`${pkg}/test/fixtures/group-${g}`);
    put(`${pkg}/package.json`, `{ "name": "@babel/p${p}", "version": "7.0.${p}" }\n`);
  }
  for (let c = 0; c < cases; c++) {
    const folder = `packages/babel-${String(c % PACKAGES).padStart(3, '0')}/test/fixtures/group-${Math.floor(c / PACKAGES) % GROUPS_PER_PACKAGE}/case-${c}`;
    dir(folder);
    put(`${folder}/input.js`, `const value${c} = ${c} ** 2; // fixture ${c}\nexport default value${c};\n`);
    put(`${folder}/output.js`, `var value${c} = Math.pow(${c}, 2);\nexports.default = value${c};\n`);
  }
  for (let i = 0; files < TARGET_FILES; i++)
    put(`packages/babel-${String(i % PACKAGES).padStart(3, '0')}/src/file-${i}.ts`, `export const n${i} = ${i};\n`);
  return { files, folders };
}
