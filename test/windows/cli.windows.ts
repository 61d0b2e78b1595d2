import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO, setupWine, startWineNode, winPath, wineNode, type WineNode } from './wine';

// The CLI's journeys under Node for Windows (Wine), against the replay provider: what a Windows
// user does, checked from outside (the files' bytes, and `status --json` of the run).

type Block = Record<string, unknown>;
const use = (id: string, name: string, input: Record<string, unknown>): Block => ({ type: 'tool_use', id, name, input });
const turn = (...content: Block[]): string =>
  JSON.stringify({ content, stop_reason: content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn' });
const say = (text: string): Block => ({ type: 'text', text });

const CLI = join(REPO, 'dist', 'cli.js');
const NOTES = 'one\r\ntwo\r\nthree\r\n';

/** Six steps: list and find, read in another case and search, edit in a third case, write under a `\` path, a command, the end. */
const SCRIPT = [
  turn(say('Looking around.'), use('t1', 'list_dir', { path: '.' }), use('t2', 'find_files', { pattern: '**/*.txt' })),
  turn(use('t3', 'read_file', { path: 'notes.txt' }), use('t4', 'search_text', { pattern: 'two' })),
  turn(use('t5', 'edit_file', { path: 'NOTES.TXT', old_string: 'two', new_string: 'TWO' })),
  turn(use('t6', 'write_file', { path: 'out\\made.txt', content: 'made\n' })),
  turn(use('t7', 'run_command', { command: 'echo hello from cmd, Grüße' })),
  turn(say('Done.')),
].join('\n');

/** Every file of the store as text (journal lines and blobs), to find what a tool result held. */
function storeText(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'utf8'))
    .join('\n');
}

interface Status {
  status: string;
  run: { runId: string };
  ledger: { callId: string; toolName: string; status: string }[];
  patches: { path: string; op: string; toolCallId: string }[];
}

