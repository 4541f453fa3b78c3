import type { Executor } from '../../../db/schema.js';
import { postJournal, SYSTEM_ACCOUNTS, systemAccountId } from '../../ledger/ledger.js';
import type { Cents } from '../../ledger/money.js';
import { recordCardTransaction } from '../../operations/card-records.js';
import { lockedCardStatus } from '../../operations/card-queries.js';
import { recordEvent } from '../../operations/events.js';

export interface LithicCredit {
  /** Lithic's event token: the journal's reference, so a credit is posted once however often it is delivered. */
  eventToken: string;
  cardToken: string;
  amount: Cents;
  merchantName: string;
  at: string;
}

/**
 * A merchant's credit onto the card (a RETURN, a financial credit): money the network has already pushed to our
 * program, so it is taken whatever the card's state but closed (a closed card's account is settled: the operator
 * sees the credit in review). Says why when it was not taken.
 */
export async function creditCard(trx: Executor, credit: LithicCredit): Promise<'credited' | 'unknown_card' | 'card_closed'> {
  const card = await trx
    .selectFrom('cards')
    .select(['id', 'user_id', 'account_id', 'name', 'masked_pan', 'currency'])
    .where('provider_card_id', '=', credit.cardToken)
    .executeTakeFirst();
  if (!card) return 'unknown_card';
  const reference = `lithic:credit:${credit.eventToken}`;
  // Taken already (a crash before the event was marked applied).
  if (await trx.selectFrom('journals').select('id').where('reference', '=', reference).executeTakeFirst()) return 'credited';
  // Read under a lock: a closure running beside this one decides first or waits.
  if ((await lockedCardStatus(trx, card.id)) === 'closed') return 'card_closed';
  const merchants = await systemAccountId(trx, SYSTEM_ACCOUNTS.merchants);
  const posted = await postJournal(trx, {
    reference,
    kind: 'refund',
    at: credit.at,
    postings: [
      { accountId: card.account_id, amount: credit.amount },
      { accountId: merchants, amount: -credit.amount, system: true },
    ],
  });
  const line = {
    status: 'Approved',
    side: 'Credit',
    type: 'refund',
    amount: credit.amount,
    currency: card.currency,
    merchantName: credit.merchantName,
    declineCode: null,
  } as const;
  const transactionId = await recordCardTransaction(trx, {
    cardId: card.id,
    userId: card.user_id,
    journalId: posted?.journalId ?? null,
    ...line,
    at: credit.at,
  });
  const cardBalance = posted?.balances.get(card.account_id) ?? 0;
  await recordEvent(
    trx,
    card.user_id,
    {
      kind: 'card_transaction',
      transactionId,
      cardId: card.id,
      cardName: card.name,
      maskedPan: card.masked_pan,
      ...line,
      cardBalance,
      createdAt: credit.at,
    },
    credit.at,
  );
  return 'credited';
}
