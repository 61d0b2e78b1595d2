import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

// A throwaway PostgreSQL for the tests: Debian's server binaries (test/bootstrap.mjs installs the
// `postgresql` package with apt when they are missing), a temp data folder, a free loopback port,
// run as the `postgres` OS user when the tests run as root (the server refuses root). With
// AGENT_CHECKPOINTS_TEST_PG set (a postgres:// address), that server is used instead.

export interface TestPostgres {
  /** The address of the server's `postgres` database. */
  readonly url: string;
  /** The address of a fresh database (a store of its own for a CLI run, whose address names no schema). */
  newDatabase(): Promise<string>;
  /** A fresh schema for one test's store; dropped by `dropSchema`. */
  newSchema(): Promise<string>;
  dropSchema(schema: string): Promise<void>;
  /** Stops the server at once (as a crash would) and starts it again on the same port and data. */
  restart?(): Promise<void>;
  stop?(): Promise<void>;
  stopNow?(): void;
  startAgain?(): Promise<void>;
}

/** The newest installed server's bin folder, or null. */
export function postgresBinDir(): string | null {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return null;
  const versions = readdirSync(base)
    .filter((v) => existsSync(join(base, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] !== undefined ? join(base, versions[0], 'bin') : null;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

function asPostgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  return { uid, gid };
}

function run(bin: string, args: readonly string[], user: { uid: number; gid: number } | undefined): void {
  const result = spawnSync(bin, args, { stdio: 'pipe', ...(user ?? {}), env: { ...process.env, LC_ALL: 'C' } });
  if (result.status !== 0)
    throw new Error(`${bin} ${args.join(' ')} failed: ${result.stderr?.toString() ?? ''}${result.stdout?.toString() ?? ''}`);
}

let shared: Promise<TestPostgres> | undefined;

/** The tests' PostgreSQL, started once per process and stopped when the process exits. */
export function testPostgres(): Promise<TestPostgres> {
  shared ??= process.env.AGENT_CHECKPOINTS_TEST_PG ? Promise.resolve(external(process.env.AGENT_CHECKPOINTS_TEST_PG)) : startPostgres();
  return shared;
}

function schemas(url: string): Pick<TestPostgres, 'newSchema' | 'dropSchema' | 'newDatabase'> {
  let n = 0;
  const admin = new pg.Pool({ connectionString: url, max: 2 });
  admin.on('error', () => undefined);
  return {
    async newSchema() {
      const name = `t_${process.pid}_${Date.now().toString(36)}_${(n++).toString(36)}`;
      await admin.query(`CREATE SCHEMA ${name}`);
      return name;
    },
    async newDatabase() {
      const name = `d_${process.pid}_${Date.now().toString(36)}_${(n++).toString(36)}`;
      await admin.query(`CREATE DATABASE ${name}`);
      const address = new URL(url);
      address.pathname = `/${name}`;
      return address.toString();
    },
    async dropSchema(name) {
      await admin.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`).catch(() => undefined);
    },
  };
}

function external(url: string): TestPostgres {
  return { url, ...schemas(url) };
}

/**
 * Starts a new server in a temp folder; `fsync` off unless asked (the durability tests ask). It
 * listens on 127.0.0.1 and the `listen` addresses, and trusts clients of the `trust` subnet too.
 */
export async function startPostgres(options: { fsync?: boolean; listen?: readonly string[]; trust?: string } = {}): Promise<TestPostgres> {
  const bin = postgresBinDir();
  if (bin === null) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql: apt-get install -y postgresql');
  const user = asPostgresUser();
  const dir = mkdtempSync(join(tmpdir(), 'ac-pg-'));
  if (user) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  run(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8'], user);
  if (options.trust !== undefined) appendFileSync(join(data, 'pg_hba.conf'), `host all all ${options.trust} trust\n`);
  const port = await freePort();
  const listen = ['127.0.0.1', ...(options.listen ?? [])].join(',');
  const settings = `-p ${port} -k ${dir} -c listen_addresses=${listen} -c fsync=${options.fsync ? 'on' : 'off'} -c max_connections=200`;
  const start = () => run(join(bin, 'pg_ctl'), ['-D', data, '-o', settings, '-l', join(dir, 'log'), '-w', 'start'], user);
  const stopNow = () => {
    spawnSync(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', 'stop'], { stdio: 'ignore', ...(user ?? {}) });
  };
  start();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let stopped = false;
  const cleanup = () => {
    if (stopped) return;
    stopped = true;
    stopNow();
    rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', cleanup);
  return {
    url,
    ...schemas(url),
    async restart() {
      stopNow();
      start();
    },
    stopNow,
    async startAgain() {
      start();
    },
    async stop() {
      cleanup();
    },
  };
}
