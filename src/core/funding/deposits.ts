import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { DepositError } from '../rules/deposit-errors.js';
import { recordEvent } from '../operations/events.js';
import type { FundingDeps } from './funding.js';
import { type DepositStatus, type FundingTables, fundingTables, fundingTablesIn } from './funding-tables.js';
import { postJournal, SYSTEM_ACCOUNTS, systemAccountId } from '../ledger/ledger.js';
import type { Cents } from '../ledger/money.js';
import { inputGuards } from '../rules/schemas.js';

export const NOTE_MAX_LENGTH = 200;
export const REASON_MAX_LENGTH = 200;
/** Requests one user may have waiting at once: enough for honest use, too few to flood the admins' chat. */
export const MAX_PENDING_PER_USER = 5;

export interface DepositRequest {
  id: number;
  userId: string;
  userName: string;
  amount: Cents;
  note: string | null;
  status: DepositStatus;
  decidedBy: string | null;
  decidedAt: string | null;
  reason: string | null;
  chatId: number | null;
  createdAt: string;
}

export interface NewDepositRequest {
  userId: string;
  amount: Cents;
  note?: string | null;
  /** The chat it was asked from (the decision goes to every chat linked to the user, through the outbox). */
  chatId?: number | null;
}

/** One line of text: control characters (newlines included) become spaces, the ends are trimmed. */
function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced.
  return text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
}

/**
 * Deposit requests: a cardholder asks for money to be credited (after paying outside, e.g. a bank
 * transfer), an admin approves or rejects. Approval credits the wallet through the ledger in the same
 * transaction as one conditional update that finds the request still pending, so double taps, two
 * admins and the command line at once credit it exactly once. Every decision records a
 * `deposit_decision` event in its transaction: the bot's outbox tells the cardholder's chats, whoever decided.
 *
 * @example
 * const request = await deposits.request({ userId, amount: 5_000, note: 'wire 8812', chatId });
 * await deposits.approve(request.id, 'telegram:42');
 */
