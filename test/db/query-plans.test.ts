import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { type CompiledQuery, Kysely } from 'kysely';
import { botChatLinks } from '../../src/bot/store/link-ends.js';
import { createAdminService } from '../../src/core/admin/admin.js';
import { acceptCardDataKey } from '../../src/core/keys/card-data-keys.js';
import { FakeClock } from '../../src/infra/clock.js';
import type { CoreDeps } from '../../src/core/deps.js';
import { createSandboxMailbox } from '../../src/core/provider/mailbox.js';
import { SandboxCardProvider } from '../../src/core/provider/provider.js';
import { createCardDataCipher } from '../../src/core/keys/secrets.js';
import { createCardService } from '../../src/core/service.js';
import { defaultCoreSettings } from '../../src/core/settings.js';
import { newClaimant } from '../../src/db/claims.js';
import { openSqlite } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { Database } from '../../src/db/schema.js';
import { sqliteDialect } from '../../src/db/sqlite/index.js';
import { TEST_CARD_DATA_KEY } from '../helpers/core.js';

// The tables that grow with use: a hot path must find its rows in them through an index, never by
// reading them whole. The SQL checked is what the core really sends (recorded by Kysely's log while
// each operation runs), so the test follows the code. SQLite only: its planner decides from the
// schema alone (no ANALYZE is ever run), so a small database shows the plan a large one gets, where
// Postgres would rightly scan tables this small.
const LARGE_TABLES = ['cards', 'card_transactions', 'card_transaction_counts', 'journals', 'entries', 'accounts', 'outbox', 'api_tokens'];

interface Recorded {
  operation: string;
  query: CompiledQuery;
}

/** A core like `startCore`'s, on a Kysely that records the statements each operation sends. */
async function recordingCore() {
  const raw = openSqlite(':memory:');
  const recorded: Recorded[] = [];
  let operation: string | undefined;
  const db = new Kysely<Database>({
    dialect: sqliteDialect(raw),
    log: (event) => {
      if (operation !== undefined && event.level === 'query') recorded.push({ operation, query: event.query });
    },
  });
  await migrateToLatest(db);
  const clock = new FakeClock('2026-03-01T12:00:00.000Z');
  const cipher = createCardDataCipher(TEST_CARD_DATA_KEY);
  await acceptCardDataKey(db, cipher, 'the test key', clock.now().toISOString());
  const deps: CoreDeps = {
    db,
    clock,
    provider: new SandboxCardProvider({ clock }),
    mailbox: createSandboxMailbox(db, clock),
    cipher,
    settings: { ...defaultCoreSettings, topupCooldownSeconds: 1, withdrawCooldownSeconds: 1 },
    chatLinks: botChatLinks,
  };
  const admin = createAdminService(deps);
  await admin.seedDefaults();
  return {
    raw,
    db,
    clock,
    admin,
    core: createCardService(deps),
    recorded,
    /** Runs `work`, recording its statements under `name`. */
    async record<T>(name: string, work: () => Promise<T>): Promise<T> {
      operation = name;
      try {
        return await work();
      } finally {
        operation = undefined;
      }
    },
  };
}

/** The tables whose foreign keys name `parent`. */
function childTables(raw: ReturnType<typeof openSqlite>, parent: string | undefined): string[] {
  if (parent === undefined) return [];
  const tables = raw.prepare("select name from sqlite_master where type = 'table'").pluck().all() as string[];
  return tables.filter((table) => (raw.pragma(`foreign_key_list("${table}")`) as { table: string }[]).some((fk) => fk.table === parent));
}

/**
 * The plan lines that read one of `LARGE_TABLES` whole: a `SCAN` of the table, or of an index that does
 * not cover the query. An insert's plan lists a scan of each table whose foreign keys name the table
 * inserted into: SQLite runs it only to settle foreign key violations left pending, which immediate
 * constraints (all of ours) never leave, so those lines are not counted.
 */
function fullScans({ plan, foreignKeyChildren }: PlannedStatement): string[] {
  return plan.filter((line) => {
    const table = /^SCAN (\w+)/.exec(line)?.[1];
    return table !== undefined && LARGE_TABLES.includes(table) && !foreignKeyChildren.includes(table) && !line.includes('COVERING INDEX');
  });
}

interface PlannedStatement {
  operation: string;
  sql: string;
  plan: string[];
  /** For an insert, the tables whose foreign keys name the table inserted into (see `fullScans`). */
  foreignKeyChildren: string[];
}

