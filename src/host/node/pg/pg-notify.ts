import pg from 'pg';
import { z } from 'zod';
import type { Clock } from '../../../core/ports';

/** What a watch needs of the store or device it watches for. */
export interface PgWatchHost {
  /** How a watch's own connection reaches the server. */
  readonly clientConfig: pg.ClientConfig;
  /** Names the host's own notices, which its watches drop. */
  readonly token: string;
  readonly clock: Clock;
  readonly leaseTimeoutMs: number;
  query<R extends pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<pg.QueryResult<R>>;
  /** Whether the last append of a run (its last seq) was the host's. */
  wroteLast(runId: string, lastSeq: number): boolean;
}

/**
 * The change notice of the PostgreSQL store: every append (and every new run or fork) sends
 * NOTIFY on one channel inside its own transaction, so it is delivered only if it commits. The
 * payload names the schema (the channel is per database), the run and the token of the store
 * object that wrote it; a watch drops its own object's notices. A heartbeat renews the lease row
 * only and sends nothing.
 */
export const APPEND_CHANNEL = 'ac_appends';
/**
 * The lease notice: a lease taken, released or fenced sends NOTIFY on this channel with the same
 * payload, in the statement that changes it; a heartbeat (renewed_at only) sends nothing.
 */
export const LEASE_CHANNEL = 'ac_leases';

/** A notice's payload as a watch reads it (any client of the database may NOTIFY on the channel). */
const AppendNote = z.object({ schema: z.string(), run: z.string(), token: z.string() });

/** SQL of the notice: `$run` and `$token` are the placeholders of the run id and the writer's store token. */
export function notifySql(run: string, token: string, channel = APPEND_CHANNEL): string {
  return `pg_notify('${channel}', json_build_object('schema', current_schema(), 'run', ${run}::text, 'token', ${token}::text)::text)`;
}

/**
 * A lease update (`UPDATE ac_leases ... RETURNING run_id`, its token at `token`) that tells the
 * lease channel of the rows it changed, in the same statement (so only if it commits).
 */
export function leaseNoticeSql(update: string, token: string): string {
  return `WITH changed AS (${update}) SELECT changed.*, ${notifySql('changed.run_id', token, LEASE_CHANNEL)} AS told FROM changed`;
}

const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 5_000;

/**
 * One LISTEN (appends, or leases) on a connection of its own (a pooled one would be handed to other queries). When
 * the connection fails it reconnects with backoff, then tells the runs updated while it was away
 * that this store object did not write last (a run may then be told twice: the contract allows it).
 */
export class PgAppendWatch {
  private client: pg.Client | undefined;
  private closed = false;
  private retryMs = RETRY_FIRST_MS;
  private retry: NodeJS.Timeout | undefined;
  private droppedAt: number | undefined;
  private listening!: Promise<void>;
  /** current_schema() of the watch's connection: notices of other schemas are other stores'. */
  private schema: string | null = null;

  constructor(
    private readonly store: PgWatchHost,
    private readonly listener: (runId: string) => void,
    private readonly onClose?: () => void,
    private readonly channel: typeof APPEND_CHANNEL | typeof LEASE_CHANNEL = APPEND_CHANNEL,
  ) {
    this.connect();
  }

  /** Settles when the current connection listens (tests wait for it before writing). */
  whenListening(): Promise<void> {
    return this.listening;
  }

  close(): void {
    this.closed = true;
    this.onClose?.();
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    void client?.end().catch(() => undefined);
  }

  private connect(): void {
    const client = new pg.Client({ ...this.store.clientConfig, application_name: 'agent-checkpoints-watch' });
    this.client = client;
    const dropped = () => this.dropped(client);
    client.on('error', dropped);
    client.on('end', dropped);
    client.on('notification', (note) => this.heard(note));
    this.listening = (async () => {
      await client.connect();
      const { rows } = await client.query<{ schema: string }>('SELECT current_schema() AS schema');
      this.schema = rows[0]?.schema ?? null;
      await client.query(`LISTEN ${this.channel}`);
      this.retryMs = RETRY_FIRST_MS;
      if (this.droppedAt !== undefined) await this.catchUp(this.droppedAt);
      this.droppedAt = undefined;
    })();
    this.listening.catch(dropped);
  }

  private heard(note: pg.Notification): void {
    if (this.closed || note.channel !== this.channel) return;
    let payload: unknown;
    try {
      payload = JSON.parse(note.payload ?? '');
    } catch {
      return;
    }
    const parsed = AppendNote.safeParse(payload);
    if (!parsed.success || parsed.data.schema !== this.schema || parsed.data.token === this.store.token) return;
    this.tell(parsed.data.run);
  }

  /** A listener that throws must not break the connection's reading of notices. */
  private tell(runId: string): void {
    try {
      this.listener(runId);
    } catch {
      // the listener's own failure
    }
  }

  private dropped(client: pg.Client): void {
    if (this.closed || this.client !== client) return;
    this.client = undefined;
    this.droppedAt ??= this.store.clock.now();
    void client.end().catch(() => undefined);
    this.retry = setTimeout(() => this.connect(), this.retryMs);
    this.retry.unref();
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
  }

  /** The runs updated since the connection dropped (less the lease timeout, for clocks of other hosts) and not last written here. */
  private async catchUp(droppedAt: number): Promise<void> {
    if (this.channel === LEASE_CHANNEL) {
      // A release leaves no time behind: every run's holder may have changed meanwhile.
      const { rows } = await this.store.query<{ run_id: string }>('SELECT run_id FROM ac_leases ORDER BY run_id');
      for (const row of rows) if (!this.closed) this.tell(row.run_id);
      return;
    }
    const { rows } = await this.store.query<{ run_id: string; last_seq: number }>(
      'SELECT run_id, last_seq FROM ac_runs WHERE updated_at >= $1 ORDER BY updated_at',
      [droppedAt - this.store.leaseTimeoutMs],
    );
    for (const row of rows) if (!this.closed && !this.store.wroteLast(row.run_id, row.last_seq)) this.tell(row.run_id);
  }
}
