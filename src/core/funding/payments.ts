import { randomUUID } from 'node:crypto';
import type { FundingDeps } from './funding.js';
import { fundingTables, fundingTablesIn } from './funding-tables.js';
import { postJournal, SYSTEM_ACCOUNTS, systemAccountId } from '../ledger/ledger.js';
import type { Cents } from '../ledger/money.js';
import { inputGuards } from '../rules/schemas.js';

/** Wallets are in USD: invoices are too. */
export const INVOICE_CURRENCY = 'USD';

export interface WalletInvoice {
  id: string;
  userId: string;
  chatId: number;
  amount: Cents;
  currency: string;
}

/** Why a checkout is refused: the invoice is unknown, another user's, paid already, or for other money. */
export type CheckoutRefusal = 'unknown' | 'not-yours' | 'paid' | 'amount' | 'currency';

export type InvoiceStatus = 'open' | 'paid' | 'credited';

/** An invoice as the operator reconciles it: its charges, and how many of them are owed back. */
export interface InvoiceRecord {
  id: string;
  userId: string;
  chatId: number;
  amount: Cents;
  currency: string;
  createdAt: string;
  status: InvoiceStatus;
  payments: { telegramChargeId: string; providerChargeId: string; amount: number; currency: string; credited: boolean; at: string }[];
  /** Charges that credited nothing (a second payment of the invoice, other money): to refund. */
  owedBack: number;
}

export interface PaidCharge {
  invoiceId: string;
  telegramChargeId: string;
  providerChargeId: string;
  /** In the currency's smallest unit, as Telegram reports it. */
  amount: number;
  currency: string;
}

export type PaymentCredit =
  | {
      outcome: 'credited';
      userId: string;
      chatId: number;
      amount: Cents;
      walletBalance: Cents;
    }
  /**
   * The invoice was credited by an earlier charge: this one is recorded, credits nothing, and is owed back
   * (an admin refunds it with the payment provider).
   */
  | { outcome: 'paid-twice'; userId: string; chatId: number; amount: Cents }
  /** This charge was credited already: a repeated update. */
  | { outcome: 'duplicate' }
  /**
   * Not creditable (no such invoice, other money): nothing credited; a charge for one of our invoices is
   * recorded all the same, for the operator to refund.
   */
  | { outcome: 'refused'; reason: Exclude<CheckoutRefusal, 'not-yours' | 'paid'> };

/**
 * Telegram Payments into the wallet. An invoice's payload names a stored record of the intended credit;
 * the checkout is answered only for that record's user, unpaid, for exactly its amount. An invoice credits
 * the wallet once, whatever the charge ids: a repeated charge id is a repeated update (nothing happens), a
 * second charge of a credited invoice is recorded and owed back.
 *
 * @example
 * const invoice = await payments.openInvoice({ userId, chatId, amount: 5_000 });
 * const verdict = await payments.checkCheckout({ invoiceId: invoice.id, userId, amount: 5_000, currency: 'USD' });
 * await payments.credit({ invoiceId: invoice.id, telegramChargeId, providerChargeId, amount: 5_000, currency: 'USD' });
 */
