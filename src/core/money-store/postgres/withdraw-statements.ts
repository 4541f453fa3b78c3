import { type RawBuilder, sql } from 'kysely';
import { type CompiledOnce, compiledOnce } from '../../../db/compiled-query.js';
import type { CardRow, Executor } from '../../../db/schema.js';
import type { Cents } from '../../ledger/money.js';

// A withdrawal's two transactions (before and after the provider call, `withdraw` in `operations/movements.ts`;
// in steps, `../portable/movements.ts`), each
// as one Postgres statement: one round trip each, committed on its own. The rules decide inside the database
// by conditional updates, each mirroring a named check of `src/core/rules/rules.ts`; the caller words a
// refusal with those same checks, from the figures returned.

/** What a hold statement did (a withdrawal's, a closure's), and what the named checks need to word a refusal. */
export interface HoldOutcome {
  /** The caller has operations pending past the grace period: nothing was done (the recovery runs first). */
  stale: boolean;
  card?: Pick<CardRow, 'account_id' | 'status' | 'currency' | 'provider_card_id' | 'last_withdraw_attempt_at'> & {
    providerReady: boolean;
    cooled: boolean;
    /** The card's balance as the statement found it, its row locked. */
    available: Cents;
  };
  /** Set once the amount is held: the hold's journal. */
  heldJournalId?: number;
}

export interface HoldRow {
  stale: boolean;
  account_id: number | null;
  status: CardRow['status'] | null;
  currency: string | null;
  provider_card_id: string | null;
  last_withdraw_attempt_at: string | null;
  provider_ready: number | null;
  cooled: boolean | null;
  available: number | null;
  journal_id: number | null;
}

/**
 * `stale`: the caller's operations pending past the grace period. When there are any, the statement does
 * nothing and the caller takes the path that recovers them first (`recoverStale`): a rare case.
 */
export const staleOperations = (userId: string, staleBefore: string) => sql`
  stale as (
    select exists (select 1 from pending_operations where user_id = ${userId} and created_at <= ${staleBefore}) as found
  )`;

/**
 * `card`: the caller's card, its row locked, its account's balance (locked too, `lockedBalance`) and whether
 * the withdrawals' cooldown (closures' too) has passed.
 */
export const lockedCard = (cardId: string, userId: string, threshold: string) => sql`
  card as (
    select cards.id, cards.account_id, cards.status, cards.currency, cards.provider_card_id, cards.provider_ready,
      cards.last_withdraw_attempt_at, accounts.balance as available,
      (cards.last_withdraw_attempt_at is null or cards.last_withdraw_attempt_at <= ${threshold}) as cooled
    from cards join accounts on accounts.id = cards.account_id, stale
    where cards.id = ${cardId} and cards.user_id = ${userId} and not stale.found
    for update of cards, accounts
  )`;

/** An amount posted to an account, as SQL expressions over the statement's CTEs. */
type Posting = [account: RawBuilder<unknown>, amount: RawBuilder<unknown>];

/**
 * The `select` of a journal's entries, for an `insert into entries`: one a posting, beside the row of the CTE
 * `beside` their figures come from; `journal` names the CTE that wrote the journal. A zero amount is no entry
 * (the `amount <> 0` check; `postJournal` leaves them out too).
 */
export const journalEntries = (journal: string, beside: string, postings: Posting[]) => sql`
  select ${sql.ref(`${journal}.id`)}, posting.account_id, posting.amount
  from ${sql.table(journal)} cross join ${sql.table(beside)} cross join lateral (values
    ${sql.join(postings.map(([account, amount]) => sql`(${account}, ${amount})`))}
  ) as posting (account_id, amount)
  where posting.amount <> 0`;

/** What `heldRecords` writes: the operation, its kind and its statement line's type, and the amount (an SQL expression over `card`). */
interface HeldRecords {
  kind: 'withdraw' | 'close';
  lineType: 'withdrawal' | 'card_close';
  amount: RawBuilder<unknown>;
  operationId: string;
  userId: string;
  inFlightAccountId: number;
  reference: string;
  at: string;
}

