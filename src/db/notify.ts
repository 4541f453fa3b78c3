import { PostgresAdapter, sql, type Kysely } from 'kysely';
import pg from 'pg';
import { loggableError } from '../infra/log-safe.js';
import type { Logger } from '../infra/logger.js';

/** The channel on which new core events are announced (`recordEvent`). */
export const EVENTS_CHANNEL = 'card_events';

/**
 * Announces on `channel` that something was written: on Postgres a `NOTIFY`, which inside a
 * transaction is sent when the transaction commits (and never if it rolls back); on SQLite nothing
 * (one process or a few over a file; they poll). The payload is the current schema, so deployments
 * (and tests) sharing a database in schemas of their own wake only their own listeners. Notifications
 * alike within one transaction are sent once.
 */
export async function notifyOnCommit(ex: Pick<Kysely<unknown>, 'getExecutor'>, channel: string): Promise<void> {
  if (!(ex.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`select pg_notify(${channel}, coalesce(current_schema(), ''))`.execute(ex);
}

export interface Listener {
  /** Settles once the first `LISTEN` is in place (never while Postgres cannot be reached). */
  ready: Promise<void>;
  close(): Promise<void>;
}

export interface ListenOptions {
  /** The database's URL, its schema (search_path) included. */
  url: string;
  channel: string;
  /** Called for each notification in this schema, and after each (re)connection: what was announced while nobody listened is looked for then. */
  onNotify: () => void;
  logger?: Logger;
  /** The first wait before connecting again after a failure; doubles with each failure in a row. Default 100 ms. */
  minBackoffMs?: number;
  /** The longest wait between attempts. Default 30 s. */
  maxBackoffMs?: number;
  /** How often the idle connection is checked, so one silently dropped is noticed. Default 30 s. */
  pingMs?: number;
}

/**
 * Listens for `notifyOnCommit` on a connection of its own (a `pg.Client`, outside any pool: a
 * `LISTEN` belongs to its session). A connection that drops (an error, Postgres restarting, a ping
 * unanswered) is opened again after a back-off; meanwhile the listener's owner polls. The drop is
 * logged once and the return once.
 */
export function listenForNotifications(options: ListenOptions): Listener {
  const minBackoffMs = options.minBackoffMs ?? 100;
  const maxBackoffMs = options.maxBackoffMs ?? 30_000;
  const pingMs = options.pingMs ?? 30_000;
  let closed = false;
  let client: pg.Client | undefined;
  let failures = 0;
  let retry: NodeJS.Timeout | undefined;
  let ping: NodeJS.Timeout | undefined;
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));

  const connect = async (): Promise<void> => {
    if (closed) return;
    const connection = new pg.Client({
      connectionString: options.url,
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
      query_timeout: 10_000,
    });
    client = connection;
    let schema: string | undefined;
    let lost = false;
    const drop = (error: unknown) => {
      if (lost || closed) return;
      lost = true;
      clearInterval(ping);
      connection.removeAllListeners('notification');
      connection.end().catch(() => undefined);
      failures++;
      if (failures === 1) {
        options.logger?.warn(
          { err: loggableError(error), channel: options.channel },
          'listening for database notifications failed; reconnecting (polling meanwhile)',
        );
      }
      retry = setTimeout(() => void connect(), Math.min(maxBackoffMs, minBackoffMs * 2 ** Math.min(failures - 1, 20)));
      retry.unref();
    };
    connection.on('error', drop);
    connection.on('end', () => drop(new Error('the listening connection ended')));
    connection.on('notification', (message) => {
      if (message.channel === options.channel && (message.payload ?? '') === schema) options.onNotify();
    });
    try {
      await connection.connect();
      const { rows } = await connection.query<{ schema: string }>(`select coalesce(current_schema(), '') as schema`);
      schema = rows[0]?.schema ?? '';
      await connection.query(`listen ${connection.escapeIdentifier(options.channel)}`);
    } catch (error) {
      drop(error);
      return;
    }
    if (lost || closed) return;
    if (failures > 0) options.logger?.info({ channel: options.channel, failures }, 'listening for database notifications again');
    failures = 0;
    ping = setInterval(() => void connection.query('select 1').catch(drop), pingMs);
    ping.unref();
    markReady();
    options.onNotify();
  };
  void connect();

  return {
    ready,
    async close() {
      closed = true;
      clearTimeout(retry);
      clearInterval(ping);
      await client?.end().catch(() => undefined);
    },
  };
}
