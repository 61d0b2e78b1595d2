import { describeFailure, runWalk } from '../support/walk/walk';

// bench:walk: WALK_SEQUENCES (2,000) seeded random sequences of every way on, each step checked
// (test/support/walk), some answers drawn from the documented table, stranded_runs counted at
// each sequence's end. One JSON object on stdout; a failing sequence is printed on stderr with
// its seed and steps, replayed alone with WALK_SEED=<seed> WALK_SEQUENCES=1.

async function main(): Promise<void> {
  const count = Number(process.env['WALK_SEQUENCES'] ?? 2000);
  const seed = Number(process.env['WALK_SEED'] ?? 20_291);
  const length = Number(process.env['WALK_LENGTH'] ?? 14);
  const started = process.hrtime.bigint();
  const { summary, failures } = await runWalk(count, seed, length);
  for (const failure of failures) process.stderr.write(`${describeFailure(failure)}\n`);
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const [load1] = (await import('node:os')).loadavg();
  process.stdout.write(`${JSON.stringify({ ...summary, ms: Math.round(ms), load1: Math.round((load1 ?? 0) * 100) / 100 })}\n`);
  if (failures.length > 0) process.exitCode = 1;
}

void main();
