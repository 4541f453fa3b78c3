import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { SYSTEM_ACCOUNTS } from '../src/core/ledger/ledger.js';
import { luhnCheckDigit, maskPan } from '../src/core/provider/luhn.js';
import { percentOf, type Cents } from '../src/core/ledger/money.js';
import type { CardDataCipher } from '../src/core/keys/secrets.js';
import { openSqlite, parseDatabaseUrl } from '../src/db/database.js';

/**
 * Fills a database the core has migrated and seeded (`startCore`) with users, wallets, cards and a
 * history of money movements, fast. One generator (`Seeder`) draws the rows; a writer per dialect
 * stores them:
 * - SQLite: raw better-sqlite3, prepared statements, one transaction per chunk, no journal or flush
 *   while it writes. No other connection may be open on the file meanwhile (the journal mode changes).
 * - Postgres: `pg`, each chunk's rows of a table in one INSERT of `unnest`ed arrays, all in one
 *   transaction with the triggers off (`session_replication_role = replica`, else the statement
 *   lines' own triggers disabled), then `VACUUM (ANALYZE)`. No other writer may use the schema meanwhile.
 * What it writes keeps the core's rules, so `ledger check` balances:
 * - each movement is one balanced journal (`<kind>:<transaction id>`) with its entries, and the
 *   balances of the user accounts it moves; system accounts get entries only (src/core/ledger/ledger.ts);
 * - cards are sealed with the card-data cipher under the same contexts as `sealCardData`;
 * - no user balance goes below zero and no card's deposit passes its plan's limit;
 * - timestamps rise with the statement's order and end before `until`;
 * - each line takes its card's next position (migrations/20261124_04_card_positions.ts), and the
 *   card's counts row counts it and keeps its last position: on SQLite the triggers do, on Postgres
 *   (whose trigger would stamp the position itself) the seed writes the counts rows after the lines.
 * Declined purchases are statement lines without a journal, as the core records them.
 */
export interface SeedOptions {
  /** Cards to add, with their users (`cardsPerUser` each) and accounts. */
  cards: number;
  /** Statement lines to add across those cards (and `focus`'s), each with its journal when approved. */
  transactions: number;
  cardsPerUser?: number;
  /** A card already in the database (made through the core) that gets `transactions` of its own, spread through the history. */
  focus?: { cardId: string; transactions: number };
  cipher: CardDataCipher;
  /** Every seeded timestamp is before this. */
  until: Date;
  /** Seeds the pseudo-random choices (amounts, kinds, cards): the same options give the same history. */
  seed?: number;
}

export interface SeedReport {
  users: number;
  cards: number;
  transactions: number;
  journals: number;
  seconds: number;
}

const CHUNK = 50_000;
const HISTORY_DAYS = 365;
const MERCHANTS = ['Google Ads', 'Meta Ads', 'Amazon Web Services', 'Netflix', 'Spotify', 'Figma', 'Notion', 'Steam', 'Uber'];
const WALLET_DEPOSIT: Cents = 10_000_000;

/**
 * The columns the seed writes, per table, in the order its rows give them; the tables in an order
 * in which every row refers only to rows of tables before it (or of its own, written earlier).
 * Serial columns it leaves out take their defaults; accounts and journals get ids of the seed's own.
 */
const TABLES = {
  accounts: ['id', 'kind', 'code', 'balance', 'updated_at'],
  users: ['id', 'name', 'wallet_account_id', 'created_at'],
  api_tokens: ['id', 'user_id', 'token_hash', 'prefix', 'created_at', 'revoked_at', 'last_used_at'],
  journals: ['id', 'reference', 'kind', 'created_at'],
  cards: [
    'id',
    'user_id',
    'account_id',
    'bin_id',
    'plan_id',
    'name',
    'category',
    'status',
    'currency',
    'three_ds',
    'masked_pan',
    'pan_encrypted',
    'cvv_encrypted',
    'exp',
    'provider_card_id',
    'provider_ready',
    'address',
    'limit_amount',
    'deposit',
    'last_topup_attempt_at',
    'last_withdraw_attempt_at',
    'created_at',
    'updated_at',
  ],
  entries: ['journal_id', 'account_id', 'amount'],
  card_transactions: [
    'id',
    'card_id',
    'user_id',
    'card_position',
    'journal_id',
    'status',
    'side',
    'amount',
    'currency',
    'type',
    'merchant_name',
    'original_amount',
    'original_currency',
    'decline_code',
    'created_at',
    'updated_at',
  ],
} as const satisfies Record<string, readonly string[]>;

