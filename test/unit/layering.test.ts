import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';

const SRC_CORE = join(__dirname, '..', '..', 'src', 'core');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? sourceFiles(full) : full.endsWith('.ts') ? [full] : [];
  });
}

const FORBIDDEN_IN_CORE = [
  { what: 'vscode', pattern: /(?:from\s+|require\(\s*|import\(\s*)['"]vscode['"]/ },
  { what: 'node:fs', pattern: /(?:from\s+|require\(\s*|import\(\s*)['"](?:node:)?fs(?:\/promises)?['"]/ },
  { what: 'node:child_process', pattern: /(?:from\s+|require\(\s*|import\(\s*)['"](?:node:)?child_process['"]/ },
  { what: 'node:net/http', pattern: /(?:from\s+|require\(\s*|import\(\s*)['"](?:node:)?(?:net|http|https)['"]/ },
];

describe('layering', () => {
  it('src/core has source files to check', () => {
    assert.ok(sourceFiles(SRC_CORE).length > 0);
  });

  for (const rule of FORBIDDEN_IN_CORE) {
    it(`src/core never imports ${rule.what}`, () => {
      const offenders = sourceFiles(SRC_CORE).filter((f) => rule.pattern.test(readFileSync(f, 'utf8')));
      assert.deepEqual(offenders, [], `files in src/core import ${rule.what}`);
    });
  }

  it('the check itself catches a vscode import', () => {
    const rule = FORBIDDEN_IN_CORE[0]!;
    assert.ok(rule.pattern.test(`import * as vscode from 'vscode';`));
    assert.ok(rule.pattern.test(`const v = require("vscode");`));
    assert.ok(!rule.pattern.test(`import { z } from 'zod';`));
  });
});

const STORE = join(SRC_CORE, 'store');
const IMPORT_FROM = /(?:from\s+|require\(\s*|import\(\s*)['"]([^'"]+)['"]/g;

/** The import specifiers of one source file, resolved to paths (bare package names stay as they are). */
function importsOf(file: string, text = readFileSync(file, 'utf8')): string[] {
  return [...text.matchAll(IMPORT_FROM)].map((m) => {
    const spec = m[1]!;
    return spec.startsWith('.') ? join(dirname(file), spec) : spec;
  });
}

const BACKENDS = [join(STORE, 'file'), join(SRC_CORE, '..', 'host', 'node', 'pg')];

describe('layering of the store', () => {
  const neutral = readdirSync(STORE)
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(STORE, name));

  it('the backend-neutral store files exist and the file backend lives in store/file/', () => {
    assert.ok(neutral.some((f) => f.endsWith('contract.ts')));
    assert.ok(sourceFiles(join(STORE, 'file')).some((f) => f.endsWith('file-store.ts')));
  });

  it('backend-neutral store files never import a backend (store/file/ or host/node/pg/)', () => {
    const offenders = neutral.flatMap((f) =>
      importsOf(f)
        .filter((target) => BACKENDS.some((dir) => target === dir || target.startsWith(dir + sep)))
        .map((target) => `${relative(SRC_CORE, f)} -> ${target}`),
    );
    assert.deepEqual(offenders, []);
  });

  it('the PostgreSQL backend never imports the file backend', () => {
    const pg = sourceFiles(BACKENDS[1]!);
    assert.ok(pg.length > 0);
    const offenders = pg.flatMap((f) =>
      importsOf(f)
        .filter((target) => target.startsWith(BACKENDS[0]! + sep))
        .map((target) => `${relative(SRC_CORE, f)} -> ${target}`),
    );
    assert.deepEqual(offenders, []);
  });

  it('the check itself resolves a relative import into store/file/', () => {
    const [resolved] = importsOf(join(STORE, 'fold.ts'), `import type { X } from './file/file-store';`);
    assert.ok(resolved?.startsWith(BACKENDS[0]! + sep));
    const [outside] = importsOf(join(STORE, 'fold.ts'), `import { Y } from './records';`);
    assert.ok(!outside?.startsWith(BACKENDS[0]! + sep));
  });
});
