import pg from 'pg';
import { COUNT_STATEMENT } from '../../src/db/shared-pool.js';

export interface SentQuery {
  text: string;
  /** The prepared statement's name, for a named one. */
  name?: string;
}

/**
 * The queries node-postgres sends while `run` runs, counted at the driver: it sends one query at a time
 * on a connection and waits for its answer, so each is one round trip to the server. The shared pool's
 * count of its processes, every two seconds on one of the pool's connections, is not one of them.
 */
export async function queriesSent<T>(run: () => Promise<T>): Promise<{ result: T; queries: SentQuery[] }> {
  const send = pg.Client.prototype.query;
  const queries: SentQuery[] = [];
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [first] = args;
    const query =
      typeof first === 'string'
        ? { text: first }
        : { text: String((first as { text?: string }).text), name: (first as { name?: string }).name };
    if (query.text !== COUNT_STATEMENT) queries.push(query);
    return (send as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof send;
  try {
    return { result: await run(), queries };
  } finally {
    pg.Client.prototype.query = send;
  }
}
