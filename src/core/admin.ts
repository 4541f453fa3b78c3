import { randomInt, randomUUID } from 'node:crypto';
import { recordCardTransaction } from './card-records.js';
import type { SelectQueryBuilder } from 'kysely';
import type { Database, Executor } from '../db/schema.js';
import { accountBalance, lockedBalance, lockedCardStatus, selectCards } from './card-queries.js';
import type { CoreDeps } from './deps.js';
import { createSandboxMailbox } from './mailbox.js';
import { recordEvent } from './events.js';
import { checkLedger, createAccount, postJournal, SYSTEM_ACCOUNTS, systemAccountId } from './ledger.js';
import type { Cents } from './money.js';
import type { LinkedChat } from './chat-links.js';
import { createRetention } from './retention.js';
import { hashToken, newApiToken } from './secrets.js';
import { toBin, toPlan, type Bin, type CardCategory, type CardTransaction, type Plan } from './views.js';

/** Refusals of admin commands (bad ids, bad values): plain errors with a clear text. */
export class AdminError extends Error {
  override readonly name = 'AdminError';
}

export interface NewBin {
  bin: string;
  network: string;
  threeDS: boolean;
  wallet: boolean;
  currency: string;
  country: string;
  initialBalance: Cents;
  enabled?: boolean;
}

export interface NewPlan {
  name: string;
  description: string;
  limit: Cents;
  creationFee: Cents;
}

export interface NewCoupon {
  code: string;
  kind: 'percent' | 'amount';
  /** Basis points for `percent`, cents for `amount`. */
  value: number;
  expiresAt?: string | null;
  maxRedemptions?: number | null;
}

export interface SimulatedTransaction {
  transactionId: string;
  status: CardTransaction['status'];
  declineCode: string | null;
  cardBalance: Cents;
}

const DEFAULT_BINS: NewBin[] = [
  { bin: '545454', network: 'master', threeDS: true, wallet: true, currency: 'USD', country: 'US', initialBalance: 0 },
  { bin: '424242', network: 'visa', threeDS: true, wallet: false, currency: 'USD', country: 'US', initialBalance: 0 },
  { bin: '414720', network: 'visa', threeDS: true, wallet: true, currency: 'USD', country: 'US', initialBalance: 500 },
  { bin: '531993', network: 'master', threeDS: false, wallet: false, currency: 'USD', country: 'GB', initialBalance: 0 },
];

const DEFAULT_PLANS: NewPlan[] = [
  { name: 'Basic', description: 'For occasional online purchases', limit: 100_000, creationFee: 500 },
  { name: 'Standard', description: 'For subscriptions and regular spending', limit: 500_000, creationFee: 1_500 },
  { name: 'Premium', description: 'For advertising and high-volume spending', limit: 2_500_000, creationFee: 4_900 },
];

const DEFAULT_FEES: { category: CardCategory; percentBps: number; fixed: Cents }[] = [
  { category: 'Online', percentBps: 250, fixed: 30 },
  { category: 'Wallet', percentBps: 300, fixed: 50 },
];

type ActiveTokens = SelectQueryBuilder<Database, 'api_tokens', { id: string; token_hash: string }>;

function checkDeposit(amount: Cents): void {
  if (!Number.isSafeInteger(amount) || amount <= 0) throw new AdminError('A deposit must be a positive amount');
}

/** What an operator does: users, tokens, funding, catalogue, fees, coupons, sandbox simulations, checks. */
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
  balance: Cents;
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

