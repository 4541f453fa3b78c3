import { PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely';

/**
 * Leases on rows: whoever holds a row's lease works on what the row stands for (a queued row, a chat's
 * updates, the polling of Telegram, a card's status, an Idempotency-Key's request) and no other process
 * does, until the holder gives it back or the lease lapses (the holder died or hangs) and any process may
 * take it. A lease is taken only if free or lapsed, renewed and given back only by its holder, each in one
 * conditional statement, so two processes never both hold it.
 *
 * A row keeps its lease in `claimed_by` and `claimed_until` (`LEASE_COLUMNS`). Three older leases keep the
 * columns they shipped with, named by a `LeaseColumns`: `cards.status_change_until` (no holder column: the
 * until time tells holdings apart), `idempotency_keys.claim_token`/`lease_until`, and the poller's `bot_kv`
 * row (`value`/`updated_at`). Migrations only add (docs/operations.md): a renamed column would break the
 * instances of the previous release that still run during a rolling restart.
 */
export interface LeaseColumns {
  /** Who holds it; absent where the until time alone tells holdings apart. */
  holder?: string;
  /** Until when it holds unless renewed; null once given back. */
  until: string;
  /** The until column holds when the lease was last taken or renewed instead, and it lapses `leaseMs` after that (`bot_kv.updated_at`). */
  stamped?: boolean;
}

export const LEASE_COLUMNS: LeaseColumns = { holder: 'claimed_by', until: 'claimed_until' };

/** Whatever runs a statement: the database or a transaction. */
export type LeaseExecutor = Pick<Kysely<unknown>, 'getExecutor'>;

/** The columns naming a row (its primary key) with their values. */
export type RowKey = Record<string, unknown>;

/** A holding as written: who (where the table says) and until when. */
export interface Held {
  holder?: string;
  until?: string;
}

/** The one test of a free lease: never taken, given back, or lapsed by `at` (an ISO time). `until` may be table-qualified. */
export function freeAt(at: string, until = LEASE_COLUMNS.until): RawBuilder<boolean> {
  const ref = sql.ref(until);
  return sql<boolean>`(${ref} is null or ${ref} <= ${at})`;
}

/**
 * Held as `held` says: by its holder and, when given, until its until time (a holder that takes several
 * holdings, as a process's queue claims do, tells them apart by it); by the until time alone where there
 * is no holder column.
 */
export function heldAs(held: Held, columns: LeaseColumns = LEASE_COLUMNS): RawBuilder<boolean> {
  const parts: RawBuilder<unknown>[] = [];
  if (columns.holder !== undefined && held.holder !== undefined) parts.push(sql`${sql.ref(columns.holder)} = ${held.holder}`);
  if (held.until !== undefined) parts.push(sql`${sql.ref(columns.until)} = ${held.until}`);
  if (parts.length === 0) throw new Error('a holding names its holder or its until time');
  return sql<boolean>`(${sql.join(parts, sql` and `)})`;
}

const isPostgres = (ex: LeaseExecutor) => ex.getExecutor().adapter instanceof PostgresAdapter;

export interface LeaseTable {
  table: string;
  /** The columns naming a row (its primary key). */
  key: readonly string[];
  /** `LEASE_COLUMNS` unless told. */
  columns?: LeaseColumns;
  /** How long a lease lasts unrenewed. */
  leaseMs: number;
}

export interface TakeOptions {
  /** The row's other columns, to write the row when it has none yet (else only an existing row is taken). */
  insert?: RowKey;
  /** More columns to set when taken. */
  set?: RowKey;
  /** A further condition for taking it. */
  where?: RawBuilder<boolean>;
}

export interface ReleaseOptions {
  /** More columns to set as it is given back. */
  set?: RowKey;
  /** A further condition for giving it back. */
  where?: RawBuilder<boolean>;
  /** Gives it back by deleting the row. */
  remove?: boolean;
}

/** Leases on the rows of one table, one row at a time (see `LeaseColumns`). */
export function leasesOn(spec: LeaseTable) {
  const columns = spec.columns ?? LEASE_COLUMNS;
  const table = sql.table(spec.table);
  const untilFrom = (now: Date) => new Date(now.getTime() + (columns.stamped ? 0 : spec.leaseMs)).toISOString();
  const free = (now: Date, untilRef = columns.until) =>
    freeAt(new Date(now.getTime() - (columns.stamped ? spec.leaseMs : 0)).toISOString(), untilRef);
  const where = (row: RowKey, ...more: (RawBuilder<unknown> | undefined)[]) =>
    sql.join([...spec.key.map((column) => sql`${sql.ref(column)} = ${row[column]}`), ...more.filter((m) => m !== undefined)], sql` and `);
  /** A holding as compared: by its holder where the table names one, else by its until time. */
  const ours = (held: Held) => heldAs(columns.holder === undefined ? { until: held.until } : { holder: held.holder }, columns);
  const assign = (values: RowKey) => sql.join(Object.entries(values).map(([column, value]) => sql`${sql.ref(column)} = ${value}`));
  const counted = async (ex: LeaseExecutor, statement: RawBuilder<unknown>) => (await statement.execute(ex)).rows.length > 0;

  return {
    /** The row's lease if free or lapsed, for `holder` (none where the table has no holder column); undefined if held. */
    async take(
      ex: LeaseExecutor,
      row: RowKey,
      holder: string | undefined,
      now: Date,
      options: TakeOptions = {},
    ): Promise<Held | undefined> {
      const held = { holder, until: untilFrom(now) };
      const lease: RowKey = columns.holder === undefined ? {} : { [columns.holder]: holder };
      lease[columns.until] = held.until;
      const values = { ...lease, ...options.set };
      const returning = sql` returning ${sql.ref(columns.until)}`;
      if (options.insert === undefined) {
        return (await counted(ex, sql`update ${table} set ${assign(values)} where ${where(row, free(now), options.where)}${returning}`))
          ? held
          : undefined;
      }
      // One statement writes the row or takes its lease; on Postgres it locks the row until the transaction
      // ends, taken or not (a holder's release in another transaction waits for it).
      const all = { ...row, ...options.insert, ...values };
      const names = Object.keys(all).map((column) => sql.ref(column));
      const excluded = sql.join(Object.keys(values).map((column) => sql`${sql.ref(column)} = ${sql.ref(`excluded.${column}`)}`));
      const statement = sql`insert into ${table} (${sql.join(names)}) values (${sql.join(Object.values(all))})
        on conflict (${sql.join(spec.key.map((column) => sql.ref(column)))}) do update set ${excluded}
        where ${free(now, `${spec.table}.${columns.until}`)}${options.where === undefined ? sql`` : sql` and ${options.where}`}${returning}`;
      return (await counted(ex, statement)) ? held : undefined;
    },

    /** Renews the lease if `held` still holds it: the holding renewed, or undefined once another process took it. */
    async renew(ex: LeaseExecutor, row: RowKey, held: Held, now: Date): Promise<Held | undefined> {
      const until = untilFrom(now);
      const statement = sql`update ${table} set ${sql.ref(columns.until)} = ${until} where ${where(row, ours(held))} returning ${sql.ref(columns.until)}`;
      return (await counted(ex, statement)) ? { holder: held.holder, until } : undefined;
    },

    /** Gives the lease back if `held` still holds it; says whether it did. */
    async release(ex: LeaseExecutor, row: RowKey, held: Held, options: ReleaseOptions = {}): Promise<boolean> {
      const condition = where(row, ours(held), options.where);
      const returning = sql` returning ${sql.ref(columns.until)}`;
      if (options.remove) return counted(ex, sql`delete from ${table} where ${condition}${returning}`);
      const cleared: RowKey = columns.holder === undefined ? {} : { [columns.holder]: null };
      cleared[columns.until] = null;
      return counted(ex, sql`update ${table} set ${assign({ ...cleared, ...options.set })} where ${condition}${returning}`);
    },
  };
}

/**
 * Takes the leases (`LEASE_COLUMNS`) of up to `limit` free rows matching `where`, in `order`, for `held`
 * (holder and until time): one update over a selection, returning the rows taken. On Postgres the selection locks its rows
 * and skips those another transaction is taking (`for update skip locked`), so concurrent takers split the
 * rows instead of waiting for each other; SQLite runs one writer at a time, so the same statement without
 * the locking clause is enough there.
 */
export async function takeMany<Row>(
  ex: LeaseExecutor,
  spec: Pick<LeaseTable, 'table' | 'key'>,
  held: Required<Held>,
  now: string,
  select: { where: RawBuilder<unknown>; order?: readonly string[]; limit: number },
): Promise<Row[]> {
  const table = sql.table(spec.table);
  const key = sql.join(spec.key.map((column) => sql.ref(column)));
  const order = select.order === undefined ? sql`` : sql` order by ${sql.join(select.order.map((column) => sql.ref(column)))}`;
  const lock = isPostgres(ex) ? sql` for update skip locked` : sql``;
  const { rows } = await sql<Row>`
    update ${table} set claimed_by = ${held.holder}, claimed_until = ${held.until}
    where (${key}) in (
      select ${key} from ${table}
      where (${select.where}) and ${freeAt(now)}${order}
      limit ${select.limit}${lock}
    ) and ${freeAt(now)}
    returning *`.execute(ex);
  return rows;
}

/**
 * Keeps a lease renewed while its holder works: `renew` every `everyMs` until `stop`. `lost` is told when
 * a renewal found the lease taken by another process, `failed` when one failed (both keep it going: the
 * holder decides what to do).
 */
export function keepRenewed(
  renew: () => Promise<boolean>,
  everyMs: number,
  tell: { lost(): void; failed(error: unknown): void },
): { stop(): void } {
  const timer = setInterval(() => {
    renew()
      .then((held) => held || tell.lost())
      .catch((error: unknown) => tell.failed(error));
  }, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
