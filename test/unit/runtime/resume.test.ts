import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { atSavePoint, crashingStore, crashThenResume as crashAndResume, noteOf as recoveryNote } from './crash-store';

type Shifted<T extends unknown[]> = T extends [unknown, ...infer R] ? R : never;
import {
  answer,
  byTurn,
  harness,
  lastToolResults,
  readText,
  reply,
  requestMessages,
  SETTINGS,
  startedCalls,
  toolUse,
  type Harness,
} from './harness';

describe('resume and reconciliation', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  const crashThenResume = (...args: Shifted<Parameters<typeof crashAndResume>>) => crashAndResume((x) => (h = x), ...args);
  const noteOf = (n: number) => recoveryNote(h!, n);

  it('a cut after a plain-text answer: nothing to reconcile, the run completes without a model call', async () => {
    const { outcome, requestsBefore } = await crashThenResume(atSavePoint('run_end'), { script: byTurn([answer('All done.')]) });
    assert.equal(outcome.status, 'completed');
    assert.equal(h!.fake.requests.length, requestsBefore);
    assert.equal(outcome.reason, 'All done.');
  });

  it('a dangling read_file is run again, its result appended, and the run continues', async () => {
    const { runId, outcome } = await crashThenResume(atSavePoint('tool_finished', 't1'), {
      files: { 'a.txt': 'hello' },
      script: byTurn([reply([toolUse('t1', 'read_file', { path: 'a.txt' })]), answer('ok')]),
    });
    assert.equal(outcome.status, 'completed');
    assert.equal(h!.fake.requests.length, 2);
    const results = lastToolResults(h!.fake, 1);
    assert.deepEqual(
      results.map((r) => [r.tool_use_id, r.content]),
      [['t1', 'hello']],
    );
    const note = noteOf(1);
    assert.match(note, /read_file t1: read a\.txt/);
    assert.match(note, /checkpoint c\d+ \(tool_started, step 1\)/);
    assert.match(note, /last fully completed step is step 0/);
    const statuses = (await h!.records(runId)).flatMap((r) => (r.type === 'ledger' ? [r.entry.status] : []));
    assert.deepEqual(statuses, ['planned', 'started', 'uncertain', 'started', 'succeeded']);
    assert.deepEqual(startedCalls(h!.events), ['t1', 't1']);
  });

  const editScript = byTurn([reply([toolUse('t1', 'edit_file', { path: 'a.txt', old_string: 'one', new_string: 'two' })]), answer('ok')]);

  it('a dangling edit_file found at afterHash is reported applied, not run again', async () => {
    const { runId, outcome } = await crashThenResume(atSavePoint('file_written', 't1'), {
      files: { 'a.txt': 'one\n' },
      script: editScript,
    });
    assert.equal(outcome.status, 'completed');
    assert.equal(readText(h!.root, 'a.txt'), 'two\n');
    assert.match(lastToolResults(h!.fake, 1)[0]!.content, /was applied before the interruption/);
    const state = await h!.store.readRun(runId);
    assert.equal(state.ledger[0]!.status, 'succeeded');
    assert.deepEqual(startedCalls(h!.events), ['t1']);
    // The write happened but its patch record was cut: resume records it from the write-ahead intent and blobs.
    assert.equal(state.patches.length, 1);
    const patch = state.patches[0]!;
    assert.deepEqual([patch.path, patch.op, patch.toolCallId, patch.added, patch.removed], ['a.txt', 'modify', 't1', 1, 1]);
    assert.deepEqual(state.ledger[0]!.patchIds, [patch.patchId]);
    assert.equal(new TextDecoder().decode(await h!.store.getBlob(patch.beforeBlob!)), 'one\n');
    assert.equal(new TextDecoder().decode(await h!.store.getBlob(patch.afterBlob!)), 'two\n');
  });

  it('a dangling edit_file found at beforeHash is run', async () => {
    const { runId, outcome } = await crashThenResume(
      atSavePoint('file_written', 't1'),
      { files: { 'a.txt': 'one\n' }, script: editScript },
      (hh) => writeFileSync(join(hh.root, 'a.txt'), 'one\n'),
    );
    assert.equal(outcome.status, 'completed');
    assert.equal(readText(h!.root, 'a.txt'), 'two\n');
    assert.equal(lastToolResults(h!.fake, 1)[0]!.content, 'edited a.txt');
    const state = await h!.store.readRun(runId);
    assert.equal(state.ledger[0]!.status, 'succeeded');
    assert.equal(state.patches.length, 1);
  });

  it('a dangling edit_file whose file changed since is a conflict naming the path, the file left alone', async () => {
    const { runId, outcome } = await crashThenResume(
      atSavePoint('file_written', 't1'),
      { files: { 'a.txt': 'one\n' }, script: editScript },
      (hh) => writeFileSync(join(hh.root, 'a.txt'), 'user text\n'),
    );
    assert.equal(outcome.status, 'completed');
    assert.equal(readText(h!.root, 'a.txt'), 'user text\n');
    const [result] = lastToolResults(h!.fake, 1);
    assert.equal(result!.is_error, true);
    assert.match(result!.content, /conflict: a\.txt changed/);
    assert.equal((await h!.store.readRun(runId)).ledger[0]!.status, 'failed');
  });

  it('files the user changed since are named in the recovery note', async () => {
    const { outcome } = await crashThenResume(
      atSavePoint('before_model', undefined, 3),
      {
        files: { 'a.txt': 'one\n' },
        script: byTurn([
          reply([toolUse('t1', 'edit_file', { path: 'a.txt', old_string: 'one', new_string: 'two' })]),
          reply([toolUse('t2', 'read_file', { path: 'a.txt' })]),
          answer('ok'),
        ]),
      },
      (hh) => writeFileSync(join(hh.root, 'a.txt'), 'two\nand the user\n'),
    );
    assert.equal(outcome.status, 'completed');
    const messages = requestMessages(h!.fake, 2) as { role: string; content: { type: string; text: string }[] }[];
    const last = messages[messages.length - 1]!;
    assert.equal(last.role, 'user');
    assert.equal(last.content.length, 1, 'the note is its own user message when nothing was in flight');
    assert.match(last.content[0]!.text, /a\.txt: edited since the agent wrote it/);
    assert.match(last.content[0]!.text, /No tool call was in flight/);
  });

  it('a completed run says so and is not resumed; an unknown run is a clear error', async () => {
    h = await harness({ script: byTurn([answer('done')]) });
    const done = await h.runtime().start({ task: 'x', settings: SETTINGS });
    const again = await h.runtime().resume(done.runId);
    assert.equal(again.status, 'completed');
    assert.match(again.reason!, /already ended/);
    assert.equal(h.fake.requests.length, 1);
    await assert.rejects(h.runtime().resume('no-such-run'), /run no-such-run not found/);
  });
});