export function createAdminService(deps: CoreDeps) {
  const { db, clock, chatLinks } = deps;
  const now = () => clock.now().toISOString();
  const mailbox = createSandboxMailbox(db, clock);
  const retention = createRetention(deps);

  async function cardById(cardId: string) {
    const card = await selectCards(db).where('cards.id', '=', cardId).executeTakeFirst();
    if (!card) throw new AdminError(`No card with id ${cardId}`);
    return card;
  }

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

  async function insertBin(ex: Executor, bin: NewBin): Promise<string> {
    const id = randomUUID();
    await ex
      .insertInto('bins')
      .values({
        id,
        bin: bin.bin,
        network: bin.network,
        three_ds: bin.threeDS ? 1 : 0,
        wallet: bin.wallet ? 1 : 0,
        currency: bin.currency,
        country: bin.country,
        initial_balance: bin.initialBalance,
        enabled: bin.enabled === false ? 0 : 1,
        created_at: now(),
      })
      .execute();
    return id;
  }

  async function insertPlan(ex: Executor, plan: NewPlan) {
    return ex
      .insertInto('plans')
      .values({
        name: plan.name,
        description: plan.description,
        limit_amount: plan.limit,
        creation_fee: plan.creationFee,
        active: 1,
        created_at: now(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  const admin = {
    /**
     * A fresh database gets the default BINs, plans and fees; an existing one is left as it is. One
     * transaction holding the revenue account's row: processes starting together seed once.
     */
    async seedDefaults(): Promise<void> {
      await db.transaction().execute(async (trx) => {
        for (const code of Object.values(SYSTEM_ACCOUNTS)) await systemAccountId(trx, code);
        await lockedBalance(trx, await systemAccountId(trx, SYSTEM_ACCOUNTS.revenue));
        const anyBin = await trx.selectFrom('bins').select('id').limit(1).executeTakeFirst();
        if (!anyBin) for (const bin of DEFAULT_BINS) await insertBin(trx, bin);
        const anyPlan = await trx.selectFrom('plans').select('id').limit(1).executeTakeFirst();
        if (!anyPlan) for (const plan of DEFAULT_PLANS) await insertPlan(trx, plan);
        for (const fee of DEFAULT_FEES) {
          await trx
            .insertInto('platform_fees')
            .values({ category: fee.category, percent_bps: fee.percentBps, fixed_amount: fee.fixed, updated_at: now() })
            .onConflict((oc) => oc.column('category').doNothing())
            .execute();
        }
      });
    },

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

    async listCards(filter: { userId?: string } = {}): Promise<CardRecord[]> {
      if (filter.userId !== undefined) await requireUser(filter.userId);
      let query = selectCards(db).orderBy('cards.number');
      if (filter.userId !== undefined) query = query.where('cards.user_id', '=', filter.userId);
      const rows = await query.execute();
      return rows.map((r) => ({
        id: r.id,
        number: r.number,
        userId: r.user_id,
        name: r.name,
        status: r.status,
        category: r.category,
        maskedPan: r.masked_pan,
        balance: Number(r.balance),
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
      return {
        id: user.id,
        name: user.name,
        createdAt: user.created_at,
        wallet: { balance: Number(wallet.balance), updatedAt: wallet.updated_at },
        cards: await admin.listCards({ userId }),
        tokens: await admin.listTokens(userId),
        chats: await admin.listLinks({ userId }),
      };
    },

    /** Funds a wallet: money entering the system, as a journal like every other movement. */
    async deposit(userId: string, amount: Cents): Promise<Cents> {
      checkDeposit(amount);
      const user = await requireUser(userId);
      return db.transaction().execute((trx) => depositInto(trx, user.wallet_account_id, amount));
    },

    async listBins(): Promise<Bin[]> {
      return (await db.selectFrom('bins').selectAll().orderBy('created_at').orderBy('bin').execute()).map(toBin);
    },

    async addBin(bin: NewBin): Promise<Bin> {
      if (!/^\d{6}$/.test(bin.bin)) throw new AdminError('A BIN is 6 digits');
      if (!Number.isSafeInteger(bin.initialBalance) || bin.initialBalance < 0)
        throw new AdminError('The initial balance cannot be negative');
      const id = await insertBin(db, bin);
      return toBin(await db.selectFrom('bins').selectAll().where('id', '=', id).executeTakeFirstOrThrow());
    },

    async setBinEnabled(id: string, enabled: boolean): Promise<void> {
      const changed = await db
        .updateTable('bins')
        .set({ enabled: enabled ? 1 : 0 })
        .where('id', '=', id)
        .executeTakeFirst();
      if (changed.numUpdatedRows === 0n) throw new AdminError(`No BIN with id ${id}`);
    },

    async listPlans(): Promise<Plan[]> {
      return (await db.selectFrom('plans').selectAll().orderBy('id').execute()).map(toPlan);
    },

    async addPlan(plan: NewPlan): Promise<Plan> {
      if (!plan.name.trim()) throw new AdminError('A plan needs a name');
      if (!Number.isSafeInteger(plan.limit) || plan.limit <= 0) throw new AdminError('A plan limit must be positive');
      if (!Number.isSafeInteger(plan.creationFee) || plan.creationFee < 0) throw new AdminError('A creation fee cannot be negative');
      return toPlan(await insertPlan(db, plan));
    },

    async deactivatePlan(id: number): Promise<void> {
      const changed = await db.updateTable('plans').set({ active: 0 }).where('id', '=', id).executeTakeFirst();
      if (changed.numUpdatedRows === 0n) throw new AdminError(`No plan with id ${id}`);
    },

    async listFees() {
      const rows = await db.selectFrom('platform_fees').selectAll().orderBy('category').execute();
      return rows.map((r) => ({ category: r.category as CardCategory, percentBps: r.percent_bps, fixed: Number(r.fixed_amount) }));
    },

    async setFee(category: CardCategory, percentBps: number, fixed: Cents): Promise<void> {
      if (!Number.isInteger(percentBps) || percentBps < 0 || percentBps > 10_000)
        throw new AdminError('The percent must be between 0 and 100');
      if (!Number.isSafeInteger(fixed) || fixed < 0) throw new AdminError('The fixed fee cannot be negative');
      await db
        .insertInto('platform_fees')
        .values({ category, percent_bps: percentBps, fixed_amount: fixed, updated_at: now() })
        .onConflict((oc) => oc.column('category').doUpdateSet({ percent_bps: percentBps, fixed_amount: fixed, updated_at: now() }))
        .execute();
    },

    async createCoupon(coupon: NewCoupon) {
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(coupon.code)) throw new AdminError('A coupon code is 1-64 letters, digits, - or _');
      if (!Number.isSafeInteger(coupon.value) || coupon.value <= 0) throw new AdminError('A coupon value must be positive');
      if (coupon.kind === 'percent' && coupon.value > 10_000) throw new AdminError('A percent coupon is at most 100%');
      const exists = await db.selectFrom('coupons').select('id').where('id', '=', coupon.code).executeTakeFirst();
      if (exists) throw new AdminError(`Coupon ${coupon.code} already exists`);
      await db
        .insertInto('coupons')
        .values({
          id: coupon.code,
          kind: coupon.kind,
          value: coupon.value,
          expires_at: coupon.expiresAt ?? null,
          max_redemptions: coupon.maxRedemptions ?? null,
          redemptions: 0,
          active: 1,
          created_at: now(),
        })
        .execute();
    },

    async listCoupons() {
      const rows = await db.selectFrom('coupons').selectAll().orderBy('created_at').execute();
      return rows.map((r) => ({
        code: r.id,
        kind: r.kind,
        value: Number(r.value),
        expiresAt: r.expires_at,
        maxRedemptions: r.max_redemptions,
        redemptions: r.redemptions,
        active: Boolean(r.active),
      }));
    },

    async setCouponActive(code: string, active: boolean): Promise<void> {
      const changed = await db
        .updateTable('coupons')
        .set({ active: active ? 1 : 0 })
        .where('id', '=', code)
        .executeTakeFirst();
      if (changed.numUpdatedRows === 0n) throw new AdminError(`No coupon ${code}`);
    },

    /** The provider finished issuing a card that carried a temporary id. */
    async completeIssuance(cardId: string): Promise<string> {
      const card = await cardById(cardId);
      if (card.provider_ready) throw new AdminError('The card is already issued');
      const providerCardId = `sbx_${randomUUID()}`;
      await db.transaction().execute(async (trx) => {
        await trx
          .updateTable('cards')
          .set({ provider_card_id: providerCardId, provider_ready: 1, updated_at: now() })
          .where('id', '=', cardId)
          .execute();
        // E-mails that arrived under the temporary id now belong to the real one.
        await trx
          .updateTable('sandbox_mailbox')
          .set({ provider_card_id: providerCardId })
          .where('provider_card_id', '=', card.provider_card_id)
          .execute();
      });
      return providerCardId;
    },

    /** A merchant charges the card: approved, or declined with a code (frozen, closed, short of funds). */
    async simulatePurchase(cardId: string, amount: Cents, merchant = 'Sandbox Merchant'): Promise<SimulatedTransaction> {
      return simulate(cardId, amount, merchant, 'Debit');
    },

    /** A merchant refunds onto the card. */
    async simulateRefund(cardId: string, amount: Cents, merchant = 'Sandbox Merchant'): Promise<SimulatedTransaction> {
      return simulate(cardId, amount, merchant, 'Credit');
    },

    /** A 3-D Secure code arrives for the card; recorded and queued for delivery to chat. */
    async simulateOtp(cardId: string, amount: Cents = 0, merchant = 'Sandbox Merchant'): Promise<{ otpId: string; code: string }> {
      const card = await cardById(cardId);
      const code = String(randomInt(1_000_000)).padStart(6, '0');
      const otpId = randomUUID();
      const at = now();
      await db.transaction().execute(async (trx) => {
        await trx
          .insertInto('card_otps')
          .values({
            id: otpId,
            card_id: card.id,
            code,
            amount,
            currency: card.currency,
            merchant_name: merchant,
            source: 'push',
            created_at: at,
          })
          .execute();
        await recordEvent(
          trx,
          card.user_id,
          {
            kind: 'otp',
            otpId,
            cardId: card.id,
            cardName: card.name,
            maskedPan: card.masked_pan,
            code,
            amount,
            currency: card.currency,
            merchantName: merchant,
            createdAt: at,
          },
          at,
        );
      });
      return { otpId, code };
    },

    /** An OTP e-mail lands in the sandbox mailbox, for the card's "request OTP from e-mail". */
    async simulateOtpEmail(cardId: string): Promise<{ code: string }> {
      const card = await cardById(cardId);
      const code = String(randomInt(1_000_000)).padStart(6, '0');
      await mailbox.deliver(card.provider_card_id, code);
      return { code };
    },

    checkLedger: () => checkLedger(db),

    /** Deletes OTP codes past their retention and the outbox's delivered or stale rows. */
    purgeExpired: () => retention.purge(),
  };

  async function simulate(cardId: string, amount: Cents, merchant: string, side: 'Debit' | 'Credit'): Promise<SimulatedTransaction> {
    if (!Number.isSafeInteger(amount) || amount <= 0) throw new AdminError('The amount must be positive');
    const card = await cardById(cardId);
    const at = now();
    return db.transaction().execute(async (trx) => {
      const merchants = await systemAccountId(trx, SYSTEM_ACCOUNTS.merchants);
      // Read under a lock: a closure or freeze running beside this one decides first or waits.
      const status = await lockedCardStatus(trx, card.id);
      let declineCode: string | null = status === 'frozen' ? 'card_frozen' : status === 'closed' ? 'card_closed' : null;
      let posted = null;
      if (!declineCode) {
        posted = await postJournal(trx, {
          reference: `${side === 'Debit' ? 'purchase' : 'refund'}:${randomUUID()}`,
          kind: side === 'Debit' ? 'purchase' : 'refund',
          at,
          postings:
            side === 'Debit'
              ? [
                  { accountId: card.account_id, amount: -amount },
                  { accountId: merchants, amount, system: true },
                ]
              : [
                  { accountId: card.account_id, amount },
                  { accountId: merchants, amount: -amount, system: true },
                ],
        });
        if (!posted) declineCode = 'insufficient_funds';
      }
      const outcome = declineCode ? 'Declined' : 'Approved';
      const type = side === 'Debit' ? 'purchase' : 'refund';
      const transactionId = await recordCardTransaction(trx, {
        cardId: card.id,
        userId: card.user_id,
        journalId: posted?.journalId ?? null,
        status: outcome,
        side,
        type,
        amount,
        currency: card.currency,
        merchantName: merchant,
        declineCode,
        at,
      });
      const cardBalance = posted?.balances.get(card.account_id) ?? (await accountBalance(trx, card.account_id));
      await recordEvent(
        trx,
        card.user_id,
        {
          kind: 'card_transaction',
          transactionId,
          cardId: card.id,
          cardName: card.name,
          maskedPan: card.masked_pan,
          status: outcome,
          side,
          type,
          amount,
          currency: card.currency,
          merchantName: merchant,
          declineCode,
          cardBalance,
          createdAt: at,
        },
        at,
      );
      return { transactionId, status: outcome, declineCode, cardBalance };
    });
  }

  return admin;
}

export type AdminService = ReturnType<typeof createAdminService>;
