import { silentLog } from '../../../src/core/ports';
import { buildAgent } from '../../../src/core/runtime/agent';
import type { AgentRuntime } from '../../../src/core/runtime/runtime';
import type { RunOutcome } from '../../../src/core/runtime/types';
import { StoreError } from '../../../src/core/store/contract';
import { FileCheckpointStore } from '../../../src/core/store/file/file-store';
import type { StoreFs } from '../../../src/core/store/fs-port';
import type { ProcessIdentity } from '../../../src/core/store/lease-policy';
import type { RunSettings, StoredRecord } from '../../../src/core/store/records';
import type { ToolRegistry } from '../../../src/core/tools/registry';
import { checkAcknowledged, checkFinal } from './agent-checks';
import { counterCommand, NOTES_BEFORE, NOTES_FILE, scriptModel } from './agent-script';
import { CrashingFs, MemStoreFs, type CrashPoint } from './crashing-fs';
import { FailingFs, type FaultCode } from './failing-fs';
import { allowAllApprover, CountingRunner, DeadProcessError, MemWorkspace } from './mem-world';
import { Prng } from './prng';
import { checkRefused, describeError, prepareRoot, STORE_ROOT, tickingClock } from './store-workload';

// The agent run of agent-script.ts in process, over the file store on a fault-injecting fs:
// power cuts (then a fresh process on what survived) or I/O errors (then the same process once
// the fault is gone), resumed until the run completes.

export const AGENT_SETTINGS: RunSettings = { model: 'claude-test', provider: 'anthropic', maxTurns: 12, maxOutputTokensPerCall: 512 };
const COUNTER = '/outside/counter';
const MAX_ATTEMPTS = 8;

export interface AgentPointResult {
  readonly point: string;
  readonly ok: boolean;
  readonly problems: string[];
  readonly duplicates: number;
  readonly lostAcknowledged: number;
  /** Resumes that ran (each after a cut or a cleared fault). */
  readonly resumes: number;
  /** The point ended with the run refused as damaged: a cut garbled its unacknowledged last write (checkRefused). */
  readonly refused?: boolean;
  /** Fsyncs and operations of the first process (for measuring a clean run). */
  readonly syncs: number;
  readonly ops: number;
}

function identity(pid: number): ProcessIdentity {
  return { pid, hostname: 'faults-host', isAlive: (p) => p === pid };
}

export interface AgentRigOptions {
  /** Tools to run instead of the built-in ones (a self-check relabels run_command). */
  readonly tools?: ToolRegistry;
}

class World {
  dead = false;
  constructor(private readonly options: AgentRigOptions = {}) {}
  readonly workspace = new MemWorkspace({ [NOTES_FILE]: NOTES_BEFORE }, () => !this.dead);
  readonly commands = new CountingRunner(() => !this.dead);
  readonly model = scriptModel(COUNTER);
  readonly acknowledged = new Map<number, StoredRecord>();
  readonly problems: string[] = [];
  lost = 0;
  resumes = 0;

  runtime(fs: StoreFs, pid: number): { runtime: AgentRuntime; store: FileCheckpointStore } {
    const store = new FileCheckpointStore({
      fs,
      root: STORE_ROOT,
      clock: tickingClock(1_800_000_000_000 + pid * 1_000_000),
      process: identity(pid),
      stateIntervalMs: 0,
    });
    const model = this.model;
    const { runtime } = buildAgent({
      store,
      workspace: this.workspace,
      model: {
        name: model.name,
        complete: (request) => (this.dead ? Promise.reject(new DeadProcessError('call the model')) : model.complete(request)),
      },
      approver: allowAllApprover,
      commands: this.commands,
      clock: tickingClock(1_800_000_000_000 + pid * 1_000_000),
      log: silentLog,
      ...(this.options.tools ? { tools: this.options.tools } : {}),
      newId: (() => {
        let n = 0;
        return () => `id-${pid}-${++n}`;
      })(),
      output: (event) => {
        if (event.type === 'records' && !this.dead) for (const r of event.records) this.acknowledged.set(r.seq, r);
      },
    });
    return { runtime, store };
  }

