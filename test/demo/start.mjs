// `npm start`: installs what is missing, builds, then opens the extension in a real VS Code on
// the demo workspace (desktop `code` when there is one, else the offline code-server on loopback).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ensureNodeModules, REPO_ROOT } from '../bootstrap.mjs';

ensureNodeModules();
const r = spawnSync(
  process.execPath,
  [join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs'), join(REPO_ROOT, 'test/demo/start.ts'), ...process.argv.slice(2)],
  {
    cwd: REPO_ROOT,
    stdio: 'inherit',
  },
);
process.exit(r.status ?? 1);