/** Runs every hot path once on a database with a few users, cards and statements; returns what each sent, with its plan. */
async function planHotPaths(): Promise<PlannedStatement[]> {
  const t = await recordingCore();
  try {
    const { core, admin, clock, record } = t;
    const plans = await core.listPlans();
    const bins = await core.listBins();
    const bin = bins.find((b) => !b.wallet && b.initialBalance === 0)!;
    const walletBin = bins.find((b) => b.initialBalance > 0)!;
    // Rows in every table, around the user measured.
    const people = [];
    for (const name of ['Alice', 'Bob', 'Carol']) {
      const { token } = await admin.createUser({ name, deposit: 10_000_000 });
      const caller = await core.authenticate(token);
      const cards = [];
      for (const b of [bin, walletBin]) cards.push(await core.createCard(caller, { bin_id: b.id, planId: plans[2]!.id, name }));
      for (const card of cards) {
        for (let i = 0; i < 30; i++) {
          clock.advance(1_000);
          await core.topup(caller, card.id, { amount: 1_000 });
          await admin.simulatePurchase(card.id, 300);
        }
      }
      people.push({ token, caller, cards });
    }
    const { token, caller, cards } = people[1]!;
    const card = cards[0]!;

    await record('authenticate', () => core.authenticate(token));
    await record('card read', () => core.getCard(caller, card.id));
    await record('card list', () => core.listCards(caller));
    await record('wallet balance', () => core.walletBalance(caller));
    await record('top-up quote', () => core.quoteTopup(caller, card.id, { amount: 1_000 }));
    clock.advance(2_000);
    await record('top-up', () => core.topup(caller, card.id, { amount: 1_000 }));
    await record('top-up in its cooldown', () => core.topup(caller, card.id, { amount: 1_000 }).catch(() => undefined));
    await record('withdrawal', () => core.withdraw(caller, card.id, { amount: 100 }));
    for (const page of [1, 3]) {
      await record(`card transactions, page ${page}`, () => core.listTransactions(caller, { card_id: card.id, page, limit: 5 }));
      await record(`all transactions, page ${page}`, () => core.listTransactions(caller, { page, limit: 5 }));
    }
    await record('card creation', () => core.createCard(caller, { bin_id: walletBin.id, planId: plans[0]!.id, name: 'New' }));
    await record('purchase', () => admin.simulatePurchase(card.id, 100));
    await record('OTP list', () => core.listOtps(caller, String(card.number)));
    await record('outbox claim', async () => {
      const claim = await core.events.claim(newClaimant(clock));
      for (const item of claim.items.slice(0, 2)) await core.events.markDelivered(item.seq, clock.now());
      await claim.release();
    });

    return t.recorded
      .filter((r) => /^\s*(select|insert|update|delete|with)\b/i.test(r.query.sql))
      .map(({ operation, query }) => ({
        operation,
        sql: query.sql,
        foreignKeyChildren: childTables(t.raw, /^\s*insert into "(\w+)"/i.exec(query.sql)?.[1]),
        plan: (t.raw.prepare(`explain query plan ${query.sql}`).all(...(query.parameters as unknown[])) as { detail: string }[]).map(
          (row) => row.detail,
        ),
      }));
  } finally {
    await t.db.destroy();
  }
}

const show = (s: PlannedStatement) => `${s.operation}: ${s.sql}\n    ${s.plan.join('\n    ')}`;

describe('query plans', () => {
  let statements: PlannedStatement[] = [];

  before(async () => {
    statements = await planHotPaths();
    for (const name of ['card read', 'top-up', 'card transactions, page 3', 'outbox claim'])
      assert.ok(
        statements.some((s) => s.operation === name),
        `recorded no statement for ${name}`,
      );
  });

  test('no hot path reads a whole table of cards, transactions, journals, entries, accounts, tokens or the outbox', () => {
    const problems = statements.filter((s) => fullScans(s).length > 0);
    assert.deepEqual(problems.map(show), []);
  });

  test("a statement page finds its total without visiting the lines; a card's page is a range of its positions, the user's skips the lines before it in an index of the user's own", () => {
    const pages = statements.filter((s) => s.operation.includes('transactions, page'));
    const reads = pages.filter((s) => s.plan.some((line) => /card_transactions\b/.test(line)));
    // One read of the lines per page: the total comes from the counts the database keeps.
    assert.equal(reads.length, pages.filter((s) => s.sql.includes('"card_transaction_counts"')).length, pages.map(show).join('\n'));
    for (const s of reads) {
      const card = s.operation.startsWith('card');
      const search = card
        ? /card_transactions USING INDEX card_transactions_by_card_position \(user_id=\? AND card_id=\? AND card_position>\? AND card_position<\?\)/
        : /card_transactions USING INDEX \w+ \(user_id=\?\)/;
      assert.ok(
        s.plan.some((line) => search.test(line)),
        show(s),
      );
      // A card's lines come in the index's order: nothing left to sort.
      if (card) assert.ok(!s.plan.some((line) => line.includes('TEMP B-TREE')), show(s));
    }
  });
});