  /** A refusal checkRefused accepted: nothing acknowledged was lost, nothing ran twice, the run waits for a person. */
  refused(point: string, counts: { syncs: number; ops: number }): AgentPointResult {
    return { point, ok: true, problems: [], duplicates: 0, lostAcknowledged: 0, resumes: this.resumes, refused: true, ...counts };
  }

  async finish(runId: string, store: FileCheckpointStore, point: string, syncs: number, ops: number): Promise<AgentPointResult> {
    const state = await store.readRun(runId);
    const verdict = checkFinal({
      messages: state.messages,
      executions: this.commands.count(counterCommand(COUNTER)),
      notes: this.workspace.text(NOTES_FILE),
      requests: this.model.requests,
    });
    const report = await store.verify(runId);
    if (!report.ok) verdict.problems.push(`verify: ${JSON.stringify(report)}`);
    const refused = this.model.refused.map((r) => `the API would refuse a request: ${r.message}`);
    const problems = [...this.problems, ...verdict.problems, ...refused];
    return {
      point,
      ok: problems.length === 0,
      problems,
      duplicates: verdict.duplicates,
      lostAcknowledged: this.lost,
      resumes: this.resumes,
      syncs,
      ops,
    };
  }
}

async function attempt(run: () => Promise<RunOutcome>): Promise<RunOutcome | Error> {
  try {
    return await run();
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/**
 * Power goes out before fsync `atSync` of the first process; each later process may be cut too
 * (seeded). After each cut a fresh process opens what survived, checks every acknowledged
 * record is there, and resumes.
 */
export async function powerLossAgentPoint(
  first: CrashPoint,
  seed: number,
  resumeCuts = 0,
  options: AgentRigOptions = {},
): Promise<AgentPointResult> {
  const world = new World(options);
  const prng = new Prng(seed);
  const point = `${JSON.stringify(first)} seed ${seed}`;
  const disk0 = new MemStoreFs();
  await prepareRoot(disk0);
  let fs = new CrashingFs(disk0, first);
  let runId = 'agent-run-1';
  let pid = 1;
  let { runtime, store } = world.runtime(fs, pid);
  let outcome = await attempt(() => runtime.start({ runId, task: 'edit the notes and count', settings: AGENT_SETTINGS }));
  const firstCounts = { syncs: fs.syncs, ops: fs.ops };
  for (let n = 0; n < MAX_ATTEMPTS; n++) {
    if (!(outcome instanceof Error) && outcome.status === 'completed' && !fs.lostPower)
      return world.finish(runId, store, point, firstCounts.syncs, firstCounts.ops);
    if (!fs.lostPower) {
      world.problems.push(
        `stopped without a cut: ${outcome instanceof Error ? describeError(outcome) : `${outcome.status}: ${outcome.reason}`}`,
      );
      break;
    }
    world.dead = true;
    const { fs: disk, report } = fs.restart(prng.int(2 ** 31));
    const reader = new FileCheckpointStore({ fs: disk, root: STORE_ROOT, process: identity(0) });
    const recovered = await reader
      .readRecords(runId)
      .catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
    if (recovered instanceof StoreError && recovered.code === 'damaged' && world.acknowledged.size > 0) {
      const garbled = report.choices.writes.includes('garbled');
      const check = await checkRefused(reader, runId, garbled, (intact) => checkAcknowledged(intact, world.acknowledged)[0]);
      if (!check.ok) world.problems.push(check.problem ?? 'refused');
      else return world.refused(point, firstCounts);
      break;
    }
    if (recovered instanceof Error) {
      if (world.acknowledged.size > 0) world.problems.push(`the run does not open after a cut: ${describeError(recovered)}`);
    } else {
      const lost = checkAcknowledged(recovered, world.acknowledged);
      world.lost += lost.length;
      world.problems.push(...lost);
    }
    if (world.problems.length > 0) break;
    pid += 1;
    world.dead = false;
    const cut: CrashPoint = n < resumeCuts ? { atSync: 1 + prng.int(40) } : { never: true };
    fs = new CrashingFs(disk, cut);
    ({ runtime, store } = world.runtime(fs, pid));
    if (recovered instanceof Error) {
      // Nothing was acknowledged: the run never existed as far as anyone was told. Start again.
      runId = `agent-run-${pid}`;
      world.acknowledged.clear();
      outcome = await attempt(() => runtime.start({ runId, task: 'edit the notes and count', settings: AGENT_SETTINGS }));
    } else {
      world.resumes += 1;
      outcome = await attempt(() => runtime.resume(runId));
    }
  }
  if (world.problems.length === 0) world.problems.push(`not completed after ${MAX_ATTEMPTS} attempts`);
  return {
    point,
    ok: false,
    problems: world.problems,
    duplicates: 0,
    lostAcknowledged: world.lost,
    resumes: world.resumes,
    ...firstCounts,
  };
}

/**
 * An I/O error at operation `atOp` (sticky: every op fails until cleared): the run stops with a
 * clear error naming the code; once cleared, the same process resumes it to completion.
 */
export async function ioErrorAgentPoint(atOp: number, code: FaultCode, sticky = true): Promise<AgentPointResult> {
  const world = new World();
  const disk = new MemStoreFs();
  await prepareRoot(disk);
  const fs = new FailingFs(disk, { code, atOp, sticky, partialWrite: true });
  const { runtime, store } = world.runtime(fs, 1);
  const point = `${code} at op ${atOp}${sticky ? ' (sticky)' : ''}`;
  let runId = 'agent-run-1';
  const outcome = await attempt(() => runtime.start({ runId, task: 'edit the notes and count', settings: AGENT_SETTINGS }));
  const counts = { syncs: 0, ops: fs.ops };
  if (fs.fired) {
    const text = outcome instanceof Error ? describeError(outcome) : (outcome.reason ?? '');
    if (!(outcome instanceof Error) && outcome.status === 'completed') {
      // The store absorbed the fault (listing cache, closing): fine when nothing is lost.
    } else if (!text.includes(code)) world.problems.push(`the stop does not name ${code}: ${text}`);
    else if (!(outcome instanceof Error) && outcome.status !== 'paused') world.problems.push(`status ${outcome.status} instead of paused`);
  }
  fs.clear();
  if (outcome instanceof Error || outcome.status !== 'completed') {
    world.resumes += 1;
    let resumed = await attempt(() => runtime.resume(runId));
    if (resumed instanceof Error && world.acknowledged.size === 0) {
      runId = 'agent-run-2';
      resumed = await attempt(() => runtime.start({ runId, task: 'edit the notes and count', settings: AGENT_SETTINGS }));
    }
    if (resumed instanceof Error || resumed.status !== 'completed') {
      world.problems.push(
        `resume after the fault was cleared: ${resumed instanceof Error ? describeError(resumed) : `${resumed.status}: ${resumed.reason}`}`,
      );
      return { point, ok: false, problems: world.problems, duplicates: 0, lostAcknowledged: 0, resumes: world.resumes, ...counts };
    }
  }
  const recovered = await store.readRecords(runId);
  const lost = checkAcknowledged(recovered, world.acknowledged);
  world.lost += lost.length;
  world.problems.push(...lost);
  return world.finish(runId, store, point, counts.syncs, counts.ops);
}

/** Fsyncs and operations of one clean run (no fault). */
export async function measureAgentRun(): Promise<AgentPointResult> {
  return powerLossAgentPoint({ never: true }, 1);
}
