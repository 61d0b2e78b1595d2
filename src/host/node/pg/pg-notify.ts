import pg from 'pg';
import { z } from 'zod';
import { parseJsonAs } from '../../../core/store/atomic-file';
import type { PgJournalDevice } from './pg-device';

/**
 * The change notices of the PostgreSQL device, one channel per kind: every append (and new run or
 * fork), and every lease taken, released or fenced, sends NOTIFY in the statement that makes the
 * change, so it is delivered only if that commits; a heartbeat (renewed_at only) sends nothing.
 * The payload names the schema (the channel is per database), the run and the token of the device
 * object that wrote it; a watch drops its own object's notices.
 */
const CHANNELS = { appends: 'ac_appends', leases: 'ac_leases' } as const;
type Kind = keyof typeof CHANNELS;

/** A notice's payload as a watch reads it (any client of the database may NOTIFY on the channel). */
const Note = z.object({ schema: z.string(), run: z.string(), token: z.string() });

/** SQL of the notice: `run` and `token` are SQL of the run id and of the writer's device token. */
export function notifySql(run: string, token: string, kind: Kind = 'appends'): string {
  return `pg_notify('${CHANNELS[kind]}', json_build_object('schema', current_schema(), 'run', ${run}::text, 'token', ${token}::text)::text)`;
}

/** A lease update (`UPDATE ac_leases ... RETURNING run_id`, its token at `token`) that tells the lease channel of the rows it changed. */
export function leaseNoticeSql(update: string, token: string): string {
  return `WITH changed AS (${update}) SELECT changed.*, ${notifySql('changed.run_id', token, 'leases')} AS told FROM changed`;
}

const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 5_000;

/**
 * One LISTEN on a connection of its own (a pooled one would be handed to other queries). When
 * the connection fails it reconnects with backoff, then tells what may have changed while it was
 * away (a run may then be told twice: the contract allows it).
 */
export class PgWatch {
  private client: pg.Client | undefined;
  private closed = false;
  private retryMs = RETRY_FIRST_MS;
  private retry: NodeJS.Timeout | undefined;
  private droppedAt: number | undefined;
  private listening!: Promise<void>;
  /** current_schema() of the watch's connection: notices of other schemas are other stores'. */
  private schema: string | null = null;

  constructor(
    private readonly device: PgJournalDevice,
    private readonly kind: Kind,
    private readonly listener: (runId: string) => void,
    private readonly onClose: () => void,
  ) {
    this.connect();
  }

  /** Settles when the current connection listens (tests wait for it before writing). */
  whenListening(): Promise<void> {
    return this.listening;
  }

  close(): void {
    this.closed = true;
    this.onClose();
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    void client?.end().catch(() => undefined);
  }

  private connect(): void {
    const client = new pg.Client({ ...this.device.clientConfig, application_name: 'agent-checkpoints-watch' });
    this.client = client;
    const dropped = () => this.dropped(client);
    client.on('error', dropped);
    client.on('end', dropped);
    client.on('notification', (note) => this.heard(note));
    this.listening = (async () => {
      await client.connect();
      const { rows } = await client.query<{ schema: string }>('SELECT current_schema() AS schema');
      this.schema = rows[0]?.schema ?? null;
      await client.query(`LISTEN ${CHANNELS[this.kind]}`);
      this.retryMs = RETRY_FIRST_MS;
      if (this.droppedAt !== undefined) await this.catchUp(this.droppedAt);
      this.droppedAt = undefined;
    })();
    this.listening.catch(dropped);
  }

  private heard(note: pg.Notification): void {
    if (this.closed || note.channel !== CHANNELS[this.kind]) return;
    const parsed = parseJsonAs(Buffer.from(note.payload ?? ''), Note);
    if (parsed && parsed.schema === this.schema && parsed.token !== this.device.token) this.tell(parsed.run);
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
    this.droppedAt ??= this.device.clock.now();
    void client.end().catch(() => undefined);
    this.retry = setTimeout(() => this.connect(), this.retryMs);
    this.retry.unref();
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
  }

  /**
   * Appends: the runs updated since the connection dropped (less the lease timeout, for clocks of
   * other hosts) and not last written here. Leases: every run, as a release leaves no time behind.
   */
  private async catchUp(droppedAt: number): Promise<void> {
    const { rows } = await this.device.query<{ run_id: string; last_seq: number | null }>(
      this.kind === 'leases'
        ? 'SELECT run_id, NULL AS last_seq FROM ac_leases ORDER BY run_id'
        : 'SELECT run_id, last_seq FROM ac_runs WHERE updated_at >= $1 ORDER BY updated_at',
      this.kind === 'leases' ? [] : [droppedAt - this.device.leaseTimeoutMs],
    );
    for (const row of rows) if (!this.closed && this.device.ownLast.get(row.run_id) !== row.last_seq) this.tell(row.run_id);
  }
}
