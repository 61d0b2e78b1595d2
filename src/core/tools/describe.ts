import type { ToolRegistry } from './registry';

/**
 * One call in human terms ("edit src/greet.js", "run: node test.js"), from its tool's own
 * summary. A tool this build does not know, or input its schema refuses, is named as it is.
 */
export function describeCall(tools: ToolRegistry, name: string, input: unknown): string {
  const tool = tools.get(name);
  if (tool === undefined) return `${name} (unknown tool)`;
  const parsed = tool.input.safeParse(input);
  return parsed.success ? tool.summarize(parsed.data) : `${name} (invalid input)`;
}
