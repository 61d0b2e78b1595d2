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

/**
 * `--yes` approves calls whose policy is `ask`, and never answers whether to run again a
 * non-idempotent call whose outcome is unknown. Without --yes and without a terminal, nobody
 * can approve: the run pauses.
 */
export function createCliApprover(options: { yes: boolean; interactive: boolean }): Approver {
  return {
    async approve(request): Promise<ApprovalDecision> {
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
