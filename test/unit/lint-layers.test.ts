import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { ESLint } from 'eslint';

// The layers as the lint config keeps them (`npm test` runs the lint layer): each case is an import
// a file of one layer must not (or may) make; the config, not this list, is what holds the rule.
const REPO = join(__dirname, '..', '..');

const CASES: readonly { file: string; from: string; allowed: boolean }[] = [
  { file: 'src/core/runtime/x.ts', from: '../../protocol/messages', allowed: false },
  { file: 'src/core/runtime/x.ts', from: '../../host/node/shell', allowed: false },
  { file: 'src/core/runtime/x.ts', from: '../../webview/model', allowed: false },
  { file: 'src/core/runtime/x.ts', from: 'vscode', allowed: false },
  { file: 'src/core/runtime/x.ts', from: 'node:fs', allowed: false },
  { file: 'src/core/runtime/x.ts', from: '../../words/statuses', allowed: true },
  { file: 'src/words/x.ts', from: '../core/ports', allowed: false },
  { file: 'src/words/x.ts', from: 'zod', allowed: false },
  { file: 'src/words/x.ts', from: './statuses', allowed: true },
  { file: 'src/protocol/x.ts', from: '../core/store/records', allowed: false },
  { file: 'src/protocol/x.ts', from: '../host/vscode/timeline/view-build', allowed: false },
  { file: 'src/protocol/x.ts', from: '../words/statuses', allowed: true },
  { file: 'src/webview/x.ts', from: '../core/ledger/schema', allowed: false },
  { file: 'src/webview/x.ts', from: '../host/vscode/timeline/view-build', allowed: false },
  { file: 'src/webview/x.ts', from: 'zod', allowed: false },
  { file: 'src/webview/x.ts', from: '../words/words', allowed: true },
  { file: 'src/webview/x.ts', from: '../protocol/messages', allowed: true },
];

describe('lint keeps the layers', function () {
  this.timeout(60_000);
  const eslint = new ESLint({ cwd: REPO, overrideConfigFile: join(REPO, 'test', 'lint', 'eslint.config.mjs') });

  for (const { file, from, allowed } of CASES) {
    it(`${file}: import from '${from}' is ${allowed ? 'allowed' : 'refused'}`, async () => {
      const text = `import { a } from '${from}';\nexport const b = a;\n`;
      const [result] = await eslint.lintText(text, { filePath: join(REPO, file) });
      const layerRules = (result?.messages ?? []).filter(
        (m) => m.ruleId === 'no-restricted-imports' || m.ruleId === 'no-restricted-syntax',
      );
      assert.equal(layerRules.length === 0, allowed, JSON.stringify(layerRules.map((m) => m.message)));
    });
  }
});
