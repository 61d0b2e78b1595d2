// npm run bench:pg-kill: the kill harness of the workers at full size: PG_KILL_WORKERS workers
// (default 4) on a batch of PG_KILL_RUNS runs (default 100), killed at random with SIGKILL (one
// kill every PG_KILL_GAP_MS, default 1000-4000, up to PG_KILL_MAX_KILLS) and restarted. Prints one
// JSON object; duplicated_effects and lost_records must be 0 and completed must equal runs (the
// process exits 1 otherwise, with the problems on stderr).
import { loadavg } from 'node:os';
import { pgKillHarness } from '../support/pg-kill-harness';

/** "LOW-HIGH" milliseconds between kills: a worker lives a few seconds, long enough to claim and work (and be cut mid-run). */
function gap(range: string): [number, number] {
  const [low, high] = range.split('-').map(Number);
  if (!Number.isFinite(low) || !Number.isFinite(high) || low! > high!) throw new Error(`PG_KILL_GAP_MS: not LOW-HIGH: ${range}`);
  return [low!, high!];
}

async function main(): Promise<void> {
  const workers = Number(process.env['PG_KILL_WORKERS'] ?? 4);
  const runs = Number(process.env['PG_KILL_RUNS'] ?? 100);
  const result = await pgKillHarness({
    workers,
    runs,
    maxKills: Number(process.env['PG_KILL_MAX_KILLS'] ?? runs),
    killGapMs: gap(process.env['PG_KILL_GAP_MS'] ?? '1000-4000'),
    deadlineMs: Number(process.env['PG_KILL_DEADLINE_S'] ?? 60 * 60) * 1000,
    progress: (line) => process.stderr.write(`[bench:pg-kill] ${line}\n`),
  });
  const { problems, ...figures } = result;
  for (const problem of problems) process.stderr.write(`[bench:pg-kill] ${problem}\n`);
  process.stdout.write(`${JSON.stringify({ ...figures, loadavg: loadavg().map((x) => Math.round(x * 100) / 100) })}\n`);
  process.exit(problems.length > 0 ? 1 : 0);
}

void main();
