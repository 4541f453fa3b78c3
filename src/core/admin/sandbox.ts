import { randomInt, randomUUID } from 'node:crypto';
import { recordCardTransaction } from '../operations/card-records.js';
import { accountBalance, lockedCardStatus, selectCards } from '../operations/card-queries.js';
import type { CoreDeps } from '../deps.js';
import { createSandboxMailbox } from '../provider/mailbox.js';
import { recordEvent } from '../operations/events.js';
import { postJournal, SYSTEM_ACCOUNTS, systemAccountId } from '../ledger/ledger.js';
import type { Cents } from '../ledger/money.js';
import type { CardTransaction } from '../operations/views.js';
import { AdminError } from './errors.js';

export interface SimulatedTransaction {
  transactionId: string;
  status: CardTransaction['status'];
  declineCode: string | null;
  cardBalance: Cents;
}

/** The card as the chat's pushes name it. */
const pushedCard = (card: { id: string; name: string; masked_pan: string }) => ({
  cardId: card.id,
  cardName: card.name,
  maskedPan: card.masked_pan,
});

/** The sandbox provider's side, played by the operator: finishing issuance, purchases, refunds and OTP codes. */
export function createSandbox({ db, clock }: Pick<CoreDeps, 'db' | 'clock'>) {
  const now = () => clock.now().toISOString();
  const mailbox = createSandboxMailbox(db, clock);

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
      const card = await issuedCardById(cardId);
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
            ...pushedCard(card),
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
      const card = await issuedCardById(cardId);
      const code = String(randomInt(1_000_000)).padStart(6, '0');
      await mailbox.deliver(card.provider_card_id, code);
      return { code };
    },
  };

  async function simulate(cardId: string, amount: Cents, merchant: string, side: 'Debit' | 'Credit'): Promise<SimulatedTransaction> {
    if (!Number.isSafeInteger(amount) || amount <= 0) throw new AdminError('The amount must be positive');
    const card = await issuedCardById(cardId);
    const at = now();
    const type = side === 'Debit' ? 'purchase' : 'refund';
    return db.transaction().execute(async (trx) => {
      const merchants = await systemAccountId(trx, SYSTEM_ACCOUNTS.merchants);
      // Read under a lock: a closure or freeze running beside this one decides first or waits.
      const status = await lockedCardStatus(trx, card.id);
      let declineCode: string | null = status === 'frozen' ? 'card_frozen' : status === 'closed' ? 'card_closed' : null;
      let posted = null;
      if (!declineCode) {
        posted = await postJournal(trx, {
          reference: `${type}:${randomUUID()}`,
          kind: type,
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
      // What the statement's line and the chat's push both say of the transaction.
      const line = { status: outcome, side, type, amount, currency: card.currency, merchantName: merchant, declineCode } as const;
      const journalId = posted?.journalId ?? null;
      const transactionId = await recordCardTransaction(trx, { cardId: card.id, userId: card.user_id, journalId, ...line, at });
      const cardBalance = posted?.balances.get(card.account_id) ?? (await accountBalance(trx, card.account_id));
      const event = { kind: 'card_transaction', transactionId, ...pushedCard(card), ...line, cardBalance, createdAt: at } as const;
      await recordEvent(trx, card.user_id, event, at);
      return { transactionId, status: outcome, declineCode, cardBalance };
    });
  }

  return sandbox;
}
