// ESLint flat config (run as `eslint -c test/lint/eslint.config.mjs .` from the repo root).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['.cache/**', 'dist/**', 'node_modules/**', 'test-results/**', 'media/**', 'test/demo/workspace/**', '**/*.mjs', '**/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-console': 'off',
    },
  },
  {
    // The core is host-free: no VS Code, no direct I/O (ports only).
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'vscode', message: 'src/core never imports vscode: add a port and adapt it in src/host.' },
            { name: 'fs', message: 'src/core does no direct I/O: use a port.' },
            { name: 'node:fs', message: 'src/core does no direct I/O: use a port.' },
            { name: 'fs/promises', message: 'src/core does no direct I/O: use a port.' },
            { name: 'node:fs/promises', message: 'src/core does no direct I/O: use a port.' },
            { name: 'child_process', message: 'src/core does no direct I/O: use a port.' },
            { name: 'node:child_process', message: 'src/core does no direct I/O: use a port.' },
          ],
        },
      ],
    },
  },
  {
    // The webview bundle runs in a browser: no Node, no vscode, no core.
    files: ['src/webview/**/*.ts', 'src/protocol/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['node:*', 'vscode', '**/host/**'], message: 'browser code: protocol and webview only' }] },
      ],
    },
  },
  {
    // The webview itself imports no core module, not even a type: what it needs lives in src/protocol
    // (test/system/webview/bundle.test.ts checks the built bundle too).
    files: ['src/webview/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'zod', message: "webview: zod's mini build (zod/mini) only" }],
          patterns: [{ group: ['node:*', 'vscode', '**/host/**', '**/core/**'], message: 'webview: protocol modules only' }],
        },
      ],
    },
  },
);
