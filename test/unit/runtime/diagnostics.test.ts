import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LedgerEntry } from '../../../src/core/ledger/schema';
import type { Diagnostic, Diagnostics } from '../../../src/core/ports';
import { diagnosticsText, NO_LANGUAGE_SERVICE, newDiagnostics } from '../../../src/core/runtime/diagnostics';
import { answer, harness, lastToolResults, reply, SETTINGS, toolUse, type Harness } from './harness';

// After a call's writes, the result names the editor's NEW problems in the files it wrote (once the
// language services settled), and the ledger entry records them for the Timeline and a reload.

const problem = (path: string, line: number, message: string, more: Partial<Diagnostic> = {}): Diagnostic => ({
  path,
  line,
  severity: 'error',
  message,
  ...more,
});

describe('diagnostics after writes: what is new', () => {
  it('a problem moved by lines added above it is not new; a new message, severity or code is', () => {
    const before = [problem('a.ts', 3, 'old'), problem('a.ts', 9, 'warned', { severity: 'warning', code: '1' })];
    const after = [
      problem('a.ts', 5, 'old'),
      problem('a.ts', 11, 'warned', { severity: 'warning', code: '1' }),
      problem('a.ts', 12, 'warned', { severity: 'error', code: '1' }),
      problem('a.ts', 13, 'warned', { severity: 'warning', code: '2' }),
      problem('a.ts', 2, 'fresh'),
    ];
    const found = newDiagnostics(before, after);
    assert.deepEqual(
      found.items.map((d) => `${d.line} ${d.severity} ${d.message} ${d.code ?? ''}`),
      ['2 error fresh ', '12 error warned 1', '13 warning warned 2'],
    );
    assert.equal(found.more, 0);
  });

  it('the same problem in another file, or reported once more than before, is new', () => {
    const before = [problem('a.ts', 1, 'dup')];
    const after = [problem('a.ts', 1, 'dup'), problem('a.ts', 4, 'dup'), problem('b.ts', 1, 'dup')];
    assert.deepEqual(
      newDiagnostics(before, after).items.map((d) => `${d.path}:${d.line}`),
      ['a.ts:4', 'b.ts:1'],
    );
  });

  it('errors come first, then by file and line; at most 20 are kept and the rest counted', () => {
    const after = [
      ...Array.from({ length: 15 }, (_, i) => problem('b.ts', i + 1, `w${i}`, { severity: 'warning' })),
      ...Array.from({ length: 10 }, (_, i) => problem('a.ts', 30 - i, `e${i}`)),
    ];
    const found = newDiagnostics([], after);
    assert.equal(found.items.length, 20);
    assert.equal(found.more, 5);
    assert.deepEqual(
      found.items.slice(0, 11).map((d) => `${d.severity} ${d.path}:${d.line}`),
      [...Array.from({ length: 10 }, (_, i) => `error a.ts:${21 + i}`), 'warning b.ts:1'],
    );
    const text = diagnosticsText(found);
    assert.match(text, /^The editor reports 25 new problems in the changed files:\n {2}a\.ts:21: error: e9\n/);
    assert.match(text, /\n {2}\+5 more$/);
    assert.equal(text.split('\n').length, 22);
  });

  it('a long message is cut, and the record passes the ledger schema', () => {
    const found = newDiagnostics([], [problem('a.ts', 1, 'x'.repeat(5000), { source: 'ts', code: '2322' })]);
    assert.ok(found.items[0]!.message.length <= 401);
    const entry = { ...baseEntry(), diagnostics: found };
    assert.deepEqual(LedgerEntry.parse(entry).diagnostics, found);
    assert.equal(LedgerEntry.parse(baseEntry()).diagnostics, undefined, 'an older entry without it still parses');
    assert.match(diagnosticsText(found), /a\.ts:1: error: x+… \(ts 2322\)/);
  });

  it('says so plainly when nothing new is reported', () => {
    assert.equal(diagnosticsText({ items: [], more: 0 }), 'The editor reports no new errors or warnings in the changed files.');
  });
});

function baseEntry(): LedgerEntry {
  return {
    callId: 't1',
    stepId: 1,
    toolName: 'edit_file',
    inputHash: 'h',
    status: 'succeeded',
    idempotency: 'conditional',
    replayPolicy: 'auto',
    sideEffects: [],
    plannedAt: 1,
    compensation: 'roll back',
  };
}

/**
 * A language service over the workspace on disk: every line holding `BAD` is an error there. Its
 * reports change only when `settled` is asked (as VS Code's change only after the services ran).
 */
class FakeService implements Diagnostics {
  readonly calls: string[] = [];
  private reported = new Map<string, Diagnostic[]>();
  constructor(
    private readonly root: string,
    private readonly fail?: 'snapshot' | 'settled',
  ) {}

