// A test extension for the host suite lm.test.ts: registers a chat model (vendor "acfixture")
// that plays a script the test sets, and a language-model tool that counts its calls.
const vscode = require('vscode');

const state = { script: [], requests: [], toolCalls: [] };

function partsOf(message) {
  return message.content.map((part) => {
    if (part instanceof vscode.LanguageModelTextPart) return { text: part.value };
    if (part instanceof vscode.LanguageModelToolCallPart) return { toolCall: part.name, callId: part.callId, input: part.input };
    if (part instanceof vscode.LanguageModelToolResultPart)
      return {
        toolResult: part.callId,
        text: part.content.map((c) => (c instanceof vscode.LanguageModelTextPart ? c.value : '?')).join(''),
      };
    return { other: true };
  });
}

function activate(context) {
  const provider = {
    provideLanguageModelChatInformation: () => [
      {
        id: 'acfixture-model',
        name: 'AC Fixture Model',
        family: 'acfixture',
        version: '1',
        maxInputTokens: 100000,
        maxOutputTokens: 4096,
        capabilities: { toolCalling: true },
      },
    ],
    async provideLanguageModelChatResponse(model, messages, options, progress) {
      state.requests.push({
        messages: messages.map((m) => ({ role: m.role, parts: partsOf(m) })),
        tools: (options.tools || []).map((t) => t.name),
      });
      const step = state.script.shift() || { text: 'the fixture script is exhausted' };
      if (step.text !== undefined) {
        // Streamed in two parts, as a real model streams.
        progress.report(new vscode.LanguageModelTextPart(step.text.slice(0, 3)));
        progress.report(new vscode.LanguageModelTextPart(step.text.slice(3)));
      }
      if (step.toolCall !== undefined) progress.report(new vscode.LanguageModelToolCallPart(step.callId, step.toolCall, step.input));
    },
    provideTokenCount: async (model, text) => Math.ceil((typeof text === 'string' ? text : JSON.stringify(text)).length / 4),
  };
  context.subscriptions.push(vscode.lm.registerLanguageModelChatProvider('acfixture', provider));
  context.subscriptions.push(
    vscode.lm.registerTool('acfixture_counter', {
      invoke(options) {
        state.toolCalls.push(options.input);
        return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(`count ${state.toolCalls.length}`)]);
      },
    }),
  );
  return {
    setScript(steps) {
      state.script = [...steps];
      state.requests = [];
      state.toolCalls = [];
    },
    state,
  };
}

module.exports = { activate };
