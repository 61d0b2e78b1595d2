import { z } from 'zod';

// A tool's declared inverse (how to undo its effect by another call), as the ledger records it:
// the inverse tool and an input template whose placeholders read the original call's input and
// result. The template comes from configuration: it is checked strictly where it enters.
// Rendering it is restore/compensation.ts.

export const PLACEHOLDER = /\{\{([^{}]*)\}\}/g;
/** `input.a.b` or `result.a.0`: the call's input or its result parsed as JSON, then keys or indexes. */
export const REFERENCE = /^(input|result)((?:\.[A-Za-z_][A-Za-z0-9_-]{0,63}|\.\d{1,4}){1,8})$/;
const MAX_TEMPLATE_CHARS = 4096;
const MAX_VALUE_CHARS = 2000;

/** A template string: text with `{{input.x}}` / `{{result.x}}` placeholders, and no other braces. */
const TemplateString = z
  .string()
  .max(MAX_VALUE_CHARS)
  .refine((text) => [...text.matchAll(PLACEHOLDER)].every((m) => REFERENCE.test(m[1]!.trim())), {
    message: 'a placeholder is {{input.<field>}} or {{result.<field>}}',
  })
  .refine((text) => !text.replace(PLACEHOLDER, '').includes('{{') && !text.replace(PLACEHOLDER, '').includes('}}'), {
    message: 'unmatched {{ or }}',
  });

export type Template = string | number | boolean | null | Template[] | { [key: string]: Template };
const TemplateValue: z.ZodType<Template> = z.lazy(() =>
  z.union([TemplateString, z.number(), z.boolean(), z.null(), z.array(TemplateValue).max(50), z.record(z.string().max(64), TemplateValue)]),
);

/** An inverse call's input template: values, with placeholders in its strings. */
export const InverseInput = z
  .record(z.string().max(64), TemplateValue)
  .refine((input) => JSON.stringify(input).length <= MAX_TEMPLATE_CHARS, { message: `larger than ${MAX_TEMPLATE_CHARS} characters` });

/** A tool's declared inverse: the tool to call (its registry name) and its input, from the original call's input and result. */
export const Inverse = z.strictObject({ tool: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/), input: InverseInput });
export type Inverse = z.infer<typeof Inverse>;
