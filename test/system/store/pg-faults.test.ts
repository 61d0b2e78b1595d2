import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { StoreError, type RunWriter } from '../../../src/core/store/contract';
import { PgCheckpointStore } from '../../../src/host/node/pg/pg-store';
import { nodeProcessIdentity } from '../../../src/host/node/store-factory';
import { startPostgres, testPostgres, type TestPostgres } from '../../support/pg-server';
import { message, runInput } from '../../unit/store/fixtures';

// The PostgreSQL store under the faults a shared server meets: a writer frozen past its lease
// (SIGSTOP), the server restarted mid-run, a connection cut in the middle of appends.

const CHILD = join(__dirname, '../../support/pg-writer-child.ts');

function lines(proc: ReturnType<typeof spawn>): AsyncIterator<string> {
  return createInterface({ input: proc.stdout! })[Symbol.asyncIterator]();
}

async function next(it: AsyncIterator<string>): Promise<string> {
  const { value, done } = await it.next();
  if (done) throw new Error('the child ended');
  return value as string;
}

describe('PostgreSQL store under faults', function () {
  this.timeout(60_000);

  it('a writer frozen past its lease (SIGSTOP) is taken over; once thawed its next append is refused and nothing of it lands', async () => {
    const server = await testPostgres();
    const schema = await server.newSchema();
    const store = new PgCheckpointStore({ url: server.url, schema, leaseTimeoutMs: 1000, process: nodeProcessIdentity });
    try {
      await (await store.createRun(runInput('r1'))).close();
      const child = spawn(process.execPath, ['--import', 'tsx', CHILD, server.url, schema, 'r1', '1000'], {
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      const out = lines(child);
      assert.equal(await next(out), 'held');
      child.stdin!.write('before\n');
      assert.equal(await next(out), 'appended 1');
      child.kill('SIGSTOP');
      await new Promise((r) => setTimeout(r, 2500)); // past the lease timeout: its heartbeat stops
      const taker = await store.openWriter('r1');
      await taker.append([message(0, 0, 'user', 'from the new holder')]);
      child.kill('SIGCONT');
      child.stdin!.write('after\n');
      assert.match(await next(out), /^refused lease_lost: this writer lost the lease of run r1/);
      child.stdin!.end();
      await new Promise((r) => child.once('close', r));
      const notes = (await store.readRecords('r1')).filter((r) => r.type === 'note').map((r) => (r as { text: string }).text);
      assert.deepEqual(notes, ['before 1'], 'the frozen writer landed nothing after the take-over');
      await taker.close();
    } finally {
      await store.dispose();
      await server.dropSchema(schema);
    }
  });

  it('the server restarted mid-run: the writer stops with a clear error, nothing acknowledged is lost, and the run opens again', async () => {
    const server: TestPostgres = await startPostgres({ fsync: true });
    const store = new PgCheckpointStore({ url: server.url, process: nodeProcessIdentity });
    try {
      const writer: RunWriter = await store.createRun(runInput('r1'));
      let acknowledged = 1;
      for (let i = 0; i < 5; i++) {
        await writer.append([message(i, i, i % 2 ? 'assistant' : 'user', `m${i}`)]);
        acknowledged++;
      }
      await server.restart!();
      await assert.rejects(
        writer.append([message(5, 5, 'assistant', 'cut')]),
        (e: unknown) => e instanceof StoreError && e.code === 'io' && /PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1/.test(e.message),
      );
      await assert.rejects(writer.append([message(5, 5, 'assistant', 'again')]), (e: unknown) => e instanceof StoreError);
      const reopened = await store.openWriter('r1');
      assert.equal(reopened.resumeState.lastSeq, acknowledged, 'every acknowledged group is there, nothing more');
      await reopened.append([message(5, 5, 'assistant', 'after the restart')]);
      await reopened.close();
    } finally {
      await store.dispose();
      await server.stop!();
    }
  });

  it('a connection cut between appends and mid-append: acknowledged records all there, at most the cut group besides', async () => {
    const server = await testPostgres();
    const schema = await server.newSchema();
    const store = new PgCheckpointStore({ url: server.url, schema, process: nodeProcessIdentity });
    const admin = new PgCheckpointStore({ url: `${server.url}?application_name=admin` });
    try {
      const writer = await store.createRun(runInput('r1'));
      let acknowledged = 1;
      let failure: unknown;
      const appending = (async () => {
        for (let i = 0; i < 400 && failure === undefined; i++) {
          try {
            await writer.append([message(i, i, i % 2 ? 'assistant' : 'user', `m${i}`)]);
            acknowledged++;
          } catch (error) {
            failure = error;
          }
        }
      })();
      // Cut every connection of the writer's pool, again and again: an idle one is replaced unseen,
      // one in the middle of an append fails it (its commit may or may not have happened).
      let cuts = 0;
      while (failure === undefined && cuts < 200) {
        await new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
        await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database() AND backend_type = 'client backend' AND application_name = ''`,
        );
        cuts++;
      }
      await appending;
      assert.ok(
        failure instanceof StoreError && failure.code === 'io',
        `the writer stopped with an io error after ${cuts} cuts: ${String(failure)}`,
      );
      await assert.rejects(
        writer.append([message(0, 0, 'user', 'after')]),
        (e: unknown) => e === failure,
        'a stopped writer stays stopped',
      );
      const state = await store.readResumeState('r1');
      assert.ok(
        state.lastSeq === acknowledged || state.lastSeq === acknowledged + 1,
        `lastSeq ${state.lastSeq}, acknowledged ${acknowledged}`,
      );
      const reopened = await store.openWriter('r1');
      assert.equal(reopened.resumeState.lastSeq, state.lastSeq, 'this process opens its run again at once');
      await reopened.close();
    } finally {
      await store.dispose();
      await admin.dispose();
      await server.dropSchema(schema);
    }
  });
});
