// A third extensionTestsPath entry, run by the launcher (`--two-folders`) in a workspace of two
// folders: the path rules as every surface of the window applies them when more than one is open.
import Mocha from 'mocha';
import * as vscode from 'vscode';
import { twoFoldersSuite } from './suite/two-folders.test';

export async function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', timeout: 60_000, color: false, reporter: 'spec' });
  console.log(`[host-tests] VS Code ${vscode.version}, app "${vscode.env.appName}", two-folder run`);
  mocha.suite.emit('pre-require', globalThis, 'host-two-folders', mocha);
  twoFoldersSuite();
  const failures = await new Promise<number>((resolve) => mocha.run(resolve));
  if (failures > 0) throw new Error(`${failures} host test(s) failed`);
}
