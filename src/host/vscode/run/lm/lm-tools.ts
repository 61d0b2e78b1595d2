import * as vscode from 'vscode';
import type { AnyTool } from '../../../../core/tools/registry';
import { externalToolName } from '../../../node/mcp/classify';
import { externalTool } from '../../../node/mcp/external-tool';

// VS Code's language-model tools (vscode.lm.tools: other extensions' tools, and the MCP servers
// VS Code manages) as registry tools `vscode__name`, called with vscode.lm.invokeTool. The stable
// API carries no annotations, so each is non-idempotent with policy ask unless the person's
// agentCheckpoints.toolPolicies says otherwise.

function partText(part: unknown): string {
  if (part instanceof vscode.LanguageModelTextPart) return part.value;
  return '[non-text content omitted]';
}

/** The tools the person named (agentCheckpoints.languageModelTools; "*" for all). */
export function languageModelTools(allowed: readonly string[], taken: Set<string>): AnyTool[] {
  if (allowed.length === 0) return [];
  const all = allowed.includes('*');
  return vscode.lm.tools
    .filter((info) => all || allowed.includes(info.name))
    .map((info) => {
      const name = externalToolName('vscode', info.name, taken);
      taken.add(name);
      return externalTool({
        name,
        where: `VS Code tool ${info.name}`,
        description: info.description,
        inputSchema: info.inputSchema ?? { type: 'object' },
        hints: undefined,
        async call(input, signal) {
          const cancel = new vscode.CancellationTokenSource();
          const onAbort = (): void => cancel.cancel();
          signal.addEventListener('abort', onAbort);
          try {
            const result = await vscode.lm.invokeTool(info.name, { input, toolInvocationToken: undefined }, cancel.token);
            return { content: result.content.map(partText).join('\n') };
          } finally {
            signal.removeEventListener('abort', onAbort);
            cancel.dispose();
          }
        },
      });
    });
}