/**
 * Once `debit` has taken the amount off the card's account: the hold's journal and entries (the in-flight
 * account's entry alone, `Posting.system`), the `Pending` line and the pending operation (`hold` in
 * `pending-operations.ts`).
 */
export const heldRecords = ({ kind, lineType, amount, operationId, userId, inFlightAccountId, reference, at }: HeldRecords) => sql`
  journal as (
    insert into journals (reference, kind, created_at) select ${reference}, ${sql.lit(`${kind}_hold`)}, ${at} from debit returning id
  ),
  entries as (
    insert into entries (journal_id, account_id, amount)
    ${journalEntries('journal', 'card', [
      [sql`card.account_id`, sql`-${amount}`],
      [sql`${inFlightAccountId}::integer`, amount],
    ])}
  ),
  line as (
    insert into card_transactions (id, card_id, user_id, journal_id, status, side, amount, currency, type, merchant_name,
      original_amount, original_currency, decline_code, created_at, updated_at, card_position)
    select ${operationId}, card.id, ${userId}, journal.id, 'Pending', 'Debit', ${amount}, card.currency, ${sql.lit(lineType)},
      'Wallet', ${amount}, card.currency, null, ${at}, ${at}, 0
    from journal cross join card
  ),
  pending as (
    insert into pending_operations (id, kind, user_id, card_id, account_id, amount, hold_journal_id, coupon_id, created_at)
    select ${operationId}, ${sql.lit(kind)}, ${userId}, card.id, card.account_id, ${amount}, journal.id, null, ${at}
    from journal cross join card
  )`;

/** The one row a hold statement returns: what it found of the caller's card, and the hold's journal when it held. */
export const holdOutcome = sql`
  select stale.found as stale, card.account_id, card.status, card.currency, card.provider_card_id, card.provider_ready,
    card.last_withdraw_attempt_at, card.cooled, card.available, journal.id as journal_id
  from stale left join card on true left join journal on true`;

/** Runs a hold statement (`holdWithdrawal`, `holdClosure`) and reads its one row. */
export async function holdOnce<Args extends unknown[]>(
  statement: CompiledOnce<Args, HoldRow>,
  ex: Executor,
  ...args: Args
): Promise<HoldOutcome> {
  const row = await statement.executeTakeOne(ex, ...args);
  const hold: HoldOutcome = { stale: row.stale };
  if (row.status !== null) {
    hold.card = {
      account_id: row.account_id!,
      status: row.status,
      currency: row.currency!,
      provider_card_id: row.provider_card_id!,
      last_withdraw_attempt_at: row.last_withdraw_attempt_at,
      providerReady: Number(row.provider_ready) !== 0,
      cooled: Boolean(row.cooled),
      available: Number(row.available),
    };
  }
  if (row.journal_id !== null) hold.heldJournalId = row.journal_id;
  return hold;
}

/**
 * The hold: steps of `withdraw`'s first transaction, as data-modifying CTEs.
 * - `stale` (`staleOperations`), then `card` (`lockedCard`).
 * - `claimed`: the attempt is recorded when the cooldown has passed (`withdrawCooldownRefusal`), refused
 *   later or not (spec 4.7: an attempt counts).
 * - `debit`: the amount off the card's account, only when the card is neither closed nor unissued
 *   (`withdrawStateRefusal`) and holds it (`cardCoverRefusal`); then what `heldRecords` writes.
 */
