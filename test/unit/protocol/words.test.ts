import { strict as assert } from 'node:assert';
import type { MessageParam } from '../../../src/core/model/messages';
import { commandOutcome, describeCall, modeWords, patchCounts, SANDBOX_WAY_OUT, sandboxBlock } from '../../../src/words/words';
import { assistantWords, toolResults, userWords } from '../../../src/host/vscode/timeline/view-history';
import { formatCommandResult } from '../../../src/core/tools/run-command';
import { readOnlyNote, type SandboxPlan } from '../../../src/host/node/sandbox/plan';
import { FILE_CHANGES_MARKER, isRuntimeNote } from '../../../src/core/runtime/recovery-note';
import { instructionChangeNote } from '../../../src/core/runtime/project-instructions';
import { firstLine, stepHeadline } from '../../../src/webview/rowContent';
import type { StepRow } from '../../../src/protocol/viewModel';

const call = (toolName: string, input: unknown, extra: Partial<Parameters<typeof describeCall>[0]> = {}) =>
  describeCall({ toolName, input, added: 0, removed: 0, hasPatches: false, denied: false, ...extra });

describe('protocol words: calls in human terms', () => {
  it('says what each tool did', () => {
    assert.equal(call('edit_file', { path: 'src/greet.js' }, { added: 1, removed: 1, hasPatches: true }), 'edit src/greet.js +1 -1');
    assert.equal(call('read_file', { path: 'README.md' }), 'read README.md');
    assert.equal(
      call('run_command', { command: 'node test.js' }, { result: 'exit code 1 after 40 ms\n--- stderr ---\nfail' }),
      'run `node test.js` -> exit 1',
    );
    assert.equal(
      call('run_command', { command: 'sleep 9' }, { result: 'timed out (its process group was ended) after 9 ms' }),
      'run `sleep 9` -> timed out',
    );
    assert.equal(call('run_command', { command: 'node test.js' }), 'run `node test.js`', 'no outcome before it ran');
    assert.equal(call('search_text', { pattern: 'greet' }), 'search "greet"');
    assert.equal(call('write_file', { path: 'a.txt' }, { denied: true }), 'write a.txt (denied)');
    assert.equal(call('mystery_tool', { x: 1 }), 'mystery_tool');
  });

  it('reads exit codes, and nothing from a result that has none', () => {
    assert.equal(commandOutcome('exit code 0 after 3 ms'), 'exit 0');
    assert.equal(commandOutcome('killed by signal SIGKILL after 3 ms'), 'killed by signal SIGKILL');
    assert.equal(commandOutcome('some text'), undefined);
    assert.equal(commandOutcome(undefined), undefined);
  });
});

describe('protocol words: what was said', () => {
  const messages: MessageParam[] = [
    { role: 'user', content: 'fix it' },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'the test fails', signature: 's' },
        { type: 'text', text: '## Plan\nI will **edit** greet.js' },
        { type: 'tool_use', id: 'toolu_1', name: 'edit_file', input: { path: 'src/greet.js' } },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'edited' }] }] },
    { role: 'user', content: [{ type: 'text', text: 'now add a README line' }] },
  ];

  it('takes the model text and thinking of a range, the results by call and the person’s words', () => {
    assert.deepEqual(assistantWords(messages, 1, 2), { text: '## Plan\nI will **edit** greet.js', thinking: 'the test fails' });
    assert.deepEqual(assistantWords(messages, 2, 4), { text: '', thinking: '' });
    assert.equal(toolResults(messages).get('toolu_1'), 'edited');
    assert.equal(userWords(messages, 2, 4), 'now add a README line', 'tool results are not the person’s words');
  });

  it("the default model's words between tool calls, inside a thinking block of an answer with no text, are shown as its words", () => {
    const between: MessageParam[] = [
      { role: 'user', content: 'fix it' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Reading the test first.', signature: 's1' },
          { type: 'tool_use', id: 'toolu_2', name: 'read_file', input: { path: 'test.js' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: 'ok' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: '', signature: 's2' },
          { type: 'text', text: 'Done.' },
        ],
      },
    ];
    assert.deepEqual(assistantWords(between, 1, 2), { text: 'Reading the test first.', thinking: '' });
    assert.deepEqual(assistantWords(between, 3, 4), { text: 'Done.', thinking: '' }, 'an omitted (empty) thinking block adds nothing');
  });

  it('leaves the recovery note inside a tool result out of the call’s result', () => {
    const noted: MessageParam[] = [
      ...messages.slice(0, 2),
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            content: [
              { type: 'text', text: 'edited' },
              { type: 'text', text: '[recovery note] This run was interrupted and has been resumed.' },
            ],
          },
        ],
      },
    ];
    assert.equal(toolResults(noted, isRuntimeNote).get('toolu_1'), 'edited');
  });

  it('leaves out the notes the runtime adds to a new instruction', () => {
    const note = `${FILE_CHANGES_MARKER}\nFiles that changed since you last saw them:\n- a.txt: restored`;
    const told = instructionChangeNote(['AGENTS.md changed'])!;
    const instruction: MessageParam[] = [
      {
        role: 'user',
        content: [
          { type: 'text', text: note },
          { type: 'text', text: 'go on with the tests' },
          { type: 'text', text: told },
        ],
      },
    ];
    assert.equal(userWords(instruction, 0, 1, isRuntimeNote), 'go on with the tests');
    assert.equal(userWords(instruction, 0, 1), `${note}\n\ngo on with the tests\n\n${told}`, 'without the test every text block counts');
  });

  it('leads a step with the first line of the text, then its calls', () => {
    assert.equal(firstLine('\n## Plan\nmore'), 'Plan');
    assert.equal(firstLine('**Done**: all green'), 'Done: all green');
    const step = {
      stepId: 3,
      text: 'I will fix the greeting.\nDetails…',
      calls: [{ summary: 'edit src/greet.js +1 -1' }],
    } as unknown as StepRow;
    assert.equal(stepHeadline(step), 'I will fix the greeting. — edit src/greet.js +1 -1');
    assert.equal(stepHeadline({ ...step, text: undefined } as StepRow), 'edit src/greet.js +1 -1');
    assert.equal(stepHeadline({ ...step, text: undefined, calls: [] } as StepRow), 'Step 3');
    const asking = { ...step, text: undefined, calls: [], label: 'before_model' } as StepRow;
    assert.equal(stepHeadline(asking, true), 'Waiting for the model…');
    assert.equal(stepHeadline(asking, false), 'Model call cut off: no answer was recorded', 'a later step or a stopped run: it never came');
    assert.equal(stepHeadline({ ...step, instruction: 'add a README line' } as StepRow), 'You: add a README line');
  });
});

