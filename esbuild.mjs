// Builds the extension host bundle, the headless CLI, the webview bundle and the host test
// bundle into dist/. `--watch` rebuilds on change; `--production` minifies without sourcemaps.
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');

const common = {
  bundle: true,
  sourcemap: production ? false : 'linked',
  minify: production,
  logLevel: 'warning',
  legalComments: 'none',
};

// ESM entry points first: some packages' UMD builds (jsonc-parser) load their parts with a
// dynamic require that a bundle cannot follow.
const nodeCommon = { ...common, platform: 'node', format: 'cjs', target: 'node20', mainFields: ['module', 'main'] };

const builds = [
  { ...nodeCommon, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', external: ['vscode'] },
  { ...common, platform: 'browser', format: 'iife', target: 'es2022', entryPoints: ['src/webview/main.ts'], outfile: 'dist/webview.js' },
];
// The CLI is ESM split into chunks, so that a command loads only its own code and `--help` almost
// nothing; dist/cli.js (the package's bin) only imports its entry. Bundled CommonJS packages still
// call require: the banner gives every chunk one.
const CLI_ENTRY = "#!/usr/bin/env node\n// The headless CLI: its code is in dist/cli/ (see esbuild.mjs).\nimport('./cli/cli.mjs');\n";
builds.push({
  ...nodeCommon,
  format: 'esm',
  splitting: true,
  entryPoints: { cli: 'src/host/cli/bin.ts' },
  outdir: 'dist/cli',
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunks/[name]-[hash]',
  banner: { js: "import { createRequire as __cliRequire } from 'node:module';\nconst require = __cliRequire(import.meta.url);" },
});
if (!production) {
  // Host test suites run inside the extension host; mocha is bundled in, `vscode` is provided.
  builds.push({
    ...nodeCommon,
    entryPoints: { index: 'test/host/index.ts', restricted: 'test/host/restricted.ts', 'two-folders': 'test/host/two-folders.ts' },
    outdir: 'dist/test/host',
    external: ['vscode'],
    // mocha's parallel runner is never used in the extension host.
    logOverride: { 'require-resolve-not-external': 'silent' },
  });
}

// The timeline's icon font ships from the @vscode/codicons package, not a vendored copy.
mkdirSync('dist/codicons', { recursive: true });
rmSync('dist/cli', { recursive: true, force: true });
mkdirSync('dist', { recursive: true });
writeFileSync('dist/cli.js', CLI_ENTRY, { mode: 0o755 });
for (const file of ['codicon.css', 'codicon.ttf']) copyFileSync(`node_modules/@vscode/codicons/dist/${file}`, `dist/codicons/${file}`);

if (watch) {
  const contexts = await Promise.all(builds.map((b) => esbuild.context(b)));
  await Promise.all(contexts.map((c) => c.watch()));
  console.log(`[esbuild] watching ${builds.length} bundles`);
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
  console.log(`[esbuild] built ${builds.length} bundles${production ? ' (production)' : ''}`);
}