  analyse(path: string): void {
    let text: string;
    try {
      text = readFileSync(join(this.root, path), 'utf8');
    } catch {
      text = '';
    }
    const found = text.split('\n').flatMap((line, i) => (line.includes('BAD') ? [problem(path, i + 1, `bad: ${line.trim()}`)] : []));
    this.reported.set(path, found);
  }

  /** Files it has not analysed yet are `unchecked` (as VS Code's services with a file no editor held). */
  async snapshot(paths: readonly string[]): Promise<{ reported: readonly Diagnostic[]; unchecked: readonly string[] }> {
    this.calls.push(`snapshot ${paths.join(',')} ${this.fileText(paths[0]!)}`);
    if (this.fail === 'snapshot') throw new Error('no problems today');
    return { reported: paths.flatMap((p) => this.reported.get(p) ?? []), unchecked: paths.filter((p) => !this.reported.has(p)) };
  }

  /** Files it does not look at (as VS Code's TypeScript with a file in no editor tab). */
  readonly ignored = new Set<string>();

  async settled(paths: readonly string[], signal: AbortSignal): Promise<{ reported: readonly Diagnostic[]; unchecked: readonly string[] }> {
    this.calls.push(`settled ${paths.join(',')} aborted=${signal.aborted}`);
    if (this.fail === 'settled') throw new Error('the service died');
    for (const path of paths) if (!this.ignored.has(path)) this.analyse(path);
    return { reported: paths.flatMap((p) => this.reported.get(p) ?? []), unchecked: paths.filter((p) => this.ignored.has(p)) };
  }

  private fileText(path: string): string {
    try {
      return JSON.stringify(readFileSync(join(this.root, path), 'utf8'));
    } catch {
      return 'absent';
    }
  }
}

