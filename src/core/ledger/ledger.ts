import { getOrCreate } from '../../infra/get-or-create.js';
import { compiledOnce } from '../../db/compiled-query.js';
import type { AccountKind, Executor } from '../../db/schema.js';
import type { Cents } from './money.js';

/** Fixed system accounts; user wallets and cards each have an account of their own. */
export const SYSTEM_ACCOUNTS = {
  /** Where admin deposits come from: money entering the system. */
  deposits: 'external:deposits',
  /** Merchants: card purchases go there, refunds come from there. */
  merchants: 'external:merchants',
  /** Creation fees and platform fees. */
  revenue: 'platform:revenue',
  /** Pays the BINs' initial card balances. */
  promotions: 'platform:initial-balances',
  /**
   * Money held while the card provider is called outside a transaction (a withdrawal's amount, a
   * creation's fee): its entries sum to what `pending_operations` holds, zero when nothing is pending.
   */
  inFlight: 'platform:in-flight',
  /**
   * Card authorizations approved and held, not yet cleared, voided or expired (src/core/authorization/):
   * its entries sum to what the `pending` rows of `card_authorizations` hold (`checkLedger` reconciles them).
   */
  authorized: 'platform:authorized',
} as const;
export type SystemAccount = (typeof SYSTEM_ACCOUNTS)[keyof typeof SYSTEM_ACCOUNTS];

export interface Posting {
  accountId: number;
  amount: Cents;
  /**
   * A system account (`SYSTEM_ACCOUNTS`): its entry is written, its balance row is not moved. Every
   * fee, deposit and purchase names one of a handful of system accounts, so moving their rows would make
   * each such journal wait for the one before it to commit (on Postgres a row lock held to the commit;
   * measured: top-ups did not scale past one API process). Their balance is the sum of their entries.
   */
  system?: true;
}

export interface JournalRequest {
  reference: string;
  kind: string;
  at: string;
  /**
   * Applied in order. Only the first may be refused for want of funds: put the guarded debit first.
   * Only user accounts' rows are locked (system postings write an entry alone).
   */
  postings: Posting[];
}

export interface PostedJournal {
  journalId: number;
  /** Account balances after the journal, by account id (user accounts only). */
  balances: Map<number, Cents>;
}

