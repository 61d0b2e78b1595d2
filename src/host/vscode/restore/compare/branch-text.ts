import type { Divergence } from '../../../../core/restore/compare';
import type { RunHeader, StepRow } from '../../../../protocol/viewModel';
import { runTitle } from '../../../../words/run-title';

// A branch's steps from where it parts from another, as plain text: the two texts side by side in
// a diff editor are the comparison of the steps (what is the same lines up, what differs shows).

const indent = (text: string, by: string): string =>
  text
    .split('\n')
    .map((line) => (line.trim() === '' ? '' : `${by}${line}`))
    .join('\n');

function stepText(step: StepRow): string {
  const lines = [`Step ${step.stepId}`];
  if (step.instruction !== undefined) lines.push(indent(`Instruction: ${step.instruction}`, '  '));
  if (step.raised !== undefined) lines.push(indent(step.raised, '  '));
  if (step.told !== undefined) lines.push(indent(`Told the model: ${step.told}`, '  '));
  if (step.text !== undefined) lines.push(indent(step.text, '  '));
  for (const call of step.calls) {
    lines.push(`  - ${call.summary} · ${call.status}`);
  }
  if (step.compacted) lines.push('  (history compacted here)');
  return lines.join('\n');
}

/** Where the branch stands: its run, its parent, and what it shares with the other one. */
function headerText(header: RunHeader, other: string, at: Divergence): string {
  const lines = [`Run ${header.runId}: ${runTitle(header, () => undefined)}`, `Status: ${header.status}`];
  if (header.parent) lines.push(`Fork of run ${header.parent.runId} from the start of step ${header.parent.step}`);
  lines.push(
    at.base === undefined
      ? `Shares no step with run ${other}.`
      : at.step <= 1
        ? `Parts from run ${other} at its first step.`
        : `Shares ${at.step === 2 ? 'step 1' : `steps 1 to ${at.step - 1}`} with run ${other} (from run ${at.base}); shown from step ${at.step} on.`,
  );
  return lines.join('\n');
}

/** The branch `header`/`steps` from the divergence with run `other` on, as the text one side of the diff shows. */
export function branchText(header: RunHeader, steps: readonly StepRow[], other: string, at: Divergence): string {
  const shown = steps.filter((s) => s.stepId >= at.step);
  const body = shown.length > 0 ? shown.map(stepText).join('\n\n') : '(no step after the divergence)';
  return `${headerText(header, other, at)}\n\n${body}\n`;
}