export const holdWithdrawal = compiledOnce(
  9,
  (
    ex,
    cardId: string,
    userId: string,
    amount: Cents,
    at: string,
    threshold: string,
    staleBefore: string,
    operationId: string,
    inFlightAccountId: number,
    reference: string,
  ) => ({
    compile: () =>
      sql<HoldRow>`
        with ${staleOperations(userId, staleBefore)},
        ${lockedCard(cardId, userId, threshold)},
        claimed as (
          update cards set last_withdraw_attempt_at = ${at} from card where cards.id = card.id and card.cooled returning cards.id
        ),
        -- The balance decided on and taken from is \`card.available\`, read from the account row \`card\` locked (its
        -- newest version): a condition on \`accounts.balance\` would be read from the statement's snapshot first and
        -- refuse an amount a refund committed during the lock wait covers. Nobody else can change the row now.
        debit as (
          update accounts set balance = card.available - ${amount}::bigint, updated_at = ${at}
          from card
          where accounts.id = card.account_id and accounts.kind <> 'system'
            and card.cooled
            and card.status <> 'closed' and card.provider_ready <> 0
            and card.available - ${amount}::bigint >= 0
          returning accounts.id
        ),
        ${heldRecords({ kind: 'withdraw', lineType: 'withdrawal', amount: sql`${amount}::bigint`, operationId, userId, inFlightAccountId, reference, at })}
        ${holdOutcome}
      `.compile(ex),
  }),
);

/** What the settling statement did. */
export interface WithdrawalSettled {
  /** False when the operation was no longer pending (the recovery took it): nothing was done. */
  taken: boolean;
  journalId?: number;
  walletBalance?: Cents;
  /** The id of the line turned `Approved`; undefined when it had none. */
  transactionId?: string;
  cardBalance?: Cents;
}

interface SettleRow {
  taken: boolean;
  journal_id: number | null;
  wallet_balance: number | null;
  transaction_id: string | null;
  card_balance: number | null;
}

/**
 * The settling: `withdraw`'s second transaction, as data-modifying CTEs. Whoever deletes the pending row
 * settles the operation (`take`); the held amount goes from the in-flight account to the wallet (`moveHeld`)
 * and the `Pending` line turns `Approved` under the settling journal (`settleLine`).
 */
export const settleWithdrawal = compiledOnce(
  6,
  (ex, operationId: string, walletAccountId: number, inFlightAccountId: number, at: string, reference: string, cardAccountId: number) => ({
    compile: () =>
      sql<SettleRow>`
      with op as (
        delete from pending_operations where id = ${operationId} returning amount
      ),
      wallet as (
        update accounts set balance = accounts.balance + op.amount, updated_at = ${at}
        from op where accounts.id = ${walletAccountId}::integer and accounts.kind <> 'system'
        returning accounts.balance, op.amount
      ),
      journal as (
        insert into journals (reference, kind, created_at) select ${reference}, 'withdrawal', ${at} from wallet returning id
      ),
      entries as (
        insert into entries (journal_id, account_id, amount)
        ${journalEntries('journal', 'wallet', [
          [sql`${walletAccountId}::integer`, sql`wallet.amount`],
          [sql`${inFlightAccountId}::integer`, sql`-wallet.amount`],
        ])}
      ),
      line as (
        update card_transactions set status = 'Approved', journal_id = journal.id, updated_at = ${at}
        from journal where card_transactions.id = ${operationId} and card_transactions.status = 'Pending'
        returning card_transactions.id
      )
      select exists (select 1 from op) as taken, journal.id as journal_id, wallet.balance as wallet_balance, line.id as transaction_id,
        (select balance from accounts where id = ${cardAccountId}::integer) as card_balance
      from (select 1) as one left join wallet on true left join journal on true left join line on true
    `.compile(ex),
  }),
);

export async function settleWithdrawalOnce(
  ex: Executor,
  args: Parameters<typeof settleWithdrawal.execute> extends [Executor, ...infer A] ? A : never,
): Promise<WithdrawalSettled> {
  const row = await settleWithdrawal.executeTakeOne(ex, ...args);
  const settled: WithdrawalSettled = { taken: row.taken };
  if (row.journal_id !== null) settled.journalId = row.journal_id;
  if (row.wallet_balance !== null) settled.walletBalance = Number(row.wallet_balance);
  if (row.transaction_id !== null) settled.transactionId = row.transaction_id;
  if (row.card_balance !== null) settled.cardBalance = Number(row.card_balance);
  return settled;
}