type SeededTable = keyof typeof TABLES;
type Value = string | number | null;
const SEEDED_TABLES = Object.keys(TABLES) as SeededTable[];

/** What the seed leaves to write once every row is in: balances, deposits and, where no trigger counted them, the statements' counts. */
interface SeedEnd {
  at: string;
  balances: { accountId: number; balance: Cents }[];
  deposits: { cardId: string; deposit: Cents }[];
  /** Each card given lines: how many, and the position of its last. */
  statements: { userId: string; cardId: string; lines: number; lastPosition: number }[];
}

/** Where the generator's rows go. */
interface SeedSink {
  /** A row of `table`, its values in the order of `TABLES[table]`. */
  insert(table: SeededTable, values: Value[]): void;
  end(end: SeedEnd): void;
}

/** What the seed reads before it writes: the core's catalogue, fees, system accounts and the focus card. */
interface Basis {
  nextAccount: number;
  nextJournal: number;
  system: Record<keyof typeof SYSTEM_ACCOUNTS, number>;
  fees: Map<string, { percentBps: number; fixed: Cents }>;
  catalogue: Catalogue;
  focus?: FocusRow;
}

interface FocusRow {
  id: string;
  user_id: string;
  account_id: number;
  category: 'Wallet' | 'Online';
  currency: string;
  limit_amount: number;
  deposit: number;
  balance: number;
  wallet_account_id: number;
  wallet_balance: number;
  last_position: number;
}

type Row = Record<string, unknown>;
/** Runs a query whose parameters are `?` (turned into `$n` for Postgres). */
type Query = (sql: string, params?: Value[]) => Promise<Row[]>;

/** Rows' numbers as numbers: Postgres gives bigints as strings unless the core's parser is set. */
function numbers<T>(row: Row, ...columns: string[]): T {
  const copy = { ...row };
  for (const column of columns) if (copy[column] !== null && copy[column] !== undefined) copy[column] = Number(copy[column]);
  return copy as T;
}

async function readBasis(query: Query, focusCardId: string | undefined): Promise<Basis> {
  const [top] = await query(
    'select (select coalesce(max(id), 0) from accounts) as account, (select coalesce(max(id), 0) from journals) as journal',
  );
  const systemRows = await query("select code, id from accounts where kind = 'system'");
  const byCode = new Map(systemRows.map((r) => [r.code as string, Number(r.id)]));
  const system = Object.fromEntries(
    Object.entries(SYSTEM_ACCOUNTS).map(([name, code]) => {
      const id = byCode.get(code);
      if (id === undefined) throw new Error(`No system account ${code}: start the core on the database first`);
      return [name, id];
    }),
  ) as Basis['system'];
  const fees = (await query('select category, percent_bps, fixed_amount from platform_fees')).map((r) =>
    numbers<{ category: string; percent_bps: number; fixed_amount: number }>(r, 'percent_bps', 'fixed_amount'),
  );
  const bins = (await query('select id, bin, wallet, currency, country, three_ds, initial_balance from bins where enabled = 1')).map((r) =>
    numbers<Catalogue['bins'][number]>(r, 'wallet', 'three_ds', 'initial_balance'),
  );
  const plans = (await query('select id, limit_amount, creation_fee from plans where active = 1')).map((r) =>
    numbers<Catalogue['plans'][number]>(r, 'id', 'limit_amount', 'creation_fee'),
  );
  if (bins.length === 0 || plans.length === 0) throw new Error('No BIN or plan: start the core on the database first');
  let focus: FocusRow | undefined;
  if (focusCardId !== undefined) {
    const [row] = await query(
      `select cards.id, cards.user_id, cards.account_id, cards.category, cards.currency, cards.limit_amount, cards.deposit,
       card_account.balance as balance, users.wallet_account_id, wallet.balance as wallet_balance,
       coalesce(counts.last_position, 0) as last_position
       from cards
       join accounts card_account on card_account.id = cards.account_id
       join users on users.id = cards.user_id
       join accounts wallet on wallet.id = users.wallet_account_id
       left join card_transaction_counts counts on counts.user_id = cards.user_id and counts.card_id = cards.id
       where cards.id = ?`,
      [focusCardId],
    );
    if (!row) throw new Error(`No card ${focusCardId} to seed`);
    focus = numbers<FocusRow>(
      row,
      'account_id',
      'limit_amount',
      'deposit',
      'balance',
      'wallet_account_id',
      'wallet_balance',
      'last_position',
    );
  }
  return {
    nextAccount: Number(top!.account) + 1,
    nextJournal: Number(top!.journal) + 1,
    system,
    fees: new Map(fees.map((f) => [f.category, { percentBps: f.percent_bps, fixed: f.fixed_amount }])),
    catalogue: { bins, plans },
    focus,
  };
}

