import { z } from 'zod';
import type { Inverse } from '../../../core/ledger/inverse';
import type { AnyTool } from '../../../core/tools/registry';
import type { CommandChanges } from '../../../core/ports';
import { applyCommandChanges } from '../../../core/tools/command-changes';
import type { ToolOutput } from '../../../core/tools/types';
import { classifyTool, externalDescription, type ToolHints } from './classify';

// A tool defined outside the extension (an MCP server's, or one of VS Code's language-model
// tools) as a registry entry: its JSON schema checks the model's input where it enters, its
// annotations give its ledger class, and its output is bounded text like a built-in tool's.

export const MAX_EXTERNAL_OUTPUT_CHARS = 64 * 1024;
const MAX_SCHEMA_CHARS = 64 * 1024;

/** What a call answered, with the change set of the server's view (applied as patches of the call) or a note about it. */
export interface ExternalOutput extends ToolOutput {
  readonly changes?: CommandChanges;
  readonly note?: string;
}

export interface ExternalToolSpec {
  /** The registry name (already `server__tool` and sanitized). */
  readonly name: string;
  /** "MCP server memory", "VS Code tool": who answers the call. */
  readonly where: string;
  readonly description: string | undefined;
  readonly inputSchema: unknown;
  readonly hints: ToolHints | undefined;
  /** Its declared inverse (registry names), from the server's config. */
  readonly inverse?: Inverse;
  /** The person trusts the server's read-only tools to read only (`parallelReads` in their own config): they may run beside other reads. */
  readonly trustedReads?: boolean;
  call(input: Record<string, unknown>, signal: AbortSignal): Promise<ExternalOutput>;
}

export class ExternalToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExternalToolError';
  }
}

const AnyObject = z.record(z.string(), z.unknown());

/** The JSON schema as the model sees it: an object schema, without `$schema`. */
function modelSchema(name: string, schema: unknown): Record<string, unknown> {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return { type: 'object' };
  if (JSON.stringify(schema).length > MAX_SCHEMA_CHARS)
    throw new ExternalToolError(`${name}: its input schema is larger than ${MAX_SCHEMA_CHARS} characters`);
  const { $schema: _ignored, ...rest } = schema as Record<string, unknown>;
  return rest['type'] === 'object' ? rest : { ...rest, type: 'object' };
}

/** A zod check of the input from the JSON schema; a schema zod cannot read still requires an object (the server checks the rest). */
function inputCheck(schema: Record<string, unknown>): z.ZodType<Record<string, unknown>> {
  try {
    return z.fromJSONSchema(schema as z.core.JSONSchema.JSONSchema) as z.ZodType<Record<string, unknown>>;
  } catch {
    return AnyObject;
  }
}

export function boundText(text: string): string {
  if (text.length <= MAX_EXTERNAL_OUTPUT_CHARS) return text;
  return `${text.slice(0, MAX_EXTERNAL_OUTPUT_CHARS)}\n[output truncated: ${text.length} characters in all]`;
}

function summaryOf(name: string, warnings: readonly string[], input: unknown): string {
  const json = JSON.stringify(input) ?? '';
  const shown = json.length > 200 ? `${json.slice(0, 200)}…` : json;
  return `call ${name}${warnings.length > 0 ? ` [${warnings.join(', ')}]` : ''} ${shown}`;
}

export function externalTool(spec: ExternalToolSpec): AnyTool {
  const schema = modelSchema(spec.name, spec.inputSchema);
  const cls = classifyTool(spec.hints, spec.where);
  const tool: AnyTool = {
    name: spec.name,
    description: externalDescription(spec.where, spec.description, cls.warnings),
    input: inputCheck(schema),
    inputSchema: schema,
    idempotency: cls.idempotency,
    replayPolicy: cls.replayPolicy,
    sideEffects: cls.sideEffects,
    ...(spec.trustedReads === true && spec.hints?.readOnlyHint === true ? { concurrentRead: true } : {}),
    compensation: spec.inverse ? `call ${spec.inverse.tool} (declared in the server's config)` : cls.compensation,
    ...(spec.inverse ? { inverse: spec.inverse } : {}),
    summarize: (input: unknown) => summaryOf(spec.name, cls.warnings, input),
    async execute(input: Record<string, unknown>, ctx) {
      const output = await spec.call(input, ctx.signal);
      const applied = output.changes !== undefined ? await applyCommandChanges(ctx, output.changes) : undefined;
      const tail = [output.note, applied].filter((t) => t !== undefined).join('\n');
      return {
        content: boundText(output.content) + (tail !== '' ? `\n--- workspace changes ---\n${tail}` : ''),
        ...(output.isError === true ? { isError: true } : {}),
        ...(output.changes !== undefined ? { afterRecorded: output.changes.discard } : {}),
      };
    },
  };
  return tool;
}
