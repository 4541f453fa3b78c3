import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { leasesOn } from '../../db/lease.js';
import type { BinRow, Executor, PlanRow } from '../../db/schema.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { accountBalance, findOwnedCard, lockedBalance, lockedCardStatus, selectCards } from './card-queries.js';
import { sealCardData } from '../keys/card-data-keys.js';
import { recordCardTransaction } from './card-records.js';
import { createCooldowns, runAttempt } from '../rules/cooldowns.js';
import { initialBalanceRefusal } from '../rules/rules.js';
import type { CoreDeps } from '../deps.js';
import { callProvider, CardServiceError } from '../rules/errors.js';
import { newRecordId } from '../ids.js';
import { createPendingOperations } from './pending-operations.js';
import { createAccount, postJournal, SYSTEM_ACCOUNTS, systemAccountId } from '../ledger/ledger.js';
import { maskPan } from '../provider/luhn.js';
import type { IssuedCard } from '../provider/provider.js';
import { percentOf, type Cents } from '../ledger/money.js';
import { inputGuards, type CreateCardInput } from '../rules/schemas.js';
import type { OperationHooks } from '../service.js';
import {
  toCard,
  type Caller,
  type Card,
  type CardWithBalance,
  type CloseResult,
  type CreationQuote,
  type SensitiveCardDetails,
  type StatusChange,
} from './views.js';

/** What the creation's last transaction writes a card from. */
interface IssuedCardRecord {
  caller: Caller;
  cardId: string;
  name: string;
  bin: BinRow;
  plan: PlanRow;
  issued: IssuedCard;
  at: string;
}

/** A `processing` card's address until the provider gives one. */
const NO_ADDRESS = { city: '', line1: '', line2: null, state: '', country: '', postalCode: '' } satisfies IssuedCard['address'];

/** How long a freeze or unfreeze holds the card's status at most (see `holdingStatus`): longer than a provider call lasts. */
export const STATUS_HOLD_MS = 30_000;
/** How long a freeze or unfreeze waits for another change of the same card to finish, and how often it looks. */
const STATUS_WAIT_MS = 10_000;
const STATUS_POLL_MS = 20;
/**
 * The holds on cards' statuses: leases (`src/db/lease.ts`) kept in `cards.status_change_until` alone, the
 * column they shipped with (no holder column: the until time tells holds apart).
 */
const STATUS_HOLDS = leasesOn({ table: 'cards', key: ['id'], columns: { until: 'status_change_until' }, leaseMs: STATUS_HOLD_MS });

/** How long a close refused by another close's cooldown waits for that close's outcome, and how often it looks. */
const CLOSE_WAIT_MS = 30_000;
const CLOSE_POLL_MS = 20;

