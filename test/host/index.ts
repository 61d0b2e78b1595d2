// The extensionTestsPath entry (same contract as @vscode/test-electron): run() resolves when
// every suite passed and rejects otherwise.
import Mocha from 'mocha';
import * as vscode from 'vscode';
import { HOST_SUITES } from './suites';

export async function run(): Promise<void> {
  // HOST_TEST_GREP (passed through the server's environment) runs a subset while developing.
  const mocha = new Mocha({
    ui: 'bdd',
    timeout: 60_000,
    color: false,
    reporter: 'spec',
    ...(process.env.HOST_TEST_GREP ? { grep: process.env.HOST_TEST_GREP } : {}),
  });
  console.log(`[host-tests] VS Code ${vscode.version}, app "${vscode.env.appName}", host ${vscode.env.appHost}`);
  mocha.suite.emit('pre-require', globalThis, 'host-suites', mocha);
  for (const defineSuite of HOST_SUITES) defineSuite();
  const failures = await new Promise<number>((resolve) => mocha.run(resolve));
  if (failures > 0) throw new Error(`${failures} host test(s) failed`);
}
