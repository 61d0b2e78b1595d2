import { strict as assert } from 'node:assert';
import { z } from 'zod';
import { runInAnswerOrder, type ApprovalTurn } from '../../../src/core/runtime/concurrent-calls';
import type { ApprovalRequest } from '../../../src/core/ports';
import { ToolError } from '../../../src/core/tools/errors';
import { BUILTIN_TOOLS, createToolRegistry, type AnyTool } from '../../../src/core/tools/registry';
import { trustsParallelReads, type McpServerEntry } from '../../../src/host/node/mcp/config';
import { externalTool } from '../../../src/host/node/mcp/external-tool';
import { atSavePoint, crashingStore } from './crash-store';
import { answer, byTurn, harness, lastToolResults, reply, savePoints, SETTINGS, startedCalls, toolUse, type Harness } from './harness';

/** A promise opened from outside. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Opens once `n` callers have arrived. */
function meeting(n: number): { arrive: () => Promise<void> } {
  const all = gate();
  let arrived = 0;
  return {
    arrive: () => {
      arrived += 1;
      if (arrived === n) all.open();
      return all.opened;
    },
  };
}

/** Lets every pending promise callback run (one turn of the event loop, no timer). */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('read-only calls of one answer run at once', () => {
  describe('the order they run in (runInAnswerOrder)', () => {
    it('returns the results in the model order, though later calls finish first', async () => {
      const gates = [gate(), gate(), gate()];
      const started: number[] = [];
      const run = runInAnswerOrder(
        3,
        () => true,
        async (i) => {
          started.push(i);
          await gates[i]!.opened;
          return `r${i}`;
        },
      );
      await settle();
      assert.deepEqual(started, [0, 1, 2]);
      gates[2]!.open();
      gates[1]!.open();
      gates[0]!.open();
      assert.deepEqual(await run, ['r0', 'r1', 'r2']);
    });

    it('runs at most the bound at once, starting the next as one ends', async () => {
      const gates = Array.from({ length: 6 }, gate);
      const started: number[] = [];
      const run = runInAnswerOrder(
        6,
        () => true,
        async (i) => {
          started.push(i);
          await gates[i]!.opened;
          return i;
        },
        4,
      );
      await settle();
      assert.deepEqual(started, [0, 1, 2, 3]);
      gates[1]!.open();
      await settle();
      assert.deepEqual(started, [0, 1, 2, 3, 4]);
      gates.forEach((g) => g.open());
      assert.deepEqual(await run, [0, 1, 2, 3, 4, 5]);
    });

    it('a call with a side effect is a barrier: reads before it end first, reads after it start after it', async () => {
      const log: string[] = [];
      const before = meeting(2);
      const after = meeting(2);
      await runInAnswerOrder(
        5,
        (i) => i !== 2,
        async (i) => {
          log.push(`start ${i}`);
          if (i < 2) await before.arrive();
          if (i > 2) await after.arrive();
          await settle();
          log.push(`end ${i}`);
        },
      );
      // The reads of each side overlapped (both started before either ended); the write ran alone between them.
      assert.deepEqual(log.slice(0, 2).sort(), ['start 0', 'start 1']);
      assert.deepEqual(log.slice(4, 7), ['start 2', 'end 2', 'start 3']);
      assert.ok(log.indexOf('end 0') < log.indexOf('start 2') && log.indexOf('end 1') < log.indexOf('start 2'));
      assert.ok(log.indexOf('start 4') < log.indexOf('end 3'));
    });

    it('after a call throws, none starts; those in flight end; the first error in model order is thrown', async () => {
      const started: number[] = [];
      const ended: number[] = [];
      const second = gate();
      const run = runInAnswerOrder(
        5,
        () => true,
        async (i) => {
          started.push(i);
          if (i === 0) {
            await settle();
            throw new Error('read 0 failed');
          }
          await second.opened;
          ended.push(i);
          return i;
        },
        2,
      );
      const rejected = assert.rejects(run, /read 0 failed/);
      await settle();
      second.open();
      await rejected;
      assert.deepEqual(started, [0, 1]);
      assert.deepEqual(ended, [1]);
    });

    it('calls running at once ask a person one at a time, in the model order', async () => {
      const asked: number[] = [];
      const first = gate();
      const run = runInAnswerOrder(
        3,
        () => true,
        async (i, turn?: ApprovalTurn) => {
          await turn!.wait();
          asked.push(i);
          if (i === 0) await first.opened;
          turn!.pass();
        },
      );
      await settle();
      assert.deepEqual(asked, [0]);
      first.open();
      await run;
      assert.deepEqual(asked, [0, 1, 2]);
    });
  });

  describe('in a run', () => {
    let h: Harness | undefined;
    afterEach(async () => {
      await h?.close();
      h = undefined;
    });

    /** A read-only test tool whose calls all wait until `together` of them are running. */
    function probe(name: string, together: number, extra: Partial<AnyTool> = {}): AnyTool {
      const all = meeting(together);
      return {
        name,
        description: 'test read',
        input: z.strictObject({ id: z.string() }),
        idempotency: 'idempotent',
        replayPolicy: 'auto',
        sideEffects: [],
        concurrentRead: true,
        compensation: 'nothing to undo (read only)',
        summarize: (input: { id: string }) => `probe ${input.id}`,
        async execute(input: { id: string }) {
          await all.arrive();
          if (input.id === 'bad') throw new ToolError('no such thing');
          return { content: `read ${input.id}` };
        },
        ...extra,
      };
    }

    const tools = (...extra: AnyTool[]) => createToolRegistry({ tools: [...BUILTIN_TOOLS, ...extra] });

    it('runs the reads of an answer at once; results in the model order, a failing one an error in its place', async function () {
      this.timeout(5000); // sequential calls would never meet: the first would wait for the others forever
      h = await harness({
        script: byTurn([
          reply([toolUse('t1', 'probe', { id: 'a' }), toolUse('t2', 'probe', { id: 'bad' }), toolUse('t3', 'probe', { id: 'c' })]),
          answer('ok'),
        ]),
      });
      const outcome = await h.runtime({ tools: tools(probe('probe', 3)) }).start({ task: 't', settings: SETTINGS });
      assert.equal(outcome.status, 'completed');
      assert.deepEqual(
        lastToolResults(h.fake, 1).map((r) => [r.tool_use_id, r.content, r.is_error === true]),
        [
          ['t1', 'read a', false],
          ['t2', 'probe failed: no such thing', true],
          ['t3', 'read c', false],
        ],
      );
      const records = await h.records(outcome.runId);
      // Save points of calls running at once are still numbered one after another.
      const ids = records.flatMap((r) => (r.type === 'checkpoint' ? [Number(r.checkpointId.slice(1))] : []));
      assert.deepEqual(
        ids,
        Array.from({ length: ids.length }, (_, i) => i + 1),
      );
      const points = savePoints(records);
      for (const id of ['t1', 't2', 't3']) assert.ok(points.indexOf(`tool_started:${id}`) < points.indexOf(`tool_finished:${id}`));
    });

    it('a write between reads runs alone: the read after it sees what it wrote', async () => {
      h = await harness({
        files: { 'a.txt': 'one' },
        script: byTurn([
          reply([
            toolUse('t1', 'read_file', { path: 'a.txt' }),
            toolUse('t2', 'write_file', { path: 'a.txt', content: 'two' }),
            toolUse('t3', 'read_file', { path: 'a.txt' }),
          ]),
          answer('ok'),
        ]),
      });
      const outcome = await h.runtime().start({ task: 't', settings: SETTINGS });
      assert.equal(outcome.status, 'completed');
      const results = lastToolResults(h.fake, 1);
      assert.deepEqual([results[0]!.content, results[2]!.content], ['one', 'two']);
      const points = savePoints(await h.records(outcome.runId));
      assert.ok(points.indexOf('tool_finished:t1') < points.indexOf('tool_started:t2'));
      assert.ok(points.indexOf('tool_finished:t2') < points.indexOf('tool_started:t3'));
    });

    it('asks a person about reads that need it one at a time, in the model order', async () => {
      const asked: string[] = [];
      let open = 0;
      let mostOpen = 0;
      const approver = {
        async approve(request: ApprovalRequest) {
          open += 1;
          mostOpen = Math.max(mostOpen, open);
          asked.push(request.callId);
          await settle();
          open -= 1;
          return 'allow_once' as const;
        },
        askUncertain: async () => null,
      };
      h = await harness({
        files: { 'a.txt': 'A', 'b.txt': 'B', 'c.txt': 'C' },
        script: byTurn([reply(['a', 'b', 'c'].map((f, i) => toolUse(`t${i + 1}`, 'read_file', { path: `${f}.txt` }))), answer('ok')]),
      });
      const asking = createToolRegistry({ overrides: { read_file: { replayPolicy: 'ask' } } });
      const outcome = await h.runtime({ approver, tools: asking }).start({ task: 't', settings: SETTINGS });
      assert.equal(outcome.status, 'completed');
      assert.deepEqual(asked, ['t1', 't2', 't3']);
      assert.equal(mostOpen, 1);
      assert.deepEqual(
        lastToolResults(h.fake, 1).map((r) => r.content),
        ['A', 'B', 'C'],
      );
    });

    it('a crash in the middle of the reads resumes as before: finished calls reused, cut ones run again, results in order', async () => {
      h = await harness({
        files: { 'a.txt': 'A', 'b.txt': 'B', 'c.txt': 'C' },
        script: byTurn([reply(['a', 'b', 'c'].map((f, i) => toolUse(`t${i + 1}`, 'read_file', { path: `${f}.txt` }))), answer('ok')]),
      });
      const crashing = crashingStore(h.store, atSavePoint('tool_finished', 't2') as never);
      const first = await h.runtime({ store: crashing }).start({ task: 't', settings: SETTINGS });
      assert.equal(first.status, 'paused');
      const records = await h.records(first.runId);
      const done = new Set(records.flatMap((r) => (r.type === 'ledger' && r.entry.status === 'succeeded' ? [r.entry.callId] : [])));
      assert.ok(!done.has('t2'), 't2 was cut before its result was saved');
      const startedBefore = startedCalls(h.events).length;
      const second = await h.runtime().resume(first.runId);
      assert.equal(second.status, 'completed');
      const again = startedCalls(h.events).slice(startedBefore);
      assert.ok(again.includes('t2'));
      for (const id of done) assert.ok(!again.includes(id), `${id} finished before the crash and is not run again`);
      assert.deepEqual(
        lastToolResults(h.fake, 1).map((r) => [r.tool_use_id, r.content]),
        [
          ['t1', 'A'],
          ['t2', 'B'],
          ['t3', 'C'],
        ],
      );
    });
  });

  describe('MCP tools join only where the person trusted the server for it', () => {
    const spec = (trustedReads: boolean, readOnlyHint: boolean) => ({
      name: 'srv__look',
      where: 'MCP server srv',
      description: 'looks',
      inputSchema: { type: 'object' },
      hints: { readOnlyHint },
      trustedReads,
      call: async () => ({ content: 'seen' }),
    });

    it('a read-only tool of a trusted server reads beside others; its hint alone, or trust without the hint, does not', () => {
      assert.equal(externalTool(spec(true, true)).concurrentRead, true);
      assert.equal(externalTool(spec(false, true)).concurrentRead, undefined);
      assert.equal(externalTool(spec(true, false)).concurrentRead, undefined);
    });

    it("parallelReads counts from the person's own config, not from the workspace's file", () => {
      const entry = (source: McpServerEntry['source'], parallelReads?: boolean): McpServerEntry => ({
        name: 'srv',
        source,
        origin: 'test',
        config: { command: 'node', args: [], env: {}, ...(parallelReads !== undefined ? { parallelReads } : {}) },
      });
      assert.equal(trustsParallelReads(entry('user', true)), true);
      assert.equal(trustsParallelReads(entry('cli', true)), true);
      assert.equal(trustsParallelReads(entry('workspace', true)), false);
      assert.equal(trustsParallelReads(entry('user')), false);
    });

    it("in a run, a trusted server's reads run at once", async function () {
      this.timeout(5000); // sequential calls would never meet
      const all = meeting(2);
      const tool = externalTool({ ...spec(true, true), call: async () => (await all.arrive(), { content: 'seen' }) });
      h = await harness({
        script: byTurn([reply([toolUse('m1', 'srv__look', {}), toolUse('m2', 'srv__look', {})]), answer('ok')]),
      });
      const outcome = await h
        .runtime({ tools: createToolRegistry({ tools: [...BUILTIN_TOOLS, tool] }) })
        .start({ task: 't', settings: SETTINGS });
      assert.equal(outcome.status, 'completed');
      assert.deepEqual(
        lastToolResults(h.fake, 1).map((r) => r.content),
        ['seen', 'seen'],
      );
    });

    let h: Harness | undefined;
    afterEach(async () => {
      await h?.close();
      h = undefined;
    });
  });
});