describe('the CLI under Node for Windows (Wine)', function () {
  let wine: WineNode;
  let base = '';
  let ws = '';
  let store = '';
  let replay = '';

  before(function () {
    const found = setupWine();
    if (typeof found === 'string') this.skip();
    wine = found as WineNode;
  });

  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'win-cli-'));
    ws = join(base, 'ws');
    store = join(base, 'store');
    replay = join(base, 'replay.jsonl');
    mkdirSync(ws);
    writeFileSync(join(ws, 'Notes.txt'), NOTES);
    writeFileSync(replay, SCRIPT);
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  const common = (): string[] => ['--workspace', winPath(ws), '--store', winPath(store), '--trust'];
  const replayArgs = (): string[] => ['--provider', 'replay', '--replay', winPath(replay), '--yes'];

  async function cli(...args: string[]): Promise<{ code: number | null; output: string }> {
    return wineNode(wine, [winPath(CLI), ...args]);
  }

  async function status(runId?: string): Promise<Status> {
    const r = await cli(
      'status',
      '--workspace',
      winPath(ws),
      '--store',
      winPath(store),
      ...(runId !== undefined ? ['--run', runId] : []),
      '--json',
    );
    assert.equal(r.code, 0, r.output);
    return JSON.parse(r.output.slice(r.output.indexOf('{'), r.output.lastIndexOf('}') + 1)) as Status;
  }

  it('a run: a CRLF file edited under another spelling keeps CRLF, a write under a `\\` path, list, find, search and a command succeed', async () => {
    const run = await cli('run', ...common(), '--task', 'tidy the notes', ...replayArgs());
    assert.equal(run.code, 0, run.output);
    assert.equal(readFileSync(join(ws, 'Notes.txt'), 'utf8'), 'one\r\nTWO\r\nthree\r\n', 'the edit kept CRLF');
    assert.equal(readFileSync(join(ws, 'out', 'made.txt'), 'utf8'), 'made\n');
    const s = await status();
    assert.equal(s.status, 'completed');
    assert.deepEqual(
      s.ledger.filter((e) => e.status !== 'succeeded').map((e) => `${e.toolName}: ${e.status}`),
      [],
      run.output,
    );
    assert.deepEqual(s.patches.map((p) => p.path).sort(), ['Notes.txt', 'out/made.txt'], 'one canonical spelling in the journal');
    // The command's output as the model got it: cmd.exe wrote it in the ANSI code page.
    const stored = storeText(store);
    assert.ok(stored.includes('hello from cmd, Grüße\\n'), 'the result holds the output decoded, \\r\\n as a line end');
    assert.match(stored, /This command ran WITHOUT a sandbox \(no sandbox is supported on win32\)/);
  });

  it('files restored to the start of each step are byte-identical to what they were then; a fork given a new instruction goes on to the same end', async () => {
    const run = await cli('run', ...common(), '--task', 'tidy the notes', ...replayArgs());
    assert.equal(run.code, 0, run.output);
    const { run: parent } = await status();
    // What the files held at the start of each step (the edit is step 3, the write step 4).
    const expected: Record<number, { notes: string; made: boolean }> = {
      1: { notes: NOTES, made: false },
      3: { notes: NOTES, made: false },
      4: { notes: 'one\r\nTWO\r\nthree\r\n', made: false },
      5: { notes: 'one\r\nTWO\r\nthree\r\n', made: true },
    };
    for (const step of [5, 4, 3, 1]) {
      const fork = await cli('fork', ...common(), '--run', parent.runId, '--step', String(step), '--files', 'restore', '--json');
      assert.equal(fork.code, 0, fork.output);
      assert.equal(readFileSync(join(ws, 'Notes.txt'), 'utf8'), expected[step]!.notes, `Notes.txt at step ${step}`);
      assert.equal(existsSync(join(ws, 'out', 'made.txt')), expected[step]!.made, `out/made.txt at step ${step}`);
    }
    const fork = await cli('fork', ...common(), '--run', parent.runId, '--step', '3', '--json');
    const forkId = (JSON.parse(fork.output.slice(fork.output.indexOf('{'))) as { runId: string }).runId;
    const resumed = await cli('continue', ...common(), '--run', forkId, '--task', 'do it again', ...replayArgs());
    assert.equal(resumed.code, 0, resumed.output);
    assert.equal(readFileSync(join(ws, 'Notes.txt'), 'utf8'), 'one\r\nTWO\r\nthree\r\n');
    assert.equal(readFileSync(join(ws, 'out', 'made.txt'), 'utf8'), 'made\n');
    assert.equal((await status(forkId)).status, 'completed');
  });

  it('killed mid-command and resumed: the command never runs twice, and the model hears its status is unknown', async () => {
    const slow = `node -e "require('fs').appendFileSync('ran.txt', 'x\\n'); setTimeout(() => {}, 6000)"`;
    writeFileSync(replay, [turn(use('k1', 'run_command', { command: slow })), turn(say('Checked.'))].join('\n'));
    const started = startWineNode(wine, [winPath(CLI), 'run', ...common(), '--task', 'run it', ...replayArgs()]);
    const deadline = Date.now() + 60_000;
    while (!existsSync(join(ws, 'ran.txt')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.ok(existsSync(join(ws, 'ran.txt')), `the command never started: ${started.outputNow()}`);
    started.proc.kill('SIGKILL');
    await started.done;
    const resumed = await cli('resume', ...common(), ...replayArgs());
    assert.equal(resumed.code, 0, resumed.output);
    // A second run would have appended at once: the first one's process may still be sleeping.
    assert.equal(readFileSync(join(ws, 'ran.txt'), 'utf8'), 'x\n', 'ran once');
    const s = await status();
    assert.equal(s.status, 'completed');
    assert.deepEqual(
      s.ledger.map((e) => `${e.callId}: ${e.status}`),
      ['k1: uncertain'],
    );
  });
});
