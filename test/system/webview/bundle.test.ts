import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import * as esbuild from 'esbuild';

// The Timeline webview runs in a browser: its bundle holds the webview, the protocol and the few
// libraries it needs, never a module of src/core (nor what core drags in: zod's full build).

const ROOT = join(__dirname, '..', '..', '..');

/** The modules that put code into the bundle (tree-shaken ones leave nothing). */
async function webviewInputs(entry: string): Promise<string[]> {
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [entry],
    bundle: true,
    write: false,
    metafile: true,
    platform: 'browser',
    format: 'iife',
    outfile: 'webview.js',
    logLevel: 'silent',
  });
  const output = Object.values(result.metafile.outputs).find((o) => o.entryPoint !== undefined);
  return Object.entries(output?.inputs ?? {}).flatMap(([input, used]) => (used.bytesInOutput > 0 ? [input] : []));
}

/** Why an input may not be in the browser bundle, or undefined. */
function refusal(input: string): string | undefined {
  if (/(^|\/)src\/core\//.test(input)) return 'a module of src/core';
  if (/(^|\/)src\/host\//.test(input)) return 'a module of src/host';
  if (/node_modules\/zod\/v4\/(classic|locales)\//.test(input)) return "zod's full build (use zod/mini)";
  return undefined;
}

describe('webview bundle', () => {
  it('holds no module of src/core or src/host, and zod only as its mini build', async () => {
    const inputs = await webviewInputs('src/webview/main.ts');
    assert.ok(
      inputs.some((i) => i.endsWith('src/webview/main.ts')),
      'the bundle was built from the webview',
    );
    const refused = inputs.flatMap((i) => (refusal(i) ? [`${i}: ${refusal(i)}`] : []));
    assert.deepEqual(refused, []);
  });

  it('the check catches a core import, a host import and full zod', () => {
    assert.equal(refusal('src/core/runtime/resumable.ts'), 'a module of src/core');
    assert.equal(refusal('src/host/vscode/commands/commands.ts'), 'a module of src/host');
    assert.match(refusal('../main/node_modules/zod/v4/classic/external.js') ?? '', /mini/);
    assert.equal(refusal('src/protocol/messages.ts'), undefined);
    assert.equal(refusal('node_modules/zod/v4/mini/schemas.js'), undefined);
  });
});
