import { randomInt, randomUUID } from 'node:crypto';
import { recordCardTransaction } from '../operations/card-records.js';
import { accountBalance, creditAccountOf, lockedCardStatus, selectCards } from '../operations/card-queries.js';
import type { CoreDeps } from '../deps.js';
import { createSandboxMailbox } from '../provider/mailbox.js';
import { recordEvent } from '../operations/events.js';
import { recordPushedOtp } from '../operations/pushed-otps.js';
import { postJournal, SYSTEM_ACCOUNTS, systemAccountId } from '../ledger/ledger.js';
import type { Cents } from '../ledger/money.js';
import type { CardTransaction } from '../operations/views.js';
import { AdminError } from './errors.js';
import { createCardService } from '../service.js';
import { AuthorizationError, type AutoTopupOutcome } from '../authorization/types.js';
import type { DeclineFix } from '../authorization/declines.js';

export interface SimulatedTransaction {
  /** The statement line's id, the authorization's too: what `simulate clear` and `simulate void` take. */
  transactionId: string;
  /** `Approved` (cleared), `Pending` (held, `--hold`), `Declined`, `Reversed` (voided). */
  status: CardTransaction['status'];
  declineCode: string | null;
  cardBalance: Cents;
  /** For a decline: what fixes it (the chat's button); for a clearing refused: why. */
  fix?: DeclineFix | null;
  reason?: 'over_tolerance' | 'insufficient_funds' | null;
  autoTopup?: AutoTopupOutcome | null;
}

/** A sandbox purchase's merchant beyond its name: an MCC outside every blocked group, in the US. */
export interface SimulatedMerchant {
  mcc?: string;
  country?: string;
  /** Leave the authorization held (`Pending`) rather than clearing it at once. */
  hold?: boolean;
}

/** The card as the chat's pushes name it. */
const pushedCard = (card: { id: string; name: string; masked_pan: string }) => ({
  cardId: card.id,
  cardName: card.name,
  maskedPan: card.masked_pan,
});