describe('resume of a damaged run (file store)', () => {
  it('says what is damaged and changes nothing', async () => {
    const { readFileSync: read, writeFileSync: write, readdirSync } = await import('node:fs');
    const h = await harness({
      store: 'file',
      files: { 'a.txt': 'A' },
      script: byTurn([reply([toolUse('t1', 'read_file', { path: 'a.txt' })]), answer('ok')]),
    });
    try {
      const crashing = crashingStore(h.store, atSavePoint('run_end'));
      const first = await h.runtime({ store: crashing }).start({ task: 'x', settings: SETTINGS });
      const root = (h.store as unknown as { runsDir: string }).runsDir;
      const journal = join(
        root,
        readdirSync(root).find((d) => d === first.runId)!,
        'journal.jsonl',
      );
      const text = read(journal, 'utf8');
      const middle = text.indexOf('"label":"after_model"');
      write(journal, `${text.slice(0, middle)}"label":"aftor_model"${text.slice(middle + 21)}`);
      const damaged = read(journal, 'utf8');
      await assert.rejects(
        h.runtime().resume(first.runId),
        (error: Error) => error.name === 'ResumeError' && /is damaged/.test(error.message) && error.message.includes('journal'),
      );
      assert.equal(read(journal, 'utf8'), damaged, 'nothing was changed');
    } finally {
      await h.close();
    }
  });
});
