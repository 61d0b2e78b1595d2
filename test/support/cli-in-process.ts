import { readFileSync } from 'node:fs';
import { main } from '../../src/host/cli/main';
import { openFileStore } from '../../src/host/node/store-factory';
import { checkpoint, ledgerEntry, runInput } from '../unit/store/fixtures';

// The CLI run in this process (what it prints kept), and a paused run whose journal a test damages:
// shared by the journal-damage tests of the unit and system layers.

export interface Printed {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in this process, keeping what it prints. */
export async function cli(args: string[]): Promise<Printed> {
  const printed = { stdout: '', stderr: '' };
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((chunk: string | Uint8Array) => ((printed.stdout += String(chunk)), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => ((printed.stderr += String(chunk)), true)) as typeof process.stderr.write;
  try {
    return { code: await main(args), ...printed };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
}

export const END_TURN = `${JSON.stringify({
  id: 'msg_done',
  content: [{ type: 'text', text: 'Nothing left to do.' }],
  stop_reason: 'end_turn',
  usage: { input_tokens: 10, output_tokens: 3 },
})}\n`;

/** A paused run whose last commit group marks call k1 succeeded; its journal's path and the offset of that group. */
export async function pausedRun(store: string): Promise<{ journal: string; lastGroup: number }> {
  const files = openFileStore(store);
  const writer = await files.createRun(runInput('r1', 'check the journal'));
  await writer.append([checkpoint('c0', 0, 'run_start', 0), ledgerEntry('k1', 0, 'planned')]);
  await writer.append([{ type: 'status', status: 'paused', reason: 'waiting' }]);
  const journal = files.journalPath('r1');
  const lastGroup = readFileSync(journal).length;
  await writer.append([ledgerEntry('k1', 0, 'succeeded')]);
  await writer.close();
  return { journal, lastGroup };
}