/** An account whose balance the seed keeps, as `postJournal` does; system accounts keep none. */
interface Account {
  id: number;
  balance: Cents;
  system: boolean;
  moved: boolean;
}

interface SeedUser {
  id: string;
  wallet: Account;
}

interface SeedCard {
  id: string;
  user: SeedUser;
  account: Account;
  category: 'Wallet' | 'Online';
  currency: string;
  limit: Cents;
  deposit: Cents;
  depositMoved: boolean;
  /** The position of the card's last statement line (migrations/20261124_04_card_positions.ts). */
  lastPosition: number;
  /** Lines the seed gave it. */
  lines: number;
}

interface Catalogue {
  bins: { id: string; bin: string; wallet: number; currency: string; country: string; three_ds: number; initial_balance: number }[];
  plans: { id: number; limit_amount: number; creation_fee: number }[];
}

/** mulberry32: small, fast and good enough to pick amounts and cards. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * Version 4 UUIDs in ascending order: random but for their first 8 hex digits, which count up evenly
 * through their range. Each insert into a unique index of them (card and statement ids, journal
 * references) lands at the index's end instead of at a random page, which is several times faster.
 */
class AscendingUuids {
  #next = 0;

  constructor(private readonly count: number) {}

  take(): string {
    if (this.#next >= this.count) throw new Error('The seed drew more ids than it reserved');
    const prefix = Math.floor((this.#next++ * 0x1_0000_0000) / this.count);
    return prefix.toString(16).padStart(8, '0') + randomUUID().slice(8);
  }
}

/** Seeds `databaseUrl`, a SQLite file or a Postgres URL (see `SeedOptions`); returns what it wrote and how long it took. */
export async function seedBenchData(databaseUrl: string, options: SeedOptions): Promise<SeedReport> {
  const started = performance.now();
  const target = parseDatabaseUrl(databaseUrl);
  const report = target.kind === 'postgres' ? await seedPostgres(target.url, options) : await seedSqlite(target.file, options);
  return { ...report, seconds: (performance.now() - started) / 1000 };
}

// SQLite

class SqliteSink implements SeedSink {
  readonly #inserts: Map<SeededTable, BetterSqlite3.Statement>;
  readonly #balance: BetterSqlite3.Statement;
  readonly #deposit: BetterSqlite3.Statement;

  constructor(db: BetterSqlite3.Database) {
    this.#inserts = new Map(
      SEEDED_TABLES.map((table) => {
        const columns = TABLES[table];
        return [table, db.prepare(`insert into ${table} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`)];
      }),
    );
    this.#balance = db.prepare('update accounts set balance = ?, updated_at = ? where id = ?');
    this.#deposit = db.prepare('update cards set deposit = ?, updated_at = ? where id = ?');
  }

  insert(table: SeededTable, values: Value[]): void {
    this.#inserts.get(table)!.run(values);
  }

  /** The triggers counted each line as it went in. */
  end({ at, balances, deposits }: SeedEnd): void {
    for (const { cardId, deposit } of deposits) this.#deposit.run(deposit, at, cardId);
    for (const { accountId, balance } of balances) this.#balance.run(balance, at, accountId);
  }
}

/**
 * Runs `work` with the tables' own indexes dropped, then makes them again from their own SQL: one
 * sort per index instead of a million inserts at random places (several times slower). Indexes of
 * unique constraints stay (they have no SQL of their own); the ids they hold are drawn in order (`AscendingUuids`).
 */
function withoutSecondaryIndexes<T>(db: BetterSqlite3.Database, tables: string[], work: () => T): T {
  const indexes = db
    .prepare(
      `select name, sql from sqlite_master where type = 'index' and sql is not null and tbl_name in (${tables.map(() => '?').join(', ')})`,
    )
    .all(...tables) as { name: string; sql: string }[];
  for (const { name } of indexes) db.exec(`drop index "${name}"`);
  try {
    return work();
  } finally {
    for (const { sql } of indexes) db.exec(sql);
  }
}

async function seedSqlite(file: string, options: SeedOptions): Promise<Omit<SeedReport, 'seconds'>> {
  const db = openSqlite(file);
  try {
    db.pragma('journal_mode = MEMORY');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -262144');
    db.pragma('temp_store = MEMORY');
    // Every row written refers to rows written before it or read from the database; the seed test runs foreign_key_check.
    db.pragma('foreign_keys = OFF');
    const basis = await readBasis(async (sql, params = []) => db.prepare(sql).all(...params) as Row[], options.focus?.cardId);
    return withoutSecondaryIndexes(db, SEEDED_TABLES, () => {
      const steps = new Seeder(basis, new SqliteSink(db), options).run();
      // A transaction per chunk.
      for (;;) {
        db.exec('begin');
        let step: IteratorResult<void, Omit<SeedReport, 'seconds'>>;
        try {
          step = steps.next();
          db.exec('commit');
        } catch (error) {
          if (db.inTransaction) db.exec('rollback');
          throw error;
        }
        if (step.done) return step.value;
      }
    });
  } finally {
    db.pragma('foreign_keys = ON');
    db.pragma('synchronous = FULL');
    db.pragma('journal_mode = WAL');
    db.close();
  }
}

// Postgres

/** Collects each chunk's rows column by column, and writes a table's in one INSERT of `unnest`ed arrays. */
class PostgresSink implements SeedSink {
  #rows = new Map<SeededTable, Value[][]>();
  #end: SeedEnd | undefined;

  /** `types`: each seeded column's type, by `table.column`. */
  constructor(private readonly types: Map<string, string>) {}

  insert(table: SeededTable, values: Value[]): void {
    let columns = this.#rows.get(table);
    if (!columns) {
      columns = TABLES[table].map(() => []);
      this.#rows.set(table, columns);
    }
    for (let i = 0; i < values.length; i++) columns[i]!.push(values[i]!);
  }

  end(end: SeedEnd): void {
    this.#end = end;
  }

  #array(table: string, column: string, index: number): string {
    const type = this.types.get(`${table}.${column}`);
    if (!type) throw new Error(`No column ${table}.${column}`);
    return `$${index + 1}::${type}[]`;
  }

  /** Writes what the generator has given since the last flush, the tables in `TABLES`'s order. */
  async flush(client: pg.Client): Promise<void> {
    for (const table of SEEDED_TABLES) {
      const columns = this.#rows.get(table);
      if (!columns) continue;
      const names = TABLES[table];
      const arrays = names.map((name, i) => this.#array(table, name, i));
      await client.query(`insert into ${table} (${names.join(', ')}) select * from unnest(${arrays.join(', ')})`, columns);
    }
    this.#rows.clear();
    const end = this.#end;
    if (!end) return;
    this.#end = undefined;
    await client.query(
      `update accounts set balance = moved.balance, updated_at = $3
       from unnest($1::integer[], $2::bigint[]) as moved (id, balance) where accounts.id = moved.id`,
      [end.balances.map((b) => b.accountId), end.balances.map((b) => b.balance), end.at],
    );
    await client.query(
      `update cards set deposit = moved.deposit, updated_at = $3
       from unnest($1::text[], $2::bigint[]) as moved (id, deposit) where cards.id = moved.id`,
      [end.deposits.map((d) => d.cardId), end.deposits.map((d) => d.deposit), end.at],
    );
    // What the BEFORE INSERT trigger (off while seeding) would have done line by line.
    await client.query(
      `insert into card_transaction_counts as counts (user_id, card_id, transactions, last_position)
       select * from unnest($1::text[], $2::text[], $3::bigint[], $4::integer[])
       on conflict (user_id, card_id) do update
       set transactions = counts.transactions + excluded.transactions, last_position = excluded.last_position`,
      [
        end.statements.map((s) => s.userId),
        end.statements.map((s) => s.cardId),
        end.statements.map((s) => s.lines),
        end.statements.map((s) => s.lastPosition),
      ],
    );
  }
}

/**
 * Turns the triggers off for the transaction: `session_replication_role = replica` (a superuser's)
 * skips every trigger, the foreign keys' checks too; otherwise the statement lines' own triggers are
 * disabled (the table owner's right) until `enable`. Returns whether it took the second way.
 */
async function triggersOff(client: pg.Client): Promise<{ enable(): Promise<void> }> {
  await client.query('savepoint replica');
  try {
    await client.query('set local session_replication_role = replica');
    await client.query('release savepoint replica');
    return { enable: async () => undefined };
  } catch {
    await client.query('rollback to savepoint replica');
    await client.query('alter table card_transactions disable trigger user');
    return {
      enable: async () => {
        await client.query('alter table card_transactions enable trigger user');
      },
    };
  }
}

/**
 * One transaction: the seeded tables' secondary indexes dropped and made again at the end (as on SQLite;
 * indexes of constraints stay), the rows, the serial ids moved past the seed's own; then `VACUUM (ANALYZE)`.
 */
async function seedPostgres(url: string, options: SeedOptions): Promise<Omit<SeedReport, 'seconds'>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    let report: Omit<SeedReport, 'seconds'>;
    await client.query('begin');
    try {
      const triggers = await triggersOff(client);
      await client.query("set local maintenance_work_mem = '256MB'");
      const query: Query = async (sql, params = []) => {
        let n = 0;
        return (
          await client.query(
            sql.replace(/\?/g, () => `$${++n}`),
            params,
          )
        ).rows as Row[];
      };
      const basis = await readBasis(query, options.focus?.cardId);
      const types = new Map(
        (
          await client.query<{ name: string; type: string }>(
            `select table_name || '.' || column_name as name, data_type as type from information_schema.columns
             where table_schema = current_schema() and table_name = any($1)`,
            [SEEDED_TABLES],
          )
        ).rows.map((r) => [r.name, r.type]),
      );
      const indexes = (
        await client.query<{ name: string; sql: string }>(
          `select indexname as name, indexdef as sql from pg_indexes
           where schemaname = current_schema() and tablename = any($1)
           and indexname not in (select conname from pg_constraint where connamespace = current_schema()::regnamespace)`,
          [SEEDED_TABLES],
        )
      ).rows;
      for (const { name } of indexes) await client.query(`drop index "${name}"`);

      const sink = new PostgresSink(types);
      const steps = new Seeder(basis, sink, options).run();
      for (;;) {
        const step = steps.next();
        await sink.flush(client);
        if (step.done) {
          report = step.value;
          break;
        }
      }

      for (const { sql } of indexes) await client.query(sql);
      for (const table of ['accounts', 'journals'])
        await client.query(`select setval(pg_get_serial_sequence($1, 'id'), max(id)) from ${table}`, [table]);
      await triggers.enable();
      await client.query('commit');
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    }
    // The balances and deposits written last leave a dead version of every account and card row, which each
    // index scan steps over until a vacuum clears it (a card read visited 11 buffers instead of 8): as
    // autovacuum would have left a database that grew over a year.
    await client.query(`vacuum (analyze) ${[...SEEDED_TABLES, 'card_transaction_counts'].join(', ')}`);
    return report;
  } finally {
    await client.end();
  }
}

