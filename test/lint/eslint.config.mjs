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
    // The core is host-free: no VS Code, no direct I/O (ports only), and nothing above it: the
    // shared words and statuses live in src/words, below core.
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'vscode', message: 'src/core never imports vscode: add a port and adapt it in src/host.' },
            ...['fs', 'fs/promises', 'child_process'].flatMap((m) =>
              [m, `node:${m}`].map((name) => ({ name, message: 'src/core does no direct I/O: use a port.' })),
            ),
          ],
          patterns: [
            {
              group: ['**/host/**', '**/protocol/**', '**/webview/**', '**/extension'],
              message: 'src/core imports nothing above it (src/words is below core).',
            },
          ],
        },
      ],
    },
  },
  {
    // The leaf every layer may use, the webview included: no imports at all.
    files: ['src/words/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: 'ImportDeclaration[source.value=/^[^.]|^\\.\\.\\//]', message: 'src/words is a leaf: no imports but its own files.' },
        { selector: 'ImportExpression', message: 'src/words is a leaf: no imports.' },
      ],
    },
  },
  {
    // The wire between the host and the webview: schemas only, built from src/words' value lists.
    files: ['src/protocol/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'vscode', '**/host/**', '**/core/**', '**/webview/**'],
              message: 'src/protocol holds the wire schemas only: it imports src/words and zod/mini.',
            },
          ],
        },
      ],
    },
  },
  {
    // The webview runs in a browser: it imports src/protocol and src/words only, and zod's mini build
    // (test/system/webview/bundle.test.ts checks the built bundle too).
    files: ['src/webview/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'zod', message: "webview: zod's mini build (zod/mini) only" }],
          patterns: [{ group: ['node:*', 'vscode', '**/host/**', '**/core/**'], message: 'webview: src/protocol and src/words only' }],
        },
      ],
    },
  },
);
