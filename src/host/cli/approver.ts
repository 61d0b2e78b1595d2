import { createInterface } from 'node:readline/promises';
import type { ApprovalDecision, Approver, UncertainChoice } from '../../core/ports';
import { ApprovalUnavailableError } from '../../core/runtime/errors';

async function ask(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await rl.question(question)).trim().toLowerCase();
  } finally {
    rl.close();
  }
}

/** A write to a protected path: only a person at the terminal approves it, never `--yes`. */
async function askProtected(toolName: string, summary: string, reason: string, interactive: boolean): Promise<ApprovalDecision> {
  if (!interactive) throw new ApprovalUnavailableError(`${reason}; --yes does not approve it: run again from a terminal`);
  const answer = await ask(`${reason}.\napprove ${toolName}: ${summary}? [y]es once / [n]o: `);
  return answer === 'y' || answer === 'yes' ? 'allow_once' : 'deny';
}

/**
 * `--yes` approves calls whose policy is `ask` (never a write to a protected path), and never answers whether to run again a
 * non-idempotent call whose outcome is unknown. Without --yes and without a terminal, nobody
 * can approve: the run pauses.
 */
export function createCliApprover(options: { yes: boolean; interactive: boolean }): Approver {
  return {
    async approve(request): Promise<ApprovalDecision> {
      if (request.reason !== undefined) return askProtected(request.toolName, request.summary, request.reason, options.interactive);
      if (options.yes) return 'allow_once';
      if (!options.interactive) throw new ApprovalUnavailableError('run again with --yes to approve, or from a terminal');
      const answer = await ask(`approve ${request.toolName}: ${request.summary}? [y]es once / [a]ll of this tool in this run / [n]o: `);
      if (answer === 'a' || answer === 'all') return 'allow_for_run';
      return answer === 'y' || answer === 'yes' ? 'allow_once' : 'deny';
    },
    async askUncertain(request): Promise<UncertainChoice | null> {
      if (options.yes || !options.interactive) return null;
      const answer = await ask(
        `${request.toolName} (${request.summary}) was interrupted; it may or may not have taken effect. [r]un again / [m]ark as done / report [u]nknown to the model: `,
      );
      if (answer === 'r') return 'run_again';
      if (answer === 'm') return 'mark_done';
      return 'report_unknown';
    },
  };
}
