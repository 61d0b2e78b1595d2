import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

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