describe('a command the sandbox stopped reads as one', () => {
  const plan = {
    roots: ['/ws'],
    readOnly: [{ path: '/ws/.vscode', rule: 'protected path **/.vscode{,/**}' }],
  } as unknown as SandboxPlan;
  const result = (stderr: string, sandboxNote?: string): string =>
    formatCommandResult({
      exitCode: 1,
      signal: null,
      stdout: '',
      stderr,
      timedOut: false,
      truncated: false,
      durationMs: 5,
      ...(sandboxNote ? { sandboxNote } : {}),
    });

  it('the row names the rule without expanding, from the note the host writes', () => {
    const stderr = 'sh: 1: cannot create .vscode/settings.json: Read-only file system\n';
    const text = result(stderr, readOnlyNote(plan, stderr, 'bubblewrap'));
    assert.equal(sandboxBlock(text), 'blocked by the sandbox: .vscode is read-only (protected path **/.vscode{,/**})');
    const summary = describeCall({
      toolName: 'run_command',
      input: { command: 'echo x > .vscode/settings.json' },
      result: text,
      added: 0,
      removed: 0,
      hasPatches: false,
      denied: false,
    });
    assert.equal(
      summary,
      'run `echo x > .vscode/settings.json` -> blocked by the sandbox: .vscode is read-only (protected path **/.vscode{,/**})',
    );
    assert.match(SANDBOX_WAY_OUT, /write_file or edit_file.*switch the sandbox off/);
  });

  it('a refusal to start is a block too; an ordinary failure, or a no-sandbox line, is not', () => {
    const refusal =
      '/ws/.vscode is a protected path and a symbolic link (to /x); the sandbox cannot hold a link read-only (the command could replace it), so the command did not run. Replace the link.';
    assert.match(
      sandboxBlock(result('', refusal)) ?? '',
      /^blocked by the sandbox: \/ws\/\.vscode is a protected path and a symbolic link/,
    );
    assert.equal(sandboxBlock(result('make: *** [all] Error 2\n')), undefined);
    assert.equal(
      sandboxBlock(
        result('', 'This command ran WITHOUT a sandbox (the sandbox is switched off): it could read and change anything your user can.'),
      ),
      undefined,
    );
  });
});

describe('a patch row says what it changed, the executable bit included', () => {
  it('a mode-only patch reads "made executable"; one that changes lines and the bit reads both; others are unchanged', () => {
    const mode = modeWords({ execBefore: false, execAfter: true });
    assert.equal(mode, 'made executable');
    assert.equal(modeWords({ execBefore: true, execAfter: false }), 'no longer executable');
    assert.equal(modeWords({ execAfter: true }), undefined, 'a file created executable: its row says create');
    assert.equal(modeWords({}), undefined);
    assert.equal(patchCounts({ binary: false, added: 0, removed: 0, mode }), 'made executable');
    assert.equal(patchCounts({ binary: false, added: 2, removed: 1, mode }), '+2 −1 · made executable');
    assert.equal(patchCounts({ binary: true, added: 0, removed: 0 }), 'binary');
    assert.equal(patchCounts({ binary: false, added: 3, removed: 0 }), '+3 −0');
  });
});
