import { randomUUID } from 'node:crypto';
import type { Executor } from '../../db/schema.js';
import { selectCards } from '../operations/card-queries.js';
import { createAccount, postJournal, SYSTEM_ACCOUNTS, systemAccountId } from '../ledger/ledger.js';
import type { Cents } from '../ledger/money.js';
import { CARD_HOLD_KINDS, groupHolds, type CardHold } from './card-holds.js';
import { AdminError } from './errors.js';
import { type PeopleDeps, requireUser } from './people-deps.js';
import { insertToken, issueToken, listLinks, listTokens, removeLink, revokeAllTokens, revokeToken, revokeTokenById } from './tokens.js';

/** The people an operator looks after: users and their wallets, their cards; their tokens and linked chats are tokens.ts. */

function checkDeposit(amount: Cents): void {
  if (!Number.isSafeInteger(amount) || amount <= 0) throw new AdminError('A deposit must be a positive amount');
}

export interface CardRecord {
  id: string;
  number: number;
  userId: string;
  name: string;
  status: string;
  category: string;
  maskedPan: string;
  /** What the card holds now: lowered by `holds` until they settle (or are given back). */
  balance: Cents;
  /** Withdrawals and closures waiting on the provider, each a `Pending` line on the card's statement. */
  holds: CardHold[];
  /** While `processing`: the creation fee held from the wallet for it; null otherwise. */
  heldFee: Cents | null;
  createdAt: string;
}

/**
 * The operator's operations on people, bound to their deps: users, their tokens and linked chats, their
 * cards, and deposits into their wallets.
 */
export function createPeople(deps: PeopleDeps) {
  return {
    createUser: (input: { name: string; deposit?: Cents }) => createUser(deps, input),
    listUsers: () => listUsers(deps),
    issueToken: (userId: string) => issueToken(deps, userId),
    revokeToken: (token: string) => revokeToken(deps, token),
    revokeTokenById: (tokenId: string) => revokeTokenById(deps, tokenId),
    revokeAllTokens: (userId: string) => revokeAllTokens(deps, userId),
    listTokens: (userId: string) => listTokens(deps, userId),
    listLinks: (filter?: { userId?: string }) => listLinks(deps, filter),
    removeLink: (chatId: number) => removeLink(deps, chatId),
    listCards: (filter?: { userId?: string }) => listCards(deps, filter),
    showUser: (userId: string) => showUser(deps, userId),
    deposit: (userId: string, amount: Cents) => deposit(deps, userId, amount),
  };
}

/** A user with a wallet (optionally funded) and a first API token, returned once; all or nothing. */
async function createUser(deps: PeopleDeps, input: { name: string; deposit?: Cents }): Promise<{ userId: string; token: string }> {
  if (!input.name.trim()) throw new AdminError('A user needs a name');
  if (input.deposit) checkDeposit(input.deposit);
  const userId = randomUUID();
  const at = deps.clock.now().toISOString();
  const token = await deps.db.transaction().execute(async (trx) => {
    const walletAccountId = await createAccount(trx, 'wallet', at);
    await trx
      .insertInto('users')
      .values({ id: userId, name: input.name.trim(), wallet_account_id: walletAccountId, created_at: at })
      .execute();
    const issued = await insertToken(deps, trx, userId);
    if (input.deposit) await depositInto(deps, trx, walletAccountId, input.deposit);
    return issued;
  });
  return { userId, token };
}

async function listUsers({ db }: PeopleDeps) {
  const rows = await db
    .selectFrom('users')
    .innerJoin('accounts', 'accounts.id', 'users.wallet_account_id')
    .leftJoin('cards', 'cards.user_id', 'users.id')
    .select((eb) => [
      'users.id as id',
      'users.name as name',
      'users.created_at as createdAt',
      'accounts.balance as walletBalance',
      eb.fn.count<number>('cards.id').as('cardCount'),
    ])
    .groupBy(['users.id', 'users.name', 'users.created_at', 'accounts.balance'])
    .orderBy('users.created_at')
    .execute();
  return rows.map((r) => ({ ...r, walletBalance: Number(r.walletBalance), cardCount: Number(r.cardCount) }));
}

/** The cards with their balances and holds, read in one statement so that the two agree. */
async function listCards(deps: PeopleDeps, filter: { userId?: string } = {}): Promise<CardRecord[]> {
  if (filter.userId !== undefined) await requireUser(deps, filter.userId);
  let query = selectCards(deps.db)
    .leftJoin('pending_operations as creation', (join) =>
      join.onRef('creation.card_id', '=', 'cards.id').on('creation.kind', '=', 'create_card'),
    )
    .leftJoin('pending_operations as hold', (join) => join.onRef('hold.card_id', '=', 'cards.id').on('hold.kind', 'in', CARD_HOLD_KINDS))
    .select(['creation.amount as held_fee', 'hold.kind as hold_kind', 'hold.amount as hold_amount', 'hold.created_at as hold_since'])
    .orderBy('cards.number')
    .orderBy('hold.created_at')
    .orderBy('hold.id');
  if (filter.userId !== undefined) query = query.where('cards.user_id', '=', filter.userId);
  return groupHolds(await query.execute()).map(({ row: r, holds }) => ({
    id: r.id,
    number: r.number,
    userId: r.user_id,
    name: r.name,
    status: r.status,
    category: r.category,
    maskedPan: r.masked_pan,
    balance: Number(r.balance),
    holds,
    heldFee: r.status === 'processing' ? Number(r.held_fee ?? 0) : null,
    createdAt: r.created_at,
  }));
}

/** What an operator needs to see of one user: wallet, cards, tokens and linked chats. */
async function showUser(deps: PeopleDeps, userId: string) {
  const { db } = deps;
  const user = await requireUser(deps, userId);
  const wallet = await db
    .selectFrom('accounts')
    .select(['balance', 'updated_at'])
    .where('id', '=', user.wallet_account_id)
    .executeTakeFirstOrThrow();
  const held = await db
    .selectFrom('pending_operations')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('amount'), eb.lit(0)).as('held'))
    .where('user_id', '=', userId)
    .where('kind', '=', 'create_card')
    .executeTakeFirstOrThrow();
  return {
    id: user.id,
    name: user.name,
    createdAt: user.created_at,
    // `held`: creation fees out of the balance for cards still being issued.
    wallet: { balance: Number(wallet.balance), held: Number(held.held), updatedAt: wallet.updated_at },
    cards: await listCards(deps, { userId }),
    tokens: await listTokens(deps, userId),
    chats: await listLinks(deps, { userId }),
  };
}

/** Funds a wallet: money entering the system, as a journal like every other movement. */
async function deposit(deps: PeopleDeps, userId: string, amount: Cents): Promise<Cents> {
  checkDeposit(amount);
  const user = await requireUser(deps, userId);
  return deps.db.transaction().execute((trx) => depositInto(deps, trx, user.wallet_account_id, amount));
}

async function depositInto({ clock }: Pick<PeopleDeps, 'clock'>, trx: Executor, walletAccountId: number, amount: Cents): Promise<Cents> {
  const posted = await postJournal(trx, {
    reference: `deposit:${randomUUID()}`,
    kind: 'deposit',
    at: clock.now().toISOString(),
    postings: [
      { accountId: walletAccountId, amount },
      { accountId: await systemAccountId(trx, SYSTEM_ACCOUNTS.deposits), amount: -amount, system: true },
    ],
  });
  return posted?.balances.get(walletAccountId) ?? 0;
}