export function createCardOperations({ db, clock, provider, cipher, settings }: CoreDeps) {
  const guard = inputGuards(settings);
  const cooldowns = createCooldowns(settings);
  const pending = createPendingOperations(db, clock);

  /** A coupon that can be redeemed now (read only); refuses an unusable one with its reason. */
  async function usableCoupon(ex: Executor, couponId: string, now: Date) {
    const coupon = await ex.selectFrom('coupons').selectAll().where('id', '=', couponId).executeTakeFirst();
    if (!coupon) throw new CardServiceError('INVALID_COUPON', { reason: 'coupon not found' });
    if (!coupon.active) throw new CardServiceError('INVALID_COUPON', { reason: 'coupon is inactive' });
    if (coupon.expires_at !== null && coupon.expires_at <= now.toISOString()) {
      throw new CardServiceError('INVALID_COUPON', { reason: 'coupon has expired' });
    }
    if (coupon.max_redemptions !== null && Number(coupon.redemptions) >= Number(coupon.max_redemptions)) {
      throw new CardServiceError('INVALID_COUPON', { reason: 'coupon has no redemptions left' });
    }
    return coupon;
  }

  function discounted(fee: Cents, coupon: { kind: string; value: number } | undefined): Cents {
    if (!coupon) return fee;
    const discount = coupon.kind === 'percent' ? percentOf(fee, Number(coupon.value)) : Number(coupon.value);
    return Math.max(0, fee - discount);
  }

  /** The plan's creation fee less the coupon, redeeming the coupon; refuses an unusable one. */
  async function creationFee(trx: Executor, fee: Cents, couponId: string | undefined, now: Date): Promise<Cents> {
    if (couponId === undefined) return fee;
    const coupon = await usableCoupon(trx, couponId, now);
    // The conditional update decides the last redemption, whatever ran beside this.
    const redeemed = await trx
      .updateTable('coupons')
      .set((eb) => ({ redemptions: eb('redemptions', '+', 1) }))
      .where('id', '=', couponId)
      .where((eb) => eb.or([eb('max_redemptions', 'is', null), eb('redemptions', '<', eb.ref('max_redemptions'))]))
      .executeTakeFirst();
    if (redeemed.numUpdatedRows === 0n) {
      throw new CardServiceError('INVALID_COUPON', { reason: 'coupon has no redemptions left' });
    }
    return discounted(fee, coupon);
  }

  /** The enabled BIN and active plan a creation names, or the spec's refusals, and a pair that can issue a card. */
  async function binAndPlan(ex: Executor, input: Pick<CreateCardInput, 'bin_id' | 'planId'>) {
    const bin = await ex.selectFrom('bins').selectAll().where('id', '=', input.bin_id).where('enabled', '=', 1).executeTakeFirst();
    if (!bin) throw new CardServiceError('INVALID_BIN');
    const plan = await ex.selectFrom('plans').selectAll().where('id', '=', input.planId).where('active', '=', 1).executeTakeFirst();
    if (!plan) throw new CardServiceError('INVALID_PLAN');
    const overLimit = initialBalanceRefusal({ initialBalance: Number(bin.initial_balance) }, { limit: Number(plan.limit_amount) });
    if (overLimit) throw overLimit;
    return { bin, plan };
  }

  /**
   * The card being created, in the creation's first transaction: `processing`, with its account and no
   * card data yet (a temporary provider id, so every operation needing the provider refuses it as not
   * ready), beside the fee held for it. `issueCard` completes it; a release removes it.
   */
  async function writeProcessingCard(
    trx: Executor,
    { caller, cardId, name, bin, plan, at }: Omit<IssuedCardRecord, 'issued'>,
  ): Promise<void> {
    const accountId = await createAccount(trx, 'card', at);
    await trx
      .insertInto('cards')
      .values({
        id: cardId,
        user_id: caller.userId,
        account_id: accountId,
        bin_id: bin.id,
        plan_id: plan.id,
        name,
        category: bin.wallet ? 'Wallet' : 'Online',
        status: 'processing',
        currency: bin.currency,
        three_ds: bin.three_ds,
        masked_pan: '',
        pan_encrypted: '',
        cvv_encrypted: '',
        exp: '',
        provider_card_id: `tmp_${randomUUID()}`,
        provider_ready: 0,
        address: JSON.stringify(NO_ADDRESS),
        limit_amount: plan.limit_amount,
        deposit: 0,
        last_topup_attempt_at: null,
        last_withdraw_attempt_at: null,
        created_at: at,
        updated_at: at,
      })
      .execute();
  }

  /** The issued card's data on its `processing` card, made `active`, and the BIN's initial balance on it, in the creation's last transaction. */
  async function issueCard(trx: Executor, { caller, cardId, bin, issued, at }: IssuedCardRecord): Promise<void> {
    const initialBalance = Number(bin.initial_balance);
    const written = await trx
      .updateTable('cards')
      .set({
        status: 'active',
        masked_pan: maskPan(issued.pan),
        ...(await sealCardData(trx, cipher, cardId, issued)),
        exp: issued.exp,
        provider_card_id: issued.providerCardId ?? `tmp_${randomUUID()}`,
        provider_ready: issued.providerCardId ? 1 : 0,
        address: JSON.stringify(issued.address),
        deposit: initialBalance,
        updated_at: at,
      })
      .where('id', '=', cardId)
      .where('user_id', '=', caller.userId)
      .where('status', '=', 'processing')
      .returning('account_id')
      .executeTakeFirst();
    if (!written) throw new Error(`Card ${cardId} is no longer being created`);
    const accountId = written.account_id;
    if (initialBalance > 0) {
      const funded = await postJournal(trx, {
        reference: `initial-balance:${cardId}`,
        kind: 'initial_balance',
        at,
        postings: [
          { accountId, amount: initialBalance },
          { accountId: await systemAccountId(trx, SYSTEM_ACCOUNTS.promotions), amount: -initialBalance, system: true },
        ],
      });
      await recordCardTransaction(trx, {
        cardId,
        userId: caller.userId,
        journalId: funded?.journalId ?? null,
        status: 'Approved',
        side: 'Credit',
        type: 'initial_balance',
        amount: initialBalance,
        currency: bin.currency,
        merchantName: 'Initial balance',
        at,
      });
    }
  }

  /** The cards, each `processing` one with the creation fee its creation holds (one read, only when there is one). */
  async function withHeldFees(cards: Card[]): Promise<Card[]> {
    const processing = cards.filter((c) => c.status === 'processing').map((c) => c.id);
    if (processing.length === 0) return cards;
    const held = await db
      .selectFrom('pending_operations')
      .select(['card_id', 'amount'])
      .where('kind', '=', 'create_card')
      .where('card_id', 'in', processing)
      .execute();
    const fees = new Map(held.map((h) => [h.card_id, Number(h.amount)]));
    return cards.map((c) => (c.status === 'processing' ? { ...c, heldFee: fees.get(c.id) ?? 0 } : c));
  }

  /**
   * Whether the card is closed once no closure of it waits on the provider any more (a close refused
   * by the cooldown another close took answers with that close's outcome, as when they queued on a lock).
   */
  async function closedOnceSettled(caller: Caller, cardId: string): Promise<boolean> {
    for (let waited = 0; waited < CLOSE_WAIT_MS && (await pending.closing(cardId)); waited += CLOSE_POLL_MS) {
      await sleep(CLOSE_POLL_MS);
    }
    return (await findOwnedCard(db, caller, cardId)).status === 'closed';
  }

  /**
   * Runs a freeze or unfreeze holding the card's status (migrations/20261124_05_card_status_changes.ts),
   * so that one change of a card at a time reaches the provider, and the provider sees them in the order
   * the database does. `change` gets the card as read under the hold and checks its rules again. A change
   * that finds the card held waits for the other to finish, up to `STATUS_WAIT_MS`; a hold whose process
   * died lapses after `STATUS_HOLD_MS`.
   */
  async function holdingStatus<T>(
    caller: Caller,
    cardId: string,
    action: 'freeze' | 'unfreeze',
    change: (card: CardWithBalance) => Promise<T>,
  ): Promise<T> {
    const row = { id: cardId };
    for (let waited = 0; ; waited += STATUS_POLL_MS) {
      const held = await STATUS_HOLDS.take(db, row, undefined, clock.now(), { where: sql<boolean>`user_id = ${caller.userId}` });
      if (held !== undefined) {
        try {
          return await change(await findOwnedCard(db, caller, cardId));
        } finally {
          await STATUS_HOLDS.release(db, row, held);
        }
      }
      if (waited >= STATUS_WAIT_MS) {
        throw new CardServiceError('PROVIDER_FAILED', { action, reason: 'another change of this card is still under way' });
      }
      await sleep(STATUS_POLL_MS);
    }
  }

  /**
   * A freeze or unfreeze: `allowed` refuses a card the change does not apply to (spec 4.8, 4.9), asked
   * before the hold and again under it; the provider applies the change, then the card records it.
   */
  async function changeStatus(
    caller: Caller,
    cardId: string,
    action: 'freeze' | 'unfreeze',
    allowed: (card: CardWithBalance) => void,
  ): Promise<StatusChange> {
    const [from, to] = action === 'freeze' ? (['active', 'frozen'] as const) : (['frozen', 'active'] as const);
    allowed(await findOwnedCard(db, caller, cardId));
    return holdingStatus(caller, cardId, action, async (card) => {
      allowed(card);
      await callProvider(action, () => provider[action](card.provider_card_id));
      const changed = await db
        .updateTable('cards')
        .set({ status: to, updated_at: clock.now().toISOString() })
        .where('id', '=', card.id)
        .where('status', '=', from)
        .executeTakeFirst();
      // No longer what it was (a closure ran beside it): refused, saying why.
      if (changed.numUpdatedRows === 0n) allowed(await findOwnedCard(db, caller, cardId));
      return { cardId: card.id, status: to };
    });
  }

  return {
    /**
     * What creating a card would cost (an extension for the bot's summary): the fee after the coupon
     * and the wallet after it. Refuses an unknown BIN, plan or unusable coupon; redeems nothing.
     */
    async quoteCreateCard(caller: Caller, input: CreateCardInput): Promise<CreationQuote> {
      guard.createCard(input);
      const { bin, plan } = await binAndPlan(db, input);
      const planFee = Number(plan.creation_fee);
      const coupon = input.coupon_id === undefined ? undefined : await usableCoupon(db, input.coupon_id, clock.now());
      const fee = discounted(planFee, coupon);
      const walletBalance = await accountBalance(db, caller.walletAccountId);
      return { planFee, fee, walletBalance, walletAfter: walletBalance - fee, initialBalance: Number(bin.initial_balance) };
    },

    /**
     * Creates a card: the plan's fee (less any coupon) from the wallet, the BIN's initial balance onto the
     * card. Checked in this order: BIN, plan, the BIN's initial balance within the plan's limit, coupon,
     * wallet, provider. The fee is held, the coupon redeemed and the card written in `processing` before
     * the provider issues it (outside any transaction); the card is then filled in and made `active`. A
     * provider refusal gives the fee and coupon back and removes the card.
     */
    async createCard(caller: Caller, input: CreateCardInput, hooks: OperationHooks<Card> = {}): Promise<Card> {
      guard.createCard(input);
      const now = clock.now();
      const at = now.toISOString();
      const cardId = randomUUID();
      const { bin, plan } = await db.transaction().execute(async (trx) => {
        await pending.recoverStale(trx, caller.userId, now);
        const chosen = await binAndPlan(trx, input);
        const fee = await creationFee(trx, Number(chosen.plan.creation_fee), input.coupon_id, now);
        await writeProcessingCard(trx, { caller, cardId, name: input.name, ...chosen, at });
        const held = await pending.hold(trx, {
          id: cardId,
          kind: 'create_card',
          userId: caller.userId,
          cardId,
          accountId: caller.walletAccountId,
          amount: fee,
          couponId: input.coupon_id ?? null,
          at,
        });
        if (!held) throw new CardServiceError('INSUFFICIENT_BALANCE', { required: fee });
        return chosen;
      });
      const issued = await pending.callProvider(cardId, 'issue', () =>
        provider.issue({ bin: bin.bin, country: bin.country, name: input.name }),
      );
      return pending.finish(
        cardId,
        async (trx, operation) => {
          await pending.settleHold(trx, operation, {
            accountId: await systemAccountId(trx, SYSTEM_ACCOUNTS.revenue),
            system: true,
            reference: `creation-fee:${cardId}`,
            kind: 'creation_fee',
            at,
          });
          await issueCard(trx, { caller, cardId, name: input.name, bin, plan, issued, at });
          return toCard(await findOwnedCard(trx, caller, cardId));
        },
        hooks,
      );
    },

    async getCard(caller: Caller, cardId: string): Promise<Card> {
      return (await withHeldFees([toCard(await findOwnedCard(db, caller, cardId))]))[0]!;
    },

    /** The caller's cards, oldest first (an extension: the spec lists no such endpoint). */
    async listCards(caller: Caller): Promise<Card[]> {
      const rows = await selectCards(db).where('cards.user_id', '=', caller.userId).orderBy('cards.number').execute();
      return withHeldFees(rows.map(toCard));
    },

    async getSensitiveDetails(caller: Caller, cardId: string): Promise<SensitiveCardDetails> {
      const card = await findOwnedCard(db, caller, cardId);
      if (card.status === 'processing') throw new CardServiceError('CARD_PROCESSING');
      return {
        id: card.id,
        pan: cipher.decrypt(card.pan_encrypted, `${card.id}:pan`),
        cvv: cipher.decrypt(card.cvv_encrypted, `${card.id}:cvv`),
        exp: card.exp,
        maskedPan: card.masked_pan,
        name: card.name,
      };
    },

    async freeze(caller: Caller, cardId: string): Promise<StatusChange> {
      return changeStatus(caller, cardId, 'freeze', (card) => {
        if (card.status === 'processing') throw new CardServiceError('CARD_NOT_READY_FREEZE');
        if (card.status === 'frozen') throw new CardServiceError('ALREADY_FROZEN');
        if (card.status !== 'active') throw new CardServiceError('ONLY_ACTIVE_CAN_FREEZE');
        if (!card.provider_ready) throw new CardServiceError('CARD_NOT_READY_FREEZE');
      });
    },

    async unfreeze(caller: Caller, cardId: string): Promise<StatusChange> {
      return changeStatus(caller, cardId, 'unfreeze', (card) => {
        if (card.status === 'processing') throw new CardServiceError('CARD_NOT_READY_UNFREEZE');
        if (card.status !== 'frozen') throw new CardServiceError('ONLY_FROZEN_CAN_UNFREEZE');
        if (!card.provider_ready) throw new CardServiceError('CARD_NOT_READY_UNFREEZE');
      });
    },

    /**
     * Closes for good: the provider terminates the card, its whole balance returns to the wallet.
     * Checked in this order: card found, already closed, not ready, cooldown (shared with
     * withdrawals; the attempt then counts even when the provider refuses), provider. The balance is
     * held off the card (a `Pending` line) before the provider is called, outside any transaction, and
     * reaches the wallet once it has terminated the card (the line `Approved`, with anything credited
     * to the card meanwhile); a provider refusal gives it back to the card (the line removed).
     */
    async close(caller: Caller, cardId: string): Promise<CloseResult> {
      const now = clock.now();
      const at = now.toISOString();
      const operationId = newRecordId();
      let card: CardWithBalance;
      try {
        card = await runAttempt(db, async (trx) => {
          await pending.recoverStale(trx, caller.userId, now);
          const found = await findOwnedCard(trx, caller, cardId);
          if (found.status === 'closed') throw new CardServiceError('ALREADY_CLOSED');
          if (!found.provider_ready) throw new CardServiceError('CARD_NOT_READY_CLOSE');
          await cooldowns.withdrawal.claim(trx, caller, found.id, now);
          // The balance leaves the card now, a `Pending` line on its statement, and reaches the wallet
          // once the provider has terminated the card.
          const balance = await lockedBalance(trx, found.account_id);
          const operation = { id: operationId, kind: 'close', userId: caller.userId, cardId: found.id, at } as const;
          if (balance === 0) await pending.record(trx, operation);
          else {
            const held = await pending.hold(trx, {
              ...operation,
              accountId: found.account_id,
              amount: balance,
              line: { type: 'card_close', currency: found.currency, merchantName: 'Wallet' },
            });
            if (!held) throw new Error('Card balance changed during closure');
          }
          return found;
        });
      } catch (refusal) {
        // A close that ran beside this one took the cooldown first: say what it did, once it is done.
        const closedMeanwhile =
          refusal instanceof CardServiceError && refusal.code === 'WITHDRAW_COOLDOWN' && (await closedOnceSettled(caller, cardId));
        throw closedMeanwhile ? new CardServiceError('ALREADY_CLOSED') : refusal;
      }
      await pending.callProvider(operationId, 'close', () => provider.terminate(card.provider_card_id));
      return pending.finish(operationId, async (trx, operation) => {
        // Locked before the balance: a purchase or refund beside this one decides first or waits.
        if ((await lockedCardStatus(trx, card.id)) === 'closed') {
          await pending.release(trx, operation, at);
          throw new CardServiceError('ALREADY_CLOSED');
        }
        const held = Number(operation.amount);
        // What reached the card since the hold (a refund) goes with what was held.
        const rest = await lockedBalance(trx, card.account_id);
        const balance = held + rest;
        let transactionId: string | null = null;
        let invoiceId: number | null = null;
        if (held > 0) {
          const settled = await pending.settleHold(trx, operation, {
            accountId: caller.walletAccountId,
            reference: `close:${card.id}`,
            kind: 'card_close',
            at,
          });
          invoiceId = settled.journalId;
        }
        if (rest > 0) {
          const moved = await postJournal(trx, {
            reference: held > 0 ? `close-rest:${card.id}` : `close:${card.id}`,
            kind: 'card_close',
            at,
            postings: [
              { accountId: card.account_id, amount: -rest },
              { accountId: caller.walletAccountId, amount: rest },
            ],
          });
          if (!moved) throw new Error('Card balance changed during closure');
          invoiceId ??= moved.journalId;
        }
        if (invoiceId !== null) {
          transactionId =
            held > 0
              ? await pending.settleLine(trx, operation, { journalId: invoiceId, amount: balance, at })
              : await recordCardTransaction(trx, {
                  cardId: card.id,
                  userId: caller.userId,
                  journalId: invoiceId,
                  status: 'Approved',
                  side: 'Debit',
                  type: 'card_close',
                  amount: balance,
                  currency: card.currency,
                  merchantName: 'Wallet',
                  at,
                });
        }
        await trx.updateTable('cards').set({ status: 'closed', updated_at: at }).where('id', '=', card.id).execute();
        return {
          cardId: card.id,
          balanceWithdrawn: balance,
          transactionId,
          invoiceId,
          newWalletBalance: await accountBalance(trx, caller.walletAccountId),
        };
      });
    },
  };
}
