// Crash-safety figures: kill -9 of the headless CLI (dist/cli.js; `npm run bench:crash` builds it)
// at every save point and at seeded random instants until --kills N processes were killed, each
// run resumed to completion; power loss before every fsync (store workload and agent run, several
// keep/drop/garble draws) and before every operation of the agent run; ENOSPC/EIO/EPERM/EBUSY at
// every operation. Prints ONE JSON object.
//   npm run bench:crash -- --kills 1000 [--concurrency 3] [--draws 3]
import { parseArgs } from 'node:util';
import { ioErrorAgentPoint, measureAgentRun, powerLossAgentPoint, type AgentPointResult } from '../support/faults/agent-faults';
import { FAULT_CODES } from '../support/faults/failing-fs';
import { CLI_PATH, killRun, measureCliRun, type KillPlan, type KillRunResult } from '../support/faults/kill-harness';
import { ioErrorPoint, measureWorkload, powerLossPoint, type PointResult } from '../support/faults/store-faults';

const { values } = parseArgs({
  options: {
    kills: { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '3' },
    draws: { type: 'string', default: '3' },
  },
  strict: true,
});
const KILLS = Number(values.kills);
const CONCURRENCY = Number(values.concurrency);
const DRAWS = Number(values.draws);
const STORE_GROUPS = 8;

function progress(text: string): void {
  process.stderr.write(`${text}\n`);
}

async function killPhase(): Promise<KillRunResult[]> {
  const clean = await measureCliRun(CLI_PATH);
  const activeMs = Math.max(100, clean.ms - clean.startupMs);
  progress(`clean CLI run: ${clean.syncs} journal fsyncs, ${clean.ms} ms (start-up ${clean.startupMs} ms)`);
  const results: KillRunResult[] = [];
  let kills = 0;
  let next = 0;
  const planAt = (i: number): KillPlan =>
    i < clean.syncs
      ? { kind: 'savePoint', afterSync: i + 1 }
      : { kind: 'random', maxDelayMs: Math.round(activeMs * 1.3), seed: i + 1, resumeKills: i % 3 };
  const worker = async (): Promise<void> => {
    while (kills < KILLS) {
      const result = await killRun(planAt(next++), CLI_PATH);
      results.push(result);
      kills += result.kills;
      if (!result.ok) progress(`FAIL ${result.point}: ${result.problems.join('; ')}`);
      if (results.length % 50 === 0) progress(`kill runs: ${results.length}, kills: ${kills}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return results;
}

async function powerLossPhase(): Promise<{ store: PointResult[]; agent: AgentPointResult[] }> {
  const { syncs: storeSyncs } = await measureWorkload(STORE_GROUPS);
  const store: PointResult[] = [];
  for (let atSync = 1; atSync <= storeSyncs + 1; atSync++) {
    for (let draw = 0; draw < DRAWS * 2; draw++) store.push(await powerLossPoint(STORE_GROUPS, atSync, atSync * 7919 + draw));
  }
  const { syncs, ops } = await measureAgentRun();
  const agent: AgentPointResult[] = [];
  for (let atSync = 1; atSync <= syncs; atSync++) {
    for (let draw = 0; draw < DRAWS; draw++) agent.push(await powerLossAgentPoint({ atSync }, atSync * 131 + draw, draw));
  }
  // Cuts between fsyncs too: before every operation of the run, one draw each.
  for (let atOp = 1; atOp <= ops; atOp++) agent.push(await powerLossAgentPoint({ atOp }, atOp * 977, atOp % 2));
  progress(`power loss: ${store.length} store points, ${agent.length} agent points`);
  return { store, agent };
}

async function ioErrorPhase(): Promise<{ store: PointResult[]; agent: AgentPointResult[] }> {
  const { ops: storeOps } = await measureWorkload(STORE_GROUPS);
  const { ops } = await measureAgentRun();
  const store: PointResult[] = [];
  const agent: AgentPointResult[] = [];
  for (const code of FAULT_CODES) {
    for (let atOp = 1; atOp <= storeOps + 1; atOp++) {
      store.push(await ioErrorPoint(STORE_GROUPS, atOp, code, false));
      store.push(await ioErrorPoint(STORE_GROUPS, atOp, code, true));
    }
    for (let atOp = 1; atOp <= ops; atOp++) agent.push(await ioErrorAgentPoint(atOp, code, true));
  }
  progress(`I/O errors: ${store.length} store points, ${agent.length} agent points`);
  return { store, agent };
}

async function main(): Promise<void> {
  const started = Date.now();
  const killed = await killPhase();
  const power = await powerLossPhase();
  const io = await ioErrorPhase();
  const agentPoints = [...power.agent, ...io.agent];
  const failures = [
    ...killed.filter((r) => !r.ok).map((r) => `${r.point}: ${r.problems.join('; ')}`),
    ...[...power.store, ...io.store].filter((r) => !r.ok).map((r) => `${r.point}: ${r.problem}`),
    ...agentPoints.filter((r) => !r.ok).map((r) => `${r.point}: ${r.problems.join('; ')}`),
  ];
  const powerPoints = [...power.store, ...power.agent];
  const ioPoints = [...io.store, ...io.agent];
  const result = {
    kills: killed.reduce((n, r) => n + r.kills, 0),
    kill_runs: killed.length,
    resumes: killed.reduce((n, r) => n + r.resumes, 0),
    resumes_ok: killed.filter((r) => r.ok && r.kills > 0).length,
    runs_killed: killed.filter((r) => r.kills > 0).length,
    status_unknown_cases: killed.filter((r) => r.executions === 0).length,
    duplicates: killed.reduce((n, r) => n + r.duplicates, 0) + agentPoints.reduce((n, r) => n + r.duplicates, 0),
    lost_acknowledged: killed.reduce((n, r) => n + r.lostAcknowledged, 0) + agentPoints.reduce((n, r) => n + r.lostAcknowledged, 0),
    power_loss_points: powerPoints.length,
    power_loss_ok: powerPoints.filter((r) => r.ok).length,
    io_error_points: ioPoints.length,
    io_error_ok: ioPoints.filter((r) => r.ok).length,
    failures: failures.slice(0, 10),
    seconds: Math.round((Date.now() - started) / 100) / 10,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exitCode = failures.length === 0 && result.duplicates === 0 && result.lost_acknowledged === 0 ? 0 : 1;
}

void main();
