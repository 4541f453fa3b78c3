import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type BetterSqlite3 from 'better-sqlite3';
import { SYSTEM_ACCOUNTS } from '../src/core/ledger/ledger.js';
import { luhnCheckDigit, maskPan } from '../src/core/provider/luhn.js';
import { percentOf, type Cents } from '../src/core/ledger/money.js';
import type { CardDataCipher } from '../src/core/keys/secrets.js';
import { openSqlite } from '../src/db/database.js';

/**
 * Fills a SQLite file the core has migrated and seeded (`startCore`) with users, wallets, cards and a
 * history of money movements, fast: raw better-sqlite3, prepared statements, one transaction per
 * chunk, no journal or flush while it writes. No other connection may be open on the file meanwhile
 * (the journal mode changes). What it writes keeps the core's rules, so `ledger check` balances:
 * - each movement is one balanced journal (`<kind>:<transaction id>`) with its entries, and the
 *   balances of the user accounts it moves; system accounts get entries only (src/core/ledger/ledger.ts);
 * - cards are sealed with the card-data cipher under the same contexts as `sealCardData`;
 * - no user balance goes below zero and no card's deposit passes its plan's limit;
 * - timestamps rise with the statement's order and end before `until`;
 * - each line takes its card's next position (migrations/20261124_04_card_positions.ts); the triggers
 *   count it and keep the card's last position.
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

function statements(db: BetterSqlite3.Database) {
  return {
    account: db.prepare('insert into accounts (id, kind, code, balance, updated_at) values (?, ?, null, 0, ?)'),
    user: db.prepare('insert into users (id, name, wallet_account_id, created_at) values (?, ?, ?, ?)'),
    token: db.prepare(
      'insert into api_tokens (id, user_id, token_hash, prefix, created_at, revoked_at, last_used_at) values (?, ?, ?, ?, ?, null, null)',
    ),
    card: db.prepare(
      `insert into cards (id, user_id, account_id, bin_id, plan_id, name, category, status, currency, three_ds, masked_pan,
       pan_encrypted, cvv_encrypted, exp, provider_card_id, provider_ready, address, limit_amount, deposit,
       last_topup_attempt_at, last_withdraw_attempt_at, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, 0, null, null, ?, ?)`,
    ),
    journal: db.prepare('insert into journals (id, reference, kind, created_at) values (?, ?, ?, ?)'),
    entries2: db.prepare('insert into entries (journal_id, account_id, amount) values (?, ?, ?), (?, ?, ?)'),
    entries3: db.prepare('insert into entries (journal_id, account_id, amount) values (?, ?, ?), (?, ?, ?), (?, ?, ?)'),
    line: db.prepare(
      `insert into card_transactions (id, card_id, user_id, card_position, journal_id, status, side, amount, currency, type,
       merchant_name, original_amount, original_currency, decline_code, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    balance: db.prepare('update accounts set balance = ?, updated_at = ? where id = ?'),
    deposit: db.prepare('update cards set deposit = ?, updated_at = ? where id = ?'),
  };
}

const SEEDED_TABLES = ['accounts', 'users', 'api_tokens', 'cards', 'journals', 'entries', 'card_transactions'];

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

/** Seeds `file` (see `SeedOptions`); returns what it wrote and how long it took. */
export function seedBenchData(file: string, options: SeedOptions): SeedReport {
  const started = performance.now();
  const db = openSqlite(file);
  try {
    db.pragma('journal_mode = MEMORY');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -262144');
    db.pragma('temp_store = MEMORY');
    // Every row written refers to rows written before it or read from the database; the seed test runs foreign_key_check.
    db.pragma('foreign_keys = OFF');
    const report = withoutSecondaryIndexes(db, SEEDED_TABLES, () => new Seeder(db, options).run());
    return { ...report, seconds: (performance.now() - started) / 1000 };
  } finally {
    db.pragma('foreign_keys = ON');
    db.pragma('synchronous = FULL');
    db.pragma('journal_mode = WAL');
    db.close();
  }
}

