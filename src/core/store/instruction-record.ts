import { z } from 'zod';

/**
 * A person's new instruction to a run that had stopped (completed, failed or paused): the run
 * goes on in the same history. It re-opens a run that had ended (its run_end no longer counts);
 * the user message itself is the message record of the same commit group, followed by an
 * `instruction` save point. `raised`: the limit raised with it because the run had reached it.
 */
export const InstructionRecord = z.object({
  v: z.number().int().positive(),
  at: z.number(),
  type: z.literal('instruction'),
  text: z.string().min(1).max(20_000),
  /** The status the run had when the instruction came. */
  after: z.enum(['completed', 'failed', 'paused', 'cancelled']),
  raised: z.object({ kind: z.enum(['turns', 'tokens', 'cost']), from: z.number().positive(), to: z.number().positive() }).optional(),
});

export type InstructionRecord = z.infer<typeof InstructionRecord>;