export async function createAccount(trx: Executor, kind: AccountKind, at: string, code: string | null = null): Promise<number> {
  const row = await trx.insertInto('accounts').values({ kind, code, balance: 0, updated_at: at }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/** A system account's id, created on first use; two processes creating it at once both get the one row. */
export async function systemAccountId(trx: Executor, code: SystemAccount): Promise<number> {
  const row = await trx.selectFrom('accounts').select('id').where('code', '=', code).executeTakeFirst();
  if (row) return row.id;
  await trx
    .insertInto('accounts')
    .values({ kind: 'system', code, balance: 0, updated_at: new Date(0).toISOString() })
    .onConflict((oc) => oc.column('code').doNothing())
    .execute();
  const created = await trx.selectFrom('accounts').select('id').where('code', '=', code).executeTakeFirstOrThrow();
  return created.id;
}

/** A system account's id, looked up once per account (`systemAccountIds`). */
export type SystemAccountIds = (ex: Executor, code: SystemAccount) => Promise<number>;

/**
 * `systemAccountId`, each account looked up once: for one database (a core keeps one, which its
 * operations share). An id never changes once the account exists (the seed creates them all), so one
 * found inside a transaction may be kept for the next.
 */
export function systemAccountIds(): SystemAccountIds {
  const ids = new Map<SystemAccount, number>();
  return async (ex, code) => {
    const id = ids.get(code) ?? (await systemAccountId(ex, code));
    ids.set(code, id);
    return id;
  };
}

/**
 * Writes one balanced journal and moves the balances it names, in the caller's transaction.
 * Returns null, having changed nothing, when the first posting would take a user account below zero;
 * a later posting that cannot apply throws (the caller's transaction then rolls back whole).
 */
export async function postJournal(trx: Executor, journal: JournalRequest): Promise<PostedJournal | null> {
  const postings = journal.postings.filter((p) => p.amount !== 0);
  if (postings.reduce((sum, p) => sum + p.amount, 0) !== 0) {
    throw new Error(`Unbalanced journal ${journal.kind}`);
  }
  const balances = new Map<number, Cents>();
  for (const [index, posting] of postings.entries()) {
    if (posting.system) continue;
    const balance = await moveBalance(trx, posting, journal.at);
    if (balance === null) {
      if (index === 0) return null;
      throw new Error(`Journal ${journal.kind} would overdraw account ${posting.accountId}`);
    }
    balances.set(posting.accountId, balance);
  }
  const [journalRow] = (await insertJournal.execute(trx, journal.reference, journal.kind, journal.at)).rows;
  if (!journalRow) throw new Error(`Journal ${journal.kind} was not written`);
  const journalId = journalRow.id;
  if (postings.length > 0) {
    await insertEntries(postings.length).execute(trx, ...postings.flatMap((p) => [journalId, p.accountId, p.amount]));
  }
  return { journalId, balances };
}

// The hot path of every movement: compiled once, re-executed with new values.
const insertJournal = compiledOnce(3, (trx, reference: string, kind: string, at: string) =>
  trx.insertInto('journals').values({ reference, kind, created_at: at }).returning('id'),
);

const entriesInserts = new Map<number, ReturnType<typeof compileEntriesInsert>>();
function compileEntriesInsert(count: number) {
  return compiledOnce(count * 3, (trx, ...values: number[]) =>
    trx.insertInto('entries').values(
      Array.from({ length: count }, (_, i) => ({
        journal_id: values[3 * i]!,
        account_id: values[3 * i + 1]!,
        amount: values[3 * i + 2]!,
      })),
    ),
  );
}
function insertEntries(count: number) {
  return getOrCreate(entriesInserts, count, () => compileEntriesInsert(count));
}

const addToBalance = compiledOnce(4, (trx, amount: Cents, at: string, accountId: number, sameAmount: Cents) =>
  trx
    .updateTable('accounts')
    .set((eb) => ({ balance: eb('balance', '+', amount), updated_at: at }))
    .where('id', '=', accountId)
    // A system account posted without `system` moves nothing and fails the journal.
    .where('kind', '<>', 'system')
    .where((eb) => eb(eb('balance', '+', sameAmount), '>=', 0))
    .returning('balance'),
);

/** A conditional update: a user account never goes below zero, whatever runs beside it. */
async function moveBalance(trx: Executor, posting: Posting, at: string): Promise<Cents | null> {
  const [row] = (await addToBalance.execute(trx, posting.amount, at, posting.accountId, posting.amount)).rows;
  return row ? Number(row.balance) : null;
}

export interface LedgerDifference {
  accountId: number;
  kind: AccountKind;
  cached: Cents;
  fromEntries: Cents;
  /** Set when the difference is a closed card holding a balance (which should be zero): that card's id. */
  closedCardId?: string;
}

/**
 * Recomputes every user account's balance from the entries; also reports journals whose entries do not sum
 * to zero. System accounts keep no balance of their own (their entries are it), so they count in the total
 * by their entries.
 */
export async function checkLedger(db: Executor): Promise<{
  accounts: number;
  differences: LedgerDifference[];
  unbalancedJournals: number[];
  total: Cents;
}> {
  const rows = await db
    .selectFrom('accounts')
    .leftJoin('entries', 'entries.account_id', 'accounts.id')
    .select((eb) => [
      'accounts.id as id',
      'accounts.kind as kind',
      'accounts.balance as cached',
      eb.fn.coalesce(eb.fn.sum<number>('entries.amount'), eb.lit(0)).as('fromEntries'),
    ])
    .groupBy(['accounts.id', 'accounts.kind', 'accounts.balance'])
    .execute();
  const balances = rows.map((r) => ({ accountId: r.id, kind: r.kind, cached: Number(r.cached), fromEntries: Number(r.fromEntries) }));
  const differences = balances.filter((r) => r.kind !== 'system' && r.cached !== r.fromEntries);
  const held = await unreconciledAuthorizations(db);
  if (held) differences.push(held);
  differences.push(...(await closedCardsHoldingMoney(db)));
  const unbalanced = await db
    .selectFrom('entries')
    .select('journal_id')
    .groupBy('journal_id')
    .having((eb) => eb.fn.sum('amount'), '<>', 0)
    .execute();
  const total = balances.reduce((sum, r) => sum + (r.kind === 'system' ? r.fromEntries : r.cached), 0);
  return { accounts: rows.length, differences, unbalancedJournals: unbalanced.map((r) => r.journal_id), total };
}

/**
 * The held authorizations reconciled: the `platform:authorized` account's entries against what the pending
 * authorizations hold, reported as a difference of that account (its `cached` the pending total) when they part.
 * Both sums are read by one statement, so one snapshot: a hold or a release committing between two reads
 * cannot show a difference that is not there.
 */
async function unreconciledAuthorizations(db: Executor): Promise<LedgerDifference | undefined> {
  const account = await db.selectFrom('accounts').select('id').where('code', '=', SYSTEM_ACCOUNTS.authorized).executeTakeFirst();
  const sums = await db
    .selectNoFrom((eb) => [
      eb
        .selectFrom('card_authorizations')
        .select((s) => s.fn.coalesce(s.fn.sum<number>('amount'), s.lit(0)).as('held'))
        .where('status', '=', 'pending')
        .as('held'),
      eb
        .selectFrom('entries')
        .select((s) => s.fn.coalesce(s.fn.sum<number>('amount'), s.lit(0)).as('sum'))
        .where('account_id', '=', account?.id ?? -1)
        .as('entries'),
    ])
    .executeTakeFirstOrThrow();
  const [held, entries] = [Number(sums.held ?? 0), Number(sums.entries ?? 0)];
  if (held === entries) return undefined;
  return { accountId: account?.id ?? 0, kind: 'system', cached: held, fromEntries: entries };
}

/**
 * Closed cards that still hold a balance: nothing can take money off a closed card, so any there is
 * stranded (a credit meant for one goes to its owner's wallet instead). Reported as a difference of the
 * card's account, `closedCardId` naming the card.
 */
async function closedCardsHoldingMoney(db: Executor): Promise<LedgerDifference[]> {
  const rows = await db
    .selectFrom('cards')
    .innerJoin('accounts', 'accounts.id', 'cards.account_id')
    .select(['cards.id as cardId', 'accounts.id as accountId', 'accounts.kind as kind', 'accounts.balance as balance'])
    .where('cards.status', '=', 'closed')
    .where('accounts.balance', '<>', 0)
    .execute();
  return rows.map((r) => ({
    accountId: r.accountId,
    kind: r.kind,
    cached: Number(r.balance),
    fromEntries: Number(r.balance),
    closedCardId: r.cardId,
  }));
}
