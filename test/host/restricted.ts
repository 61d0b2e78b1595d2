// A second extensionTestsPath entry, run by the launcher with workspace trust ON so that the
// folder opens in real Restricted Mode: the agent must refuse to run.
import Mocha from 'mocha';
import * as vscode from 'vscode';
import { restrictedModeSuite } from './suite/restricted-mode.test';

export async function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', timeout: 60_000, color: false, reporter: 'spec' });
  console.log(`[host-tests] VS Code ${vscode.version}, app "${vscode.env.appName}", restricted-mode run`);
  mocha.suite.emit('pre-require', globalThis, 'host-restricted', mocha);
  restrictedModeSuite();
  const failures = await new Promise<number>((resolve) => mocha.run(resolve));
  if (failures > 0) throw new Error(`${failures} host test(s) failed`);
}
