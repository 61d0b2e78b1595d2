import pg from 'pg';
import { errorText } from '../../../core/error-text';
import { StoreError } from '../../../core/store/contract';
import { redactedAddress } from './pg-names';
import { migrateSchema } from './pg-schema';

// The connections of the PostgreSQL journal device (its base class): a pool whose schema is
// brought up to date on first use, and failures of the driver or server told as StoreError('io')
// naming the server, never its password.

export interface PgPoolOptions {
  /** postgres://user:password@host:port/database (the password never appears in an error). */
  readonly url: string;
  /** A schema of its own (tests; a team sharing one database between projects); default: the user's search_path. */
  readonly schema?: string;
}

/** bigint columns as numbers (every one of ours holds milliseconds, bytes or a generation). */
const types = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === 20 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format ?? 'text'),
} as pg.CustomTypesConfig;

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
/** foreign_key_violation: a row of a run that does not exist. */
const NO_SUCH_RUN = '23503';

export class PgPool {
  readonly pool: pg.Pool;
  readonly address: string;
  /** How the pool and a watch's own connection reach the server. */
  readonly clientConfig: pg.ClientConfig;
  private ready: Promise<void> | undefined;

  constructor(options: PgPoolOptions) {
    const { schema } = options;
    if (schema !== undefined && !SCHEMA_NAME.test(schema)) throw new StoreError(`not a schema name: ${JSON.stringify(schema)}`, 'invalid');
    this.address = redactedAddress(options.url);
    this.clientConfig = {
      connectionString: options.url,
      types,
      connectionTimeoutMillis: 10_000,
      ...(schema !== undefined ? { options: `-c search_path=${schema}` } : {}),
    };
    this.pool = new pg.Pool({ ...this.clientConfig, max: 4, allowExitOnIdle: true });
    // A connection that drops while idle is replaced; the error must not end the process.
    this.pool.on('error', () => undefined);
  }

  /** One statement on a pooled connection, the schema brought up to date first. */
  async query<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<pg.QueryResult<R>> {
    await this.ensureSchema();
    // A read on a pooled connection the server just ended (its end not yet seen here) is read again once, on another.
    const read = /^\s*SELECT\b/i.test(sql);
    return this.io(() =>
      this.pool
        .query<R>(sql, params)
        .catch((error: unknown) => (read && connectionLost(error) ? this.pool.query<R>(sql, params) : Promise.reject(error))),
    );
  }

  /** `work` in one transaction on one connection (its statements told as by `io`); rolled back when it throws. */
  async transaction<T>(work: (query: PgPool['query']) => Promise<T>): Promise<T> {
    await this.ensureSchema();
    const client = await this.io(() => this.pool.connect());
    try {
      await this.io(() => client.query('BEGIN'));
      const result = await work((sql, params = []) => this.io(() => client.query(sql, params)));
      await this.io(() => client.query('COMMIT'));
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** A driver or server failure as a StoreError('io') naming the server (never its password); a row of a missing run as not_found. */
  async io<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof StoreError) throw error;
      const message = `PostgreSQL at ${this.address}: ${errorText(error)}`;
      throw new StoreError(message, (error as { code?: unknown }).code === NO_SUCH_RUN ? 'not_found' : 'io');
    }
  }

  private ensureSchema(): Promise<void> {
    this.ready ??= (async () => {
      const client = await this.io(() => this.pool.connect());
      try {
        await this.io(() => migrateSchema(client));
      } finally {
        client.release();
      }
    })().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }
}

/** A failure that ended the connection, not the statement: the server shut it (57P0x), a connection error (08xxx), a reset socket. */
function connectionLost(error: unknown): boolean {
  const code = String((error as { code?: unknown } | null)?.code ?? '');
  return /^(57P0[1-3]|08...|ECONNRESET|EPIPE)$/.test(code) || /Connection terminated/i.test(errorText(error));
}