describe('diagnostics after writes: the core path with a fake service', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  const EDIT = toolUse('t1', 'edit_file', { path: 'a.ts', old_string: 'const a = 1;', new_string: 'const z = 0;\nconst a = BAD;' });

  it('names only the new problem, at its line, and records it on the ledger entry after the write', async () => {
    h = await harness({ files: { 'a.ts': 'const a = 1;\nconst b = BAD;\n' }, script: [reply([EDIT]), answer('done')] });
    const service = new FakeService(h.root);
    service.analyse('a.ts');
    const outcome = await h.runtime({ diagnostics: service }).start({ task: 'x', settings: SETTINGS });
    assert.equal(outcome.status, 'completed');
    assert.deepEqual(service.calls, [`snapshot a.ts ${JSON.stringify('const a = 1;\nconst b = BAD;\n')}`, 'settled a.ts aborted=false']);
    const [result] = lastToolResults(h.fake, 1);
    assert.equal(
      result!.content,
      'edited a.ts\n\nThe editor reports 1 new problem in the changed files:\n  a.ts:2: error: bad: const a = BAD;',
      'the problem that moved from line 2 to 3 is not new',
    );
    const entry = (await h.store.readRun(outcome.runId)).ledger.find((e) => e.callId === 't1')!;
    assert.deepEqual(entry.diagnostics, { items: [problem('a.ts', 2, 'bad: const a = BAD;')], more: 0 });
    assert.equal(entry.status, 'succeeded');
  });

  it('waits for the services after the write is on disk and before the result is: a cut there leaves the write recorded', async () => {
    h = await harness({ files: { 'a.ts': 'const a = 1;\n' }, script: [reply([EDIT]), answer('done')] });
    const service = new FakeService(h.root);
    const store = h.store;
    let seen: string[] = [];
    const settled = service.settled.bind(service);
    service.settled = async (paths, signal) => {
      const runId = (await store.listRuns())[0]!.runId;
      seen = (await store.readRecords(runId)).flatMap((r) => (r.type === 'checkpoint' && r.callId === 't1' ? [r.label] : []));
      return settled(paths, signal);
    };
    await h.runtime({ diagnostics: service }).start({ task: 'x', settings: SETTINGS });
    assert.deepEqual(seen, ['tool_started', 'file_written']);
  });

  it('a file the services had not checked before the write: its problems are named, marked as maybe older', async () => {
    h = await harness({ files: { 'a.ts': 'const a = 1;\nconst b = BAD;\n' }, script: [reply([EDIT]), answer('done')] });
    const service = new FakeService(h.root);
    const outcome = await h.runtime({ diagnostics: service }).start({ task: 'x', settings: SETTINGS });
    const [result] = lastToolResults(h.fake, 1);
    assert.equal(
      result!.content,
      [
        'edited a.ts',
        '',
        'The editor reports 2 new problems in the changed files:',
        '  a.ts:2: error: bad: const a = BAD;',
        '  a.ts:3: error: bad: const b = BAD;',
        'Found after the edit in a.ts, which the editor had not checked before it: some may be older than the edit.',
      ].join('\n'),
    );
    const entry = (await h.store.readRun(outcome.runId)).ledger.find((e) => e.callId === 't1')!;
    assert.deepEqual(
      entry.diagnostics?.items.map((d) => `${d.line} ${d.unchecked ?? false}`),
      ['2 true', '3 true'],
    );
    assert.equal(LedgerEntry.parse(entry).diagnostics?.items[0]?.unchecked, true, 'the mark passes the ledger schema');
  });

  it('a written file no service looked at is named as not checked, never as free of problems', async () => {
    const WRITE = toolUse('t2', 'write_file', { path: 'b.ts', content: 'const b = BAD;\n' });
    h = await harness({ files: { 'a.ts': 'const a = 1;\n' }, script: [reply([EDIT, WRITE]), answer('done')] });
    const service = new FakeService(h.root);
    service.analyse('a.ts');
    service.ignored.add('a.ts').add('b.ts');
    const outcome = await h.runtime({ diagnostics: service }).start({ task: 'x', settings: SETTINGS });
    const [edit, write] = lastToolResults(h.fake, 1);
    const none =
      "No language service looked at the changed files (some check only the files open in an editor), so their errors and warnings are not known: run the project's compiler, linter or tests to check.";
    assert.equal(edit!.content, `edited a.ts\n\n${none}`);
    assert.ok(!edit!.content.includes('no new errors'), 'not told the file is free of problems');
    assert.ok(write!.content.endsWith(none), write!.content);
    const entry = (await h.store.readRun(outcome.runId)).ledger.find((e) => e.callId === 't1')!;
    assert.deepEqual(entry.diagnostics, { items: [], more: 0, notChecked: ['a.ts'] });
    assert.equal(
      diagnosticsText({ items: [], more: 0, notChecked: ['b.ts'] }, 2),
      "The editor reports no new errors or warnings in the changed files.\nNo language service looked at b.ts (some check only the files open in an editor), so their errors and warnings are not known: run the project's compiler, linter or tests to check.",
      'one of two files not looked at is named',
    );
  });

  it('a service that fails leaves the write and its result as they were (nothing said of problems)', async () => {
    for (const fail of ['snapshot', 'settled'] as const) {
      h = await harness({ files: { 'a.ts': 'const a = 1;\n' }, script: [reply([EDIT]), answer('done')] });
      const outcome = await h.runtime({ diagnostics: new FakeService(h.root, fail) }).start({ task: 'x', settings: SETTINGS });
      assert.equal(outcome.status, 'completed');
      assert.equal(lastToolResults(h.fake, 1)[0]!.content, 'edited a.ts', fail);
      assert.equal((await h.store.readRun(outcome.runId)).ledger.find((e) => e.callId === 't1')!.diagnostics, undefined);
      await h.close();
      h = undefined;
    }
  });

  it('a delete and a read are not checked', async () => {
    h = await harness({
      files: { 'a.ts': 'BAD\n', 'b.ts': 'x\n' },
      script: [reply([toolUse('t1', 'delete_file', { path: 'a.ts' }), toolUse('t2', 'read_file', { path: 'b.ts' })]), answer('done')],
    });
    const service = new FakeService(h.root);
    await h.runtime({ diagnostics: service }).start({ task: 'x', settings: SETTINGS });
    assert.deepEqual(service.calls, []);
    assert.ok(lastToolResults(h.fake, 1).every((r) => !r.content.includes('editor')));
  });

  it('a host without language services says so once a session, in the first write result only', async () => {
    h = await harness({
      files: { 'a.ts': 'const a = 1;\n', 'b.ts': 'b\n' },
      script: [
        reply([toolUse('t0', 'read_file', { path: 'b.ts' })]),
        reply([EDIT, toolUse('t2', 'write_file', { path: 'c.ts', content: 'c\n' })]),
        answer('done'),
      ],
    });
    await h.runtime({ diagnostics: 'none' }).start({ task: 'x', settings: SETTINGS });
    assert.ok(!lastToolResults(h.fake, 1)[0]!.content.includes(NO_LANGUAGE_SERVICE), 'a read says nothing of it');
    const [edit, write] = lastToolResults(h.fake, 2);
    assert.equal(edit!.content, `edited a.ts\n\n${NO_LANGUAGE_SERVICE}`);
    assert.ok(!write!.content.includes(NO_LANGUAGE_SERVICE), write!.content);
  });
});
