import type { WalkModel } from './model';
import type { WalkWorld } from './world';

// A sequence's end: every run that did not complete is taken on once the model answers
// normally again, the ways a person has: resume (a raised turn limit), a new instruction, and a
// fork from its latest step with a new instruction. A run none of them completes is stranded.

const never = () => new AbortController().signal;
const FINISH = 'Finish up, please.';

type Way = (world: WalkWorld, runId: string) => Promise<boolean>;

const resume: Way = async (world, runId) => {
  const { budget } = await world.process.store.readResumeState(runId);
  const maxTurns = Math.max(budget.turns, budget.maxTurns) + 3;
  return (await world.runtime().resume(runId, never(), { raise: { maxTurns } })).status === 'completed';
};

const instruction: Way = async (world, runId) =>
  (await world.runtime().continue(runId, FINISH, never(), { moreTurns: 3 })).status === 'completed';

const forkAndContinue: Way = async (world, runId) => {
  const state = await world.process.store.readRun(runId);
  const step = Math.max(1, ...state.checkpoints.map((c) => c.stepId));
  const { fork } = await world.restoreActions().fork(runId, { step }, 'keep');
  return (await world.runtime().continue(fork.runId, FINISH, never(), { moreTurns: 3 })).status === 'completed';
};

/** Whether one of the ways takes the run to completion; `tried` says what each did. */
async function takesOn(world: WalkWorld, runId: string, tried: string[]): Promise<boolean> {
  for (const [name, way] of [
    ['resume', resume],
    ['instruction', instruction],
    ['fork and continue', forkAndContinue],
  ] as const) {
    try {
      if (await way(world, runId)) return true;
      tried.push(`${name}: not completed`);
    } catch (error) {
      tried.push(`${name}: ${(error as Error).name}: ${(error as Error).message}`);
    }
  }
  return false;
}

/** The runs of a sequence none of the ways completes once the model answers normally, each with what was tried. */
export async function strandedRuns(world: WalkWorld, model: WalkModel, runs: readonly string[]): Promise<string[]> {
  model.finishing = true;
  const stranded: string[] = [];
  for (const runId of [...runs]) {
    const state = await world.process.store.readResumeState(runId);
    if (state.ended?.status === 'completed') continue;
    const tried: string[] = [];
    if (!(await takesOn(world, runId, tried))) stranded.push(`${runId} is stranded (${tried.join('; ')})`);
  }
  return stranded;
}