class Seeder {
  readonly #s: ReturnType<typeof statements>;
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
    private readonly db: BetterSqlite3.Database,
    private readonly options: SeedOptions,
  ) {
    this.#s = statements(db);
    this.#rand = random(options.seed ?? 20261124);
    this.#span = HISTORY_DAYS * 86_400_000;
    this.#start = options.until.getTime() - this.#span;
    this.#nextAccount = this.#max('accounts', 'id') + 1;
    this.#nextJournal = this.#max('journals', 'id') + 1;
    const system = (code: string): Account => {
      const row = db.prepare('select id from accounts where code = ?').get(code) as { id: number } | undefined;
      if (!row) throw new Error(`No system account ${code}: start the core on the file first`);
      return { id: row.id, balance: 0, system: true, moved: false };
    };
    this.#system = {
      deposits: system(SYSTEM_ACCOUNTS.deposits),
      merchants: system(SYSTEM_ACCOUNTS.merchants),
      revenue: system(SYSTEM_ACCOUNTS.revenue),
      promotions: system(SYSTEM_ACCOUNTS.promotions),
    };
    const fees = db.prepare('select category, percent_bps, fixed_amount from platform_fees').all() as {
      category: string;
      percent_bps: number;
      fixed_amount: number;
    }[];
    this.#fees = new Map(fees.map((f) => [f.category, { percentBps: f.percent_bps, fixed: f.fixed_amount }]));
  }

  #max(table: string, column: string): number {
    return (this.db.prepare(`select coalesce(max(${column}), 0) as top from ${table}`).get() as { top: number }).top;
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

  run(): Omit<SeedReport, 'seconds'> {
    const { cards: cardCount, transactions } = this.options;
    const perUser = Math.max(1, this.options.cardsPerUser ?? 4);
    const cards: SeedCard[] = [];
    const users = Math.ceil(cardCount / perUser);
    const focusCount = this.options.focus?.transactions ?? 0;
    const total = transactions + focusCount;
    // Per user: id, token id, deposit; per card: id, provider id, initial-balance line; per movement: journal, line.
    this.#ids = new AscendingUuids(3 * users + 3 * cardCount + 2 * total);
    const inChunks = this.db.transaction((from: number, to: number, work: (i: number) => void) => {
      for (let i = from; i < to; i++) work(i);
    });
    const chunked = (count: number, work: (i: number) => void) => {
      for (let from = 0; from < count; from += CHUNK) inChunks(from, Math.min(count, from + CHUNK), work);
    };

    const catalogue = this.#catalogue();
    let user: SeedUser | undefined;
    chunked(cardCount, (i) => {
      if (i % perUser === 0) user = this.#user(i / perUser);
      cards.push(this.#card(user!, catalogue, i / cardCount));
    });

    const focus = this.options.focus ? this.#focusCard(this.options.focus.cardId) : undefined;
    if (cards.length === 0 && total > focusCount) throw new Error('Transactions need cards to go to');
    let focusDone = 0;
    chunked(total, (i) => {
      // The focus card's lines spread evenly through the history.
      const isFocus = focus !== undefined && focusDone < focusCount && Math.floor((focusDone * total) / focusCount) === i;
      if (isFocus) focusDone++;
      this.#movement(isFocus ? focus : this.#pick(cards), this.#at(0.1 + (0.9 * i) / total));
    });

    const at = this.options.until.toISOString();
    const touched = [...cards, ...(focus ? [focus] : [])];
    this.db.transaction(() => {
      const accounts = new Set<Account>();
      for (const card of touched) {
        accounts.add(card.account).add(card.user.wallet);
        if (card.depositMoved) this.#s.deposit.run(card.deposit, at, card.id);
      }
      for (const account of accounts) if (account.moved) this.#s.balance.run(account.balance, at, account.id);
    })();
    return { users, cards: cards.length, transactions: total, journals: this.#journals };
  }

  #catalogue(): Catalogue {
    const bins = this.db
      .prepare('select id, bin, wallet, currency, country, three_ds, initial_balance from bins where enabled = 1')
      .all() as Catalogue['bins'];
    const plans = this.db.prepare('select id, limit_amount, creation_fee from plans where active = 1').all() as Catalogue['plans'];
    if (bins.length === 0 || plans.length === 0) throw new Error('No BIN or plan: start the core on the file first');
    return { bins, plans };
  }

  #account(kind: 'wallet' | 'card', at: string): Account {
    const id = this.#nextAccount++;
    this.#s.account.run(id, kind, at);
    return { id, balance: 0, system: false, moved: false };
  }

  #user(index: number): SeedUser {
    const at = this.#at((0.1 * index) / Math.max(1, this.options.cards));
    const wallet = this.#account('wallet', at);
    const user = { id: this.#ids.take(), wallet };
    this.#s.user.run(user.id, `Seed user ${index + 1}`, wallet.id, at);
    // A token nobody holds: only its hash is kept, as for a real one.
    const tokenHash = createHash('sha256').update(randomBytes(32)).digest('hex');
    this.#s.token.run(this.#ids.take(), user.id, tokenHash, 'vc_seed', at);
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
    this.#s.card.run(
      id,
      user.id,
      account.id,
      bin.id,
      plan.id,
      `Card ${account.id}`,
      bin.wallet ? 'Wallet' : 'Online',
      bin.currency,
      bin.three_ds,
      maskPan(pan),
      cipher.encrypt(pan, `${id}:pan`),
      cipher.encrypt(cvv, `${id}:cvv`),
      exp,
      `sbx_${this.#ids.take()}`,
      JSON.stringify(address),
      plan.limit_amount,
      at,
      at,
    );
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
  #focusCard(cardId: string): SeedCard {
    const row = this.db
      .prepare(
        `select cards.user_id, cards.account_id, cards.category, cards.currency, cards.limit_amount, cards.deposit,
         card_account.balance as balance, users.wallet_account_id, wallet.balance as wallet_balance,
         coalesce(counts.last_position, 0) as last_position
         from cards
         join accounts card_account on card_account.id = cards.account_id
         join users on users.id = cards.user_id
         join accounts wallet on wallet.id = users.wallet_account_id
         left join card_transaction_counts counts on counts.user_id = cards.user_id and counts.card_id = cards.id
         where cards.id = ?`,
      )
      .get(cardId) as
      | {
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
      | undefined;
    if (!row) throw new Error(`No card ${cardId} to seed`);
    return {
      id: cardId,
      user: { id: row.user_id, wallet: { id: row.wallet_account_id, balance: row.wallet_balance, system: false, moved: false } },
      account: { id: row.account_id, balance: row.balance, system: false, moved: false },
      category: row.category,
      currency: row.currency,
      limit: row.limit_amount,
      deposit: row.deposit,
      depositMoved: false,
      lastPosition: row.last_position,
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
    this.#s.journal.run(id, reference, kind, at);
    // A journal moving nothing (a free plan's creation fee) has no entries, as in `postJournal`.
    if (values.length === 6) this.#s.entries2.run(values);
    else if (values.length === 9) this.#s.entries3.run(values);
    else if (values.length > 0) throw new Error(`Seeded journal ${kind} with ${values.length / 3} postings`);
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
    this.#s.line.run(
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
    );
  }
}