// The rows

class Seeder {
  readonly #rand: () => number;
  readonly #start: number;
  readonly #span: number;
  #nextAccount: number;
  #nextJournal: number;
  #journals = 0;
  #ids = new AscendingUuids(0);
  readonly #system: { deposits: Account; merchants: Account; revenue: Account; promotions: Account };
  readonly #fees: Map<string, { percentBps: number; fixed: Cents }>;

  constructor(
    private readonly basis: Basis,
    private readonly sink: SeedSink,
    private readonly options: SeedOptions,
  ) {
    this.#rand = random(options.seed ?? 20261124);
    this.#span = HISTORY_DAYS * 86_400_000;
    this.#start = options.until.getTime() - this.#span;
    this.#nextAccount = basis.nextAccount;
    this.#nextJournal = basis.nextJournal;
    const system = (id: number): Account => ({ id, balance: 0, system: true, moved: false });
    this.#system = {
      deposits: system(basis.system.deposits),
      merchants: system(basis.system.merchants),
      revenue: system(basis.system.revenue),
      promotions: system(basis.system.promotions),
    };
    this.#fees = basis.fees;
  }

  /** An ISO timestamp at `fraction` (0 to 1) of the history. */
  #at(fraction: number): string {
    return new Date(this.#start + Math.floor(fraction * this.#span)).toISOString();
  }

  #pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.#rand() * items.length)]!;
  }

  /** `min` to `max` cents in whole dollars. */
  #amount(min: Cents, max: Cents): Cents {
    const dollars = Math.floor(min / 100) + Math.floor(this.#rand() * (Math.floor(max / 100) - Math.floor(min / 100) + 1));
    return dollars * 100;
  }

  /** Gives every row to the sink; pauses (yields) after each chunk of `CHUNK` cards or movements, and once before the movements. */
  *run(): Generator<void, Omit<SeedReport, 'seconds'>> {
    const { cards: cardCount, transactions } = this.options;
    const perUser = Math.max(1, this.options.cardsPerUser ?? 4);
    const cards: SeedCard[] = [];
    const users = Math.ceil(cardCount / perUser);
    const focusCount = this.options.focus?.transactions ?? 0;
    const total = transactions + focusCount;
    // Per user: id, token id, deposit; per card: id, provider id, initial-balance line; per movement: journal, line.
    this.#ids = new AscendingUuids(3 * users + 3 * cardCount + 2 * total);

    const { catalogue } = this.basis;
    let user: SeedUser | undefined;
    for (let i = 0; i < cardCount; i++) {
      if (i % perUser === 0) user = this.#user(i / perUser);
      cards.push(this.#card(user!, catalogue, i / cardCount));
      if ((i + 1) % CHUNK === 0) yield;
    }
    yield;

    const focus = this.basis.focus ? this.#focusCard(this.basis.focus) : undefined;
    if (cards.length === 0 && total > focusCount) throw new Error('Transactions need cards to go to');
    let focusDone = 0;
    for (let i = 0; i < total; i++) {
      // The focus card's lines spread evenly through the history.
      const isFocus = focus !== undefined && focusDone < focusCount && Math.floor((focusDone * total) / focusCount) === i;
      if (isFocus) focusDone++;
      this.#movement(isFocus ? focus : this.#pick(cards), this.#at(0.1 + (0.9 * i) / total));
      if ((i + 1) % CHUNK === 0) yield;
    }

    const touched = [...cards, ...(focus ? [focus] : [])];
    const accounts = new Set<Account>();
    for (const card of touched) accounts.add(card.account).add(card.user.wallet);
    this.sink.end({
      at: this.options.until.toISOString(),
      balances: [...accounts].filter((a) => a.moved).map((a) => ({ accountId: a.id, balance: a.balance })),
      deposits: touched.filter((c) => c.depositMoved).map((c) => ({ cardId: c.id, deposit: c.deposit })),
      statements: touched
        .filter((c) => c.lines > 0)
        .map((c) => ({ userId: c.user.id, cardId: c.id, lines: c.lines, lastPosition: c.lastPosition })),
    });
    return { users, cards: cards.length, transactions: total, journals: this.#journals };
  }

  #account(kind: 'wallet' | 'card', at: string): Account {
    const id = this.#nextAccount++;
    this.sink.insert('accounts', [id, kind, null, 0, at]);
    return { id, balance: 0, system: false, moved: false };
  }

  #user(index: number): SeedUser {
    const at = this.#at((0.1 * index) / Math.max(1, this.options.cards));
    const wallet = this.#account('wallet', at);
    const user = { id: this.#ids.take(), wallet };
    this.sink.insert('users', [user.id, `Seed user ${index + 1}`, wallet.id, at]);
    // A token nobody holds: only its hash is kept, as for a real one.
    const tokenHash = createHash('sha256').update(randomBytes(32)).digest('hex');
    this.sink.insert('api_tokens', [this.#ids.take(), user.id, tokenHash, 'vc_seed', at, null, null]);
    this.#post('deposit', `deposit:${this.#ids.take()}`, at, [
      [wallet, WALLET_DEPOSIT],
      [this.#system.deposits, -WALLET_DEPOSIT],
    ]);
    return user;
  }

  #card(user: SeedUser, catalogue: Catalogue, fraction: number): SeedCard {
    const at = this.#at(0.1 * fraction);
    const bin = this.#pick(catalogue.bins);
    const plan = this.#pick(catalogue.plans);
    const account = this.#account('card', at);
    const id = this.#ids.take();
    const partial = bin.bin + Array.from({ length: 9 }, () => Math.floor(this.#rand() * 10)).join('');
    const pan = partial + String(luhnCheckDigit(partial));
    const cvv = String(Math.floor(this.#rand() * 1000)).padStart(3, '0');
    const expires = new Date(at);
    const exp = `${String(expires.getUTCMonth() + 1).padStart(2, '0')}/${String((expires.getUTCFullYear() + 3) % 100).padStart(2, '0')}`;
    const address =
      bin.country === 'GB'
        ? { city: 'London', line1: '1 Sandbox Street', line2: null, state: 'London', country: 'GB', postalCode: 'EC1A 1BB' }
        : {
            city: 'San Francisco',
            line1: '100 Sandbox Avenue',
            line2: 'Suite 200',
            state: 'CA',
            country: bin.country,
            postalCode: '94105',
          };
    // The creation fee first, as the core charges it; the wallet holds far more than any fee.
    this.#post('creation_fee', `creation-fee:${id}`, at, [
      [user.wallet, -plan.creation_fee],
      [this.#system.revenue, plan.creation_fee],
    ]);
    const { cipher } = this.options;
    this.sink.insert('cards', [
      id,
      user.id,
      account.id,
      bin.id,
      plan.id,
      `Card ${account.id}`,
      bin.wallet ? 'Wallet' : 'Online',
      'active',
      bin.currency,
      bin.three_ds,
      maskPan(pan),
      cipher.encrypt(pan, `${id}:pan`),
      cipher.encrypt(cvv, `${id}:cvv`),
      exp,
      `sbx_${this.#ids.take()}`,
      1,
      JSON.stringify(address),
      plan.limit_amount,
      0,
      null,
      null,
      at,
      at,
    ]);
    const card: SeedCard = {
      id,
      user,
      account,
      category: bin.wallet ? 'Wallet' : 'Online',
      currency: bin.currency,
      limit: plan.limit_amount,
      deposit: 0,
      depositMoved: false,
      lastPosition: 0,
      lines: 0,
    };
    if (bin.initial_balance > 0) {
      const journalId = this.#post('initial_balance', `initial-balance:${id}`, at, [
        [account, bin.initial_balance],
        [this.#system.promotions, -bin.initial_balance],
      ]);
      this.#line(card, journalId, 'Credit', 'initial_balance', bin.initial_balance, 'Initial balance', null, at);
    }
    return card;
  }

  /** A card made through the core, with its owner's wallet: the seed continues from their balances. */
  #focusCard(row: FocusRow): SeedCard {
    return {
      id: row.id,
      user: { id: row.user_id, wallet: { id: row.wallet_account_id, balance: row.wallet_balance, system: false, moved: false } },
      account: { id: row.account_id, balance: row.balance, system: false, moved: false },
      category: row.category,
      currency: row.currency,
      limit: row.limit_amount,
      deposit: row.deposit,
      depositMoved: false,
      lastPosition: row.last_position,
      lines: 0,
    };
  }

  /** One statement line, with its journal when it moves money: mostly purchases, top-ups when the card runs low. */
  #movement(card: SeedCard, at: string): void {
    const roll = this.#rand();
    if (card.account.balance < 1_000 || roll < 0.25) {
      if (this.#topup(card, at)) return;
    }
    if (roll < 0.85 && card.account.balance >= 100) {
      const amount = this.#amount(100, Math.min(card.account.balance, 20_000));
      const journalId = this.#post('purchase', `purchase:${this.#ids.take()}`, at, [
        [card.account, -amount],
        [this.#system.merchants, amount],
      ]);
      this.#line(card, journalId, 'Debit', 'purchase', amount, this.#pick(MERCHANTS), null, at);
    } else if (roll < 0.9 || card.account.balance < 100) {
      this.#line(
        card,
        null,
        'Debit',
        'purchase',
        this.#amount(card.account.balance + 100, card.account.balance + 5_000),
        this.#pick(MERCHANTS),
        'insufficient_funds',
        at,
      );
    } else if (roll < 0.95) {
      const amount = this.#amount(100, 2_000);
      const journalId = this.#post('refund', `refund:${this.#ids.take()}`, at, [
        [card.account, amount],
        [this.#system.merchants, -amount],
      ]);
      this.#line(card, journalId, 'Credit', 'refund', amount, this.#pick(MERCHANTS), null, at);
    } else {
      const amount = this.#amount(100, card.account.balance);
      const journalId = this.#post('withdrawal', `withdraw:${this.#ids.take()}`, at, [
        [card.account, -amount],
        [card.user.wallet, amount],
      ]);
      this.#line(card, journalId, 'Debit', 'withdrawal', amount, 'Wallet', null, at);
    }
  }

  /** A top-up with its platform fee, as the core computes it; false when the plan's limit or the wallet does not allow one. */
  #topup(card: SeedCard, at: string): boolean {
    const amount = this.#amount(500, 10_000);
    const fee = this.#fees.get(card.category);
    const charged = fee ? percentOf(amount, fee.percentBps) + fee.fixed : 0;
    if (card.deposit + amount > card.limit || card.user.wallet.balance < amount + charged) return false;
    const journalId = this.#post('topup', `topup:${this.#ids.take()}`, at, [
      [card.user.wallet, -(amount + charged)],
      [card.account, amount],
      [this.#system.revenue, charged],
    ]);
    card.deposit += amount;
    card.depositMoved = true;
    this.#line(card, journalId, 'Credit', 'topup', amount, 'Wallet top-up', null, at);
    return true;
  }

  /** A balanced journal and its entries, moving the user accounts' balances; returns its id. */
  #post(kind: string, reference: string, at: string, postings: [Account, Cents][]): number {
    const id = this.#nextJournal++;
    const values: number[] = [];
    let sum = 0;
    for (const [account, amount] of postings) {
      if (amount === 0) continue;
      sum += amount;
      values.push(id, account.id, amount);
      if (account.system) continue;
      account.balance += amount;
      account.moved = true;
      if (account.balance < 0) throw new Error(`Seeded journal ${kind} overdraws account ${account.id}`);
    }
    if (sum !== 0) throw new Error(`Unbalanced seeded journal ${kind}`);
    this.#journals++;
    this.sink.insert('journals', [id, reference, kind, at]);
    // A journal moving nothing (a free plan's creation fee) has no entries, as in `postJournal`.
    for (let i = 0; i < values.length; i += 3) this.sink.insert('entries', values.slice(i, i + 3));
    return id;
  }

  #line(
    card: SeedCard,
    journalId: number | null,
    side: 'Debit' | 'Credit',
    type: string,
    amount: Cents,
    merchant: string,
    declineCode: string | null,
    at: string,
  ): void {
    const id = this.#ids.take();
    const status = declineCode === null ? 'Approved' : 'Declined';
    card.lines++;
    this.sink.insert('card_transactions', [
      id,
      card.id,
      card.user.id,
      ++card.lastPosition,
      journalId,
      status,
      side,
      amount,
      card.currency,
      type,
      merchant,
      amount,
      card.currency,
      declineCode,
      at,
      at,
    ]);
  }
}