export function createPaymentService({ db, clock, settings }: FundingDeps) {
  const guards = inputGuards(settings);
  const tables = fundingTables(db);
  const now = () => clock.now().toISOString();

  function refusal(
    invoice: { amount: number; currency: string } | undefined,
    charge: { amount: number; currency: string },
  ): Exclude<CheckoutRefusal, 'not-yours' | 'paid'> | undefined {
    if (!invoice) return 'unknown';
    if (charge.currency !== invoice.currency) return 'currency';
    if (charge.amount !== Number(invoice.amount)) return 'amount';
    return undefined;
  }

  return {
    /** Records the intended credit an invoice will name; the amount follows the top-up rules. */
    async openInvoice(input: { userId: string; chatId: number; amount: Cents }): Promise<WalletInvoice> {
      guards.topup(input.amount);
      const invoice = { id: randomUUID(), userId: input.userId, chatId: input.chatId, amount: input.amount, currency: INVOICE_CURRENCY };
      await tables
        .insertInto('wallet_invoices')
        .values({
          id: invoice.id,
          user_id: invoice.userId,
          chat_id: invoice.chatId,
          amount: invoice.amount,
          currency: invoice.currency,
          created_at: now(),
          paid_at: null,
        })
        .execute();
      return invoice;
    },

    /** The answer to a pre-checkout query: undefined when the user may pay, else why not. */
    async checkCheckout(input: {
      invoiceId: string;
      userId: string;
      amount: number;
      currency: string;
    }): Promise<CheckoutRefusal | undefined> {
      const invoice = await tables.selectFrom('wallet_invoices').selectAll().where('id', '=', input.invoiceId).executeTakeFirst();
      if (invoice && invoice.user_id !== input.userId) return 'not-yours';
      const refused = refusal(invoice, input);
      if (refused) return refused;
      return invoice?.paid_at === null ? undefined : 'paid';
    },

    /**
     * Credits a successful payment to the invoice's user, once per Telegram charge id: the charge is
     * claimed (unique key) in the transaction that posts the journal, so a repeated update credits nothing.
     */
    async credit(charge: PaidCharge): Promise<PaymentCredit> {
      const at = now();
      return db.transaction().execute(async (trx): Promise<PaymentCredit> => {
        const t = fundingTablesIn(trx);
        const invoice = await t.selectFrom('wallet_invoices').selectAll().where('id', '=', charge.invoiceId).executeTakeFirst();
        if (!invoice) return { outcome: 'refused', reason: 'unknown' };
        // Every charge for one of our invoices is kept, credited or not: the operator reconciles them (`invoices list`).
        const claimed = await t
          .insertInto('wallet_payments')
          .values({
            telegram_payment_charge_id: charge.telegramChargeId,
            provider_payment_charge_id: charge.providerChargeId,
            invoice_id: invoice.id,
            user_id: invoice.user_id,
            amount: charge.amount,
            currency: charge.currency,
            journal_id: null,
            created_at: at,
          })
          .onConflict((oc) => oc.column('telegram_payment_charge_id').doNothing())
          .returning('telegram_payment_charge_id')
          .executeTakeFirst();
        if (!claimed) return { outcome: 'duplicate' };
        const refused = refusal(invoice, charge);
        if (refused) return { outcome: 'refused', reason: refused };
        const amount = Number(invoice.amount);
        // The one conditional update decides which charge credits the invoice, whatever ran beside this.
        const firstPaid = await t
          .updateTable('wallet_invoices')
          .set({ paid_at: at })
          .where('id', '=', invoice.id)
          .where('paid_at', 'is', null)
          .executeTakeFirst();
        if (Number(firstPaid.numUpdatedRows) === 0) {
          return { outcome: 'paid-twice', userId: invoice.user_id, chatId: Number(invoice.chat_id), amount };
        }
        const user = await trx.selectFrom('users').select('wallet_account_id').where('id', '=', invoice.user_id).executeTakeFirstOrThrow();
        const wallet = Number(user.wallet_account_id);
        const posted = await postJournal(trx, {
          reference: `payment:${charge.telegramChargeId}`,
          kind: 'deposit',
          at,
          postings: [
            { accountId: wallet, amount },
            { accountId: await systemAccountId(trx, SYSTEM_ACCOUNTS.deposits), amount: -amount, system: true },
          ],
        });
        if (!posted) throw new Error('A payment could not credit the wallet');
        await t
          .updateTable('wallet_payments')
          .set({ journal_id: posted.journalId })
          .where('telegram_payment_charge_id', '=', charge.telegramChargeId)
          .execute();
        return {
          outcome: 'credited',
          userId: invoice.user_id,
          chatId: Number(invoice.chat_id),
          amount,
          walletBalance: posted.balances.get(wallet) ?? 0,
        };
      });
    },

    /**
     * Invoices with every charge Telegram reported for them, newest first: for the operator to reconcile
     * against the payment provider. `open`: no charge yet; `credited`: a charge credited the wallet; `paid`:
     * charged, nothing credited (other money). A charge not credited (`credited: false`) is owed back.
     */
    async listInvoices(filter: { status?: InvoiceStatus; userId?: string; limit?: number } = {}): Promise<InvoiceRecord[]> {
      const invoices = await tables
        .selectFrom('wallet_invoices')
        .selectAll()
        .$if(filter.userId !== undefined, (q) => q.where('user_id', '=', filter.userId!))
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .execute();
      const charges = await tables
        .selectFrom('wallet_payments')
        .selectAll()
        .$if(filter.userId !== undefined, (q) => q.where('user_id', '=', filter.userId!))
        .orderBy('created_at')
        .execute();
      const byInvoice = new Map<string, typeof charges>();
      for (const c of charges) byInvoice.set(c.invoice_id, [...(byInvoice.get(c.invoice_id) ?? []), c]);
      const records = invoices.map((invoice): InvoiceRecord => {
        const payments = (byInvoice.get(invoice.id) ?? []).map((c) => ({
          telegramChargeId: c.telegram_payment_charge_id,
          providerChargeId: c.provider_payment_charge_id,
          amount: Number(c.amount),
          currency: c.currency,
          credited: c.journal_id !== null,
          at: c.created_at,
        }));
        const status: InvoiceStatus = payments.some((p) => p.credited) ? 'credited' : payments.length > 0 ? 'paid' : 'open';
        return {
          id: invoice.id,
          userId: invoice.user_id,
          chatId: Number(invoice.chat_id),
          amount: Number(invoice.amount),
          currency: invoice.currency,
          createdAt: invoice.created_at,
          status,
          payments,
          owedBack: payments.filter((p) => !p.credited).length,
        };
      });
      const wanted = filter.status === undefined ? records : records.filter((r) => r.status === filter.status);
      return wanted.slice(0, filter.limit ?? wanted.length);
    },
  };
}

export type PaymentService = ReturnType<typeof createPaymentService>;
