import { randomUUID } from 'node:crypto';
import type { SelectQueryBuilder } from 'kysely';
import type { Database, Executor } from '../../db/schema.js';
import { selectCards } from '../operations/card-queries.js';
import type { CoreDeps } from '../deps.js';
import { createAccount, postJournal, SYSTEM_ACCOUNTS, systemAccountId } from '../ledger/ledger.js';
import type { Cents } from '../ledger/money.js';
import type { LinkedChat } from '../operations/chat-links.js';
import { hashToken, newApiToken } from '../keys/secrets.js';
import { CARD_HOLD_KINDS, groupHolds, type CardHold } from './card-holds.js';
import { AdminError } from './errors.js';

type ActiveTokens = SelectQueryBuilder<Database, 'api_tokens', { id: string; token_hash: string }>;

function checkDeposit(amount: Cents): void {
  if (!Number.isSafeInteger(amount) || amount <= 0) throw new AdminError('A deposit must be a positive amount');
}

/** An API token as an operator sees it: never the token itself. */
export interface TokenRecord {
  id: string;
  userId: string;
  /** The token's first characters (`vc_` and four more), or null for tokens issued before they were kept. */
  prefix: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
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

export interface ChatLinkRecord {
  chatId: number;
  userId: string;
  /** The token the chat was linked with (null if that token no longer exists). */
  tokenId: string | null;
  linkedAt: string;
}

/** How many characters of a token are kept to tell it apart: `vc_` and 24 of its 256 random bits. */
const TOKEN_PREFIX_LENGTH = 7;

/** The people an operator looks after: users, their tokens and linked chats, their cards, and deposits into their wallets. */
export function createPeople({ db, clock, chatLinks }: Pick<CoreDeps, 'db' | 'clock' | 'chatLinks'>) {
  const now = () => clock.now().toISOString();

  async function requireUser(userId: string) {
    const user = await db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
    if (!user) throw new AdminError(`No user with id ${userId}`);
    return user;
  }

  async function insertToken(ex: Executor, userId: string): Promise<string> {
    const token = newApiToken();
    await ex
      .insertInto('api_tokens')
      .values({
        id: randomUUID(),
        user_id: userId,
        token_hash: hashToken(token),
        prefix: token.slice(0, TOKEN_PREFIX_LENGTH),
        created_at: now(),
        revoked_at: null,
        last_used_at: null,
      })
      .execute();
    return token;
  }

  /**
   * Revokes the still-active tokens `which` selects and ends the chat links made with them, in one
   * transaction: from its commit on, no request, bot update or push goes through for those tokens.
   */
  async function revoke(which: (q: ActiveTokens) => ActiveTokens): Promise<{ tokens: number; chats: number[] }> {
    const at = now();
    return db.transaction().execute(async (trx) => {
      const active = await which(trx.selectFrom('api_tokens').select(['id', 'token_hash']).where('revoked_at', 'is', null)).execute();
      if (active.length === 0) return { tokens: 0, chats: [] };
      await trx
        .updateTable('api_tokens')
        .set({ revoked_at: at })
        .where(
          'id',
          'in',
          active.map((t) => t.id),
        )
        .execute();
      const chats = await chatLinks.endForTokens(
        trx,
        active.map((t) => t.token_hash),
        at,
      );
      return { tokens: active.length, chats };
    });
  }

  function toTokenRecord(row: {
    id: string;
    user_id: string;
    prefix: string | null;
    created_at: string;
    last_used_at: string | null;
    revoked_at: string | null;
  }): TokenRecord {
    return {
      id: row.id,
      userId: row.user_id,
      prefix: row.prefix,
      createdAt: row.created_at,
      lastUsedAt: row.last_used_at,
      revokedAt: row.revoked_at,
    };
  }

  async function linkRecords(links: LinkedChat[]): Promise<ChatLinkRecord[]> {
    const hashes = [...new Set(links.map((l) => l.tokenHash))];
    const tokens = hashes.length
      ? await db.selectFrom('api_tokens').select(['id', 'token_hash']).where('token_hash', 'in', hashes).execute()
      : [];
    const idOf = new Map(tokens.map((t) => [t.token_hash, t.id]));
    return links.map((l) => ({ chatId: l.chatId, userId: l.userId, tokenId: idOf.get(l.tokenHash) ?? null, linkedAt: l.linkedAt }));
  }

  async function depositInto(trx: Executor, walletAccountId: number, amount: Cents): Promise<Cents> {
    const posted = await postJournal(trx, {
      reference: `deposit:${randomUUID()}`,
      kind: 'deposit',
      at: now(),
      postings: [
        { accountId: walletAccountId, amount },
        { accountId: await systemAccountId(trx, SYSTEM_ACCOUNTS.deposits), amount: -amount, system: true },
      ],
    });
    return posted?.balances.get(walletAccountId) ?? 0;
  }

  const people = {
    /** A user with a wallet (optionally funded) and a first API token, returned once; all or nothing. */
    async createUser(input: { name: string; deposit?: Cents }): Promise<{ userId: string; token: string }> {
      if (!input.name.trim()) throw new AdminError('A user needs a name');
      if (input.deposit) checkDeposit(input.deposit);
      const userId = randomUUID();
      const at = now();
      const token = await db.transaction().execute(async (trx) => {
        const walletAccountId = await createAccount(trx, 'wallet', at);
        await trx
          .insertInto('users')
          .values({ id: userId, name: input.name.trim(), wallet_account_id: walletAccountId, created_at: at })
          .execute();
        const issued = await insertToken(trx, userId);
        if (input.deposit) await depositInto(trx, walletAccountId, input.deposit);
        return issued;
      });
      return { userId, token };
    },

    async listUsers() {
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
    },

    async issueToken(userId: string): Promise<string> {
      await requireUser(userId);
      return insertToken(db, userId);
    },

    /** Revokes the token given in full; its chats are unlinked in the same transaction. */
    async revokeToken(token: string): Promise<{ chats: number[] }> {
      const { tokens, chats } = await revoke((q) => q.where('token_hash', '=', hashToken(token)));
      if (tokens === 0) throw new AdminError('No active token matches');
      return { chats };
    },

    /** Revokes a token by its id (from `tokens list`): no plaintext needed. */
    async revokeTokenById(tokenId: string): Promise<{ chats: number[] }> {
      const { tokens, chats } = await revoke((q) => q.where('id', '=', tokenId));
      if (tokens === 0) throw new AdminError(`No active token with id ${tokenId}`);
      return { chats };
    },

    /** Cuts a user off: every active token revoked and every linked chat unlinked, at once. */
    async revokeAllTokens(userId: string): Promise<{ tokens: number; chats: number[] }> {
      await requireUser(userId);
      return revoke((q) => q.where('user_id', '=', userId));
    },

    async listTokens(userId: string): Promise<TokenRecord[]> {
      await requireUser(userId);
      const rows = await db
        .selectFrom('api_tokens')
        .selectAll()
        .where('user_id', '=', userId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toTokenRecord);
    },

    async listLinks(filter: { userId?: string } = {}): Promise<ChatLinkRecord[]> {
      if (filter.userId !== undefined) await requireUser(filter.userId);
      return linkRecords(await chatLinks.list(db, filter));
    },

    /** Unlinks one chat (its flows end; it is told once). */
    async removeLink(chatId: number): Promise<void> {
      const removed = await db.transaction().execute((trx) => chatLinks.endChat(trx, chatId, 'removed_by_operator', now()));
      if (!removed) throw new AdminError(`Chat ${chatId} is not linked`);
    },

    /** The cards with their balances and holds, read in one statement so that the two agree. */
    async listCards(filter: { userId?: string } = {}): Promise<CardRecord[]> {
      if (filter.userId !== undefined) await requireUser(filter.userId);
      let query = selectCards(db)
        .leftJoin('pending_operations as creation', (join) =>
          join.onRef('creation.card_id', '=', 'cards.id').on('creation.kind', '=', 'create_card'),
        )
        .leftJoin('pending_operations as hold', (join) =>
          join.onRef('hold.card_id', '=', 'cards.id').on('hold.kind', 'in', CARD_HOLD_KINDS),
        )
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
    },

    /** What an operator needs to see of one user: wallet, cards, tokens and linked chats. */
    async showUser(userId: string) {
      const user = await requireUser(userId);
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
        cards: await people.listCards({ userId }),
        tokens: await people.listTokens(userId),
        chats: await people.listLinks({ userId }),
      };
    },

    /** Funds a wallet: money entering the system, as a journal like every other movement. */
    async deposit(userId: string, amount: Cents): Promise<Cents> {
      checkDeposit(amount);
      const user = await requireUser(userId);
      return db.transaction().execute((trx) => depositInto(trx, user.wallet_account_id, amount));
    },
  };

  return people;
}
