import { z } from 'zod';
import type { Idempotency, ReplayPolicy } from '../../../core/ledger/schema';

// How an external tool (MCP, or VS Code's language-model tools) enters the ledger: its annotations
// (MCP `ToolAnnotations`) decide the idempotency class and the default replay policy. The
// annotations come from the server, so they are hints: the person's per-tool policy overrides them.

export const ToolHints = z
  .object({
    readOnlyHint: z.boolean().optional(),
    idempotentHint: z.boolean().optional(),
    destructiveHint: z.boolean().optional(),
    openWorldHint: z.boolean().optional(),
  })
  .loose();
export type ToolHints = z.infer<typeof ToolHints>;

export interface ToolClass {
  readonly idempotency: Idempotency;
  readonly replayPolicy: ReplayPolicy;
  readonly sideEffects: readonly string[];
  readonly compensation: string;
  /** The hints worth a person's attention, for the approval text: "destructive", "open world". */
  readonly warnings: readonly string[];
}

/**
 * readOnlyHint -> idempotent, policy auto (runs without asking, run again on resume);
 * idempotentHint -> idempotent, policy ask (it changes something, but running it twice is safe);
 * otherwise (or no annotations) -> non_idempotent, policy ask (never run again blindly).
 */
export function classifyTool(hints: ToolHints | undefined, where: string): ToolClass {
  const warnings = [
    ...(hints?.readOnlyHint !== true && hints?.destructiveHint !== false ? ['destructive'] : []),
    ...(hints?.openWorldHint !== false ? ['open world'] : []),
  ];
  if (hints?.readOnlyHint === true)
    return {
      idempotency: 'idempotent',
      replayPolicy: 'auto',
      sideEffects: ['none'],
      compensation: 'nothing to undo (read-only)',
      warnings,
    };
  const effect = `calls ${where}: may change state outside the workspace${warnings.length > 0 ? ` (${warnings.join(', ')})` : ''}`;
  if (hints?.idempotentHint === true)
    return { idempotency: 'idempotent', replayPolicy: 'ask', sideEffects: [effect], compensation: 'not reversible', warnings };
  return { idempotency: 'non_idempotent', replayPolicy: 'ask', sideEffects: [effect], compensation: 'not reversible', warnings };
}

/** The Anthropic tool-name pattern: 1-64 of letters, digits, _ and -. */
export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** `server__tool` with every other character turned into `_`, cut to 64; `taken` names get a numbered suffix. */
export function externalToolName(prefix: string, tool: string, taken: ReadonlySet<string>): string {
  const clean = (s: string): string => s.replace(/[^A-Za-z0-9_-]/g, '_');
  const base = `${clean(prefix)}__${clean(tool)}`.slice(0, 64);
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base.slice(0, 64 - String(n).length - 1)}_${n}`;
  return name;
}

const MAX_DESCRIPTION = 2_000;

/** C0 controls other than tab and newline, and DEL. */
function isControl(ch: string): boolean {
  const code = ch.charCodeAt(0);
  return (code < 0x20 && ch !== '\t' && ch !== '\n') || code === 0x7f;
}

/** A description from a server, bounded and labelled as the server's own words (it is untrusted input). */
export function externalDescription(where: string, description: string | undefined, warnings: readonly string[]): string {
  const text = [...(description ?? '')]
    .map((ch) => (isControl(ch) ? ' ' : ch))
    .join('')
    .trim();
  const cut = text.length > MAX_DESCRIPTION ? `${text.slice(0, MAX_DESCRIPTION)}…` : text;
  const flags = warnings.length > 0 ? ` [${warnings.join(', ')}]` : '';
  return `(${where}${flags}) ${cut}`.trim();
}