export function createDepositService({ db, clock, settings }: FundingDeps) {
  const guards = inputGuards(settings);
  const tables = fundingTables(db);
  const now = () => clock.now().toISOString();

  const selectRequests = () =>
    tables
      .selectFrom('deposit_requests')
      .innerJoin('users', 'users.id', 'deposit_requests.user_id')
      .selectAll('deposit_requests')
      .select('users.name as user_name');

  type Row = Awaited<ReturnType<ReturnType<typeof selectRequests>['executeTakeFirstOrThrow']>>;
  const toRequest = (row: Row): DepositRequest => ({
    id: Number(row.id),
    userId: row.user_id,
    userName: row.user_name,
    amount: Number(row.amount),
    note: row.note,
    status: row.status,
    decidedBy: row.decided_by,
    decidedAt: row.decided_at,
    reason: row.reason,
    chatId: row.chat_id === null ? null : Number(row.chat_id),
    createdAt: row.created_at,
  });

  async function get(id: number): Promise<DepositRequest> {
    const row = await selectRequests().where('deposit_requests.id', '=', id).executeTakeFirst();
    if (!row) throw new DepositError('REQUEST_NOT_FOUND', { id });
    return toRequest(row);
  }

  /** Why a request could not be decided: it does not exist, or someone decided it first. */
  async function undecidable(trx: Transaction<Database & FundingTables>, id: number): Promise<DepositError> {
    const row = await trx.selectFrom('deposit_requests').select('status').where('id', '=', id).executeTakeFirst();
    if (!row) return new DepositError('REQUEST_NOT_FOUND', { id });
    return new DepositError('ALREADY_DECIDED', { id, status: row.status as Exclude<DepositStatus, 'pending'> });
  }

  return {
    get,

    /** Stores a pending request; the amount follows the top-up rules (the core's validation error otherwise). */
    async request(input: NewDepositRequest): Promise<DepositRequest> {
      guards.topup(input.amount);
      const note = input.note ? oneLine(input.note) : '';
      if (note.length > NOTE_MAX_LENGTH) throw new DepositError('NOTE_TOO_LONG', { max: NOTE_MAX_LENGTH });
      const id = await db.transaction().execute(async (trx) => {
        // The user's row locked first (a no-op update: SQLite lacks `for update`): requests of one user
        // count and insert one after another, so that parallel ones cannot all pass the count together.
        // On SQLite the transaction alone already runs by itself.
        const user = await trx
          .updateTable('users')
          .set((eb) => ({ name: eb.ref('name') }))
          .where('id', '=', input.userId)
          .returning('id')
          .executeTakeFirst();
        if (!user) throw new DepositError('USER_NOT_FOUND', { userId: input.userId });
        const t = fundingTablesIn(trx);
        const waiting = await t
          .selectFrom('deposit_requests')
          .select((eb) => eb.fn.countAll<number>().as('count'))
          .where('user_id', '=', input.userId)
          .where('status', '=', 'pending')
          .executeTakeFirstOrThrow();
        if (Number(waiting.count) >= MAX_PENDING_PER_USER) throw new DepositError('TOO_MANY_PENDING', { max: MAX_PENDING_PER_USER });
        const inserted = await t
          .insertInto('deposit_requests')
          .values({
            user_id: input.userId,
            amount: input.amount,
            note: note || null,
            status: 'pending',
            decided_by: null,
            decided_at: null,
            reason: null,
            journal_id: null,
            chat_id: input.chatId ?? null,
            created_at: now(),
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        return inserted.id;
      });
      return get(Number(id));
    },

    /**
     * Approves a pending request and credits the wallet, in one transaction: the conditional update
     * (`status = 'pending'`) decides, so only one approval of a request ever credits.
     */
    async approve(id: number, decidedBy: string): Promise<{ request: DepositRequest; walletBalance: Cents }> {
      const at = now();
      const walletBalance = await db.transaction().execute(async (trx) => {
        const t = fundingTablesIn(trx);
        const decided = await t
          .updateTable('deposit_requests')
          .set({ status: 'approved', decided_by: decidedBy, decided_at: at })
          .where('id', '=', id)
          .where('status', '=', 'pending')
          .returning(['user_id', 'amount'])
          .executeTakeFirst();
        if (!decided) throw await undecidable(t, id);
        const amount = Number(decided.amount);
        const user = await trx.selectFrom('users').select('wallet_account_id').where('id', '=', decided.user_id).executeTakeFirstOrThrow();
        const wallet = Number(user.wallet_account_id);
        const posted = await postJournal(trx, {
          reference: `deposit-request:${id}`,
          kind: 'deposit',
          at,
          postings: [
            { accountId: wallet, amount },
            { accountId: await systemAccountId(trx, SYSTEM_ACCOUNTS.deposits), amount: -amount, system: true },
          ],
        });
        if (!posted) throw new Error(`Deposit request ${id} could not credit the wallet`);
        await t.updateTable('deposit_requests').set({ journal_id: posted.journalId }).where('id', '=', id).execute();
        const balance = posted.balances.get(wallet) ?? 0;
        await recordEvent(
          trx,
          decided.user_id,
          { kind: 'deposit_decision', requestId: id, amount, status: 'approved', reason: null, walletBalance: balance, decidedAt: at },
          at,
        );
        return balance;
      });
      return { request: await get(id), walletBalance };
    },

    /** Rejects a pending request with a reason for the cardholder; nothing moves. */
    async reject(id: number, decidedBy: string, reason: string): Promise<DepositRequest> {
      const text = oneLine(reason);
      if (!text) throw new DepositError('REASON_REQUIRED');
      if (text.length > REASON_MAX_LENGTH) throw new DepositError('REASON_TOO_LONG', { max: REASON_MAX_LENGTH });
      const at = now();
      await db.transaction().execute(async (trx) => {
        const t = fundingTablesIn(trx);
        const decided = await t
          .updateTable('deposit_requests')
          .set({ status: 'rejected', decided_by: decidedBy, decided_at: at, reason: text })
          .where('id', '=', id)
          .where('status', '=', 'pending')
          .returning(['user_id', 'amount'])
          .executeTakeFirst();
        if (!decided) throw await undecidable(t, id);
        const event = {
          kind: 'deposit_decision',
          requestId: id,
          amount: Number(decided.amount),
          status: 'rejected',
          reason: text,
          walletBalance: null,
          decidedAt: at,
        } as const;
        await recordEvent(trx, decided.user_id, event, at);
      });
      return get(id);
    },

    /** Requests, newest first; optionally of one status or one user. */
    async list(filter: { status?: DepositStatus; userId?: string; limit?: number } = {}): Promise<DepositRequest[]> {
      let query = selectRequests()
        .orderBy('deposit_requests.id', 'desc')
        .limit(filter.limit ?? 100);
      if (filter.status !== undefined) query = query.where('deposit_requests.status', '=', filter.status);
      if (filter.userId !== undefined) query = query.where('deposit_requests.user_id', '=', filter.userId);
      return (await query.execute()).map(toRequest);
    },
  };
}

export type DepositService = ReturnType<typeof createDepositService>;