/** The sandbox provider's side, played by the operator: finishing issuance, purchases, refunds and OTP codes. */
export function createSandbox(deps: CoreDeps) {
  const { db, clock } = deps;
  const now = () => clock.now().toISOString();
  const mailbox = createSandboxMailbox(db, clock);
  // The core's authorization engine, as the provider's processor would call it.
  let engine: ReturnType<typeof createCardService> | undefined;
  const core = () => {
    engine ??= createCardService(deps);
    return engine;
  };
  const asAdmin = <T>(work: Promise<T>): Promise<T> =>
    work.catch((error: unknown) => {
      throw error instanceof AuthorizationError ? new AdminError(error.message) : error;
    });

  /** The provider transaction id of an authorization by its id (its statement line's). */
  async function authorizationById(transactionId: string) {
    const row = await db
      .selectFrom('card_authorizations')
      .select(['provider_transaction_id', 'status'])
      .where('id', '=', transactionId)
      .executeTakeFirst();
    if (!row) throw new AdminError(`No authorization with id ${transactionId}`);
    return row;
  }

  async function cardById(cardId: string) {
    const card = await selectCards(db).where('cards.id', '=', cardId).executeTakeFirst();
    if (!card) throw new AdminError(`No card with id ${cardId}`);
    return card;
  }

  /** A card the provider has issued: one in `processing` has nothing to simulate on yet, and may be removed. */
  async function issuedCardById(cardId: string) {
    const card = await cardById(cardId);
    if (card.status === 'processing') throw new AdminError(`Card ${cardId} is still being issued`);
    return card;
  }

  const sandbox = {
    /** The provider finished issuing a card that carried a temporary id. */
    async completeIssuance(cardId: string): Promise<string> {
      const card = await issuedCardById(cardId);
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

    /**
     * A merchant charges the card through the core's authorization engine: declined with a code and its
     * fix, or approved and (unless `hold`) cleared at once for the same amount, as one purchase.
     */
    async simulatePurchase(
      cardId: string,
      amount: Cents,
      merchant = 'Sandbox Merchant',
      { mcc = '5999', country = 'US', hold = false }: SimulatedMerchant = {},
    ): Promise<SimulatedTransaction> {
      if (!Number.isSafeInteger(amount) || amount <= 0) throw new AdminError('The amount must be positive');
      const card = await issuedCardById(cardId);
      const providerTransactionId = `sbx_${randomUUID()}`;
      const decision = await asAdmin(
        core().authorize({
          cardId: card.id,
          amount,
          currency: card.currency,
          merchant: { name: merchant, mcc, country },
          kind: 'purchase',
          providerTransactionId,
          announcePending: hold,
        }),
      );
      const { authorizationId: transactionId } = decision;
      // Said only when it was asked to run.
      const autoTopup = decision.autoTopup ? { autoTopup: decision.autoTopup } : {};
      if (!decision.approved) {
        const { declineCode, cardBalance, fix } = decision;
        return { transactionId, status: 'Declined', declineCode, cardBalance, fix, ...autoTopup };
      }
      if (hold) return { transactionId, status: 'Pending', declineCode: null, cardBalance: decision.cardBalance, ...autoTopup };
      const cleared = await asAdmin(core().clearAuthorization({ providerTransactionId }));
      return { transactionId, status: 'Approved', declineCode: null, cardBalance: cleared.cardBalance, ...autoTopup };
    },

    /** The merchant clears a held purchase: the amount held, or `amount` (less, or more within the tolerance). */
    async simulateClear(transactionId: string, amount?: Cents): Promise<SimulatedTransaction> {
      if (amount !== undefined && (!Number.isSafeInteger(amount) || amount <= 0)) throw new AdminError('The amount must be positive');
      const { provider_transaction_id: providerTransactionId } = await authorizationById(transactionId);
      const cleared = await asAdmin(core().clearAuthorization({ providerTransactionId, ...(amount === undefined ? {} : { amount }) }));
      return {
        transactionId,
        status: cleared.status === 'cleared' ? 'Approved' : 'Pending',
        declineCode: null,
        cardBalance: cleared.cardBalance,
        reason: cleared.reason,
        autoTopup: cleared.autoTopup,
      };
    },

    /** The merchant voids a held purchase: the hold back onto the card, the line `Reversed`. */
    async simulateVoid(transactionId: string): Promise<SimulatedTransaction> {
      const { provider_transaction_id: providerTransactionId } = await authorizationById(transactionId);
      const voided = await asAdmin(core().voidAuthorization(providerTransactionId));
      return { transactionId, status: 'Reversed', declineCode: null, cardBalance: voided.cardBalance };
    },

    /** Releases the holds past `AUTHORIZATION_HOLD_DAYS` (the housekeeping's sweep); returns how many. */
    async expireAuthorizations(): Promise<number> {
      return (await core().expireAuthorizations()).length;
    },

    /** Single-use cards whose closure failed after their first clearing, closed now (counts only). */
    closeSpentSingleUseCards(): Promise<{ closed: number; failed: number }> {
      return core().closeSpentSingleUseCards();
    },

    /** A merchant refunds onto the card. */
    async simulateRefund(cardId: string, amount: Cents, merchant = 'Sandbox Merchant'): Promise<SimulatedTransaction> {
      return refund(cardId, amount, merchant);
    },

    /** A 3-D Secure code arrives for the card; recorded and queued for delivery to chat. */
    async simulateOtp(cardId: string, amount: Cents = 0, merchant = 'Sandbox Merchant'): Promise<{ otpId: string; code: string }> {
      const card = await issuedCardById(cardId);
      const code = String(randomInt(1_000_000)).padStart(6, '0');
      const otpId = await recordPushedOtp(db, card, { code, amount, merchantName: merchant }, now());
      return { otpId, code };
    },

    /** An OTP e-mail lands in the sandbox mailbox, for the card's "request OTP from e-mail". */
    async simulateOtpEmail(cardId: string): Promise<{ code: string }> {
      const card = await issuedCardById(cardId);
      const code = String(randomInt(1_000_000)).padStart(6, '0');
      await mailbox.deliver(card.provider_card_id, code);
      return { code };
    },
  };

  /**
   * A refund: a credit from the merchants, whatever the card's state (the merchant owes it): onto the card,
   * frozen or not, or onto the owner's wallet once the card is closed (`creditAccountOf`). Never declined.
   */
  async function refund(cardId: string, amount: Cents, merchant: string): Promise<SimulatedTransaction> {
    if (!Number.isSafeInteger(amount) || amount <= 0) throw new AdminError('The amount must be positive');
    const card = await issuedCardById(cardId);
    const at = now();
    return db.transaction().execute(async (trx) => {
      const merchants = await systemAccountId(trx, SYSTEM_ACCOUNTS.merchants);
      // Read under a lock: a closure running beside this one decides first or waits.
      const status = await lockedCardStatus(trx, card.id);
      const credited = await creditAccountOf(trx, { status, account_id: card.account_id, user_id: card.user_id });
      const posted = await postJournal(trx, {
        reference: `refund:${randomUUID()}`,
        kind: 'refund',
        at,
        postings: [
          { accountId: credited, amount },
          { accountId: merchants, amount: -amount, system: true },
        ],
      });
      if (!posted) throw new Error('A refund cannot be refused');
      // What the statement's line and the chat's push both say of the transaction.
      const line = {
        status: 'Approved',
        side: 'Credit',
        type: 'refund',
        amount,
        currency: card.currency,
        merchantName: merchant,
        declineCode: null,
      } as const;
      const journalId = posted.journalId;
      const transactionId = await recordCardTransaction(trx, { cardId: card.id, userId: card.user_id, journalId, ...line, at });
      const cardBalance = posted.balances.get(card.account_id) ?? (await accountBalance(trx, card.account_id));
      const event = { kind: 'card_transaction', transactionId, ...pushedCard(card), ...line, cardBalance, createdAt: at } as const;
      await recordEvent(trx, card.user_id, event, at);
      return { transactionId, status: line.status, declineCode: null, cardBalance };
    });
  }

  return sandbox;
}
