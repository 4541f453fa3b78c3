import { newRecordId } from '../../ids.js';
import { checkCardId } from '../../operations/card-queries.js';
import { PENDING_GRACE_MS } from '../../operations/pending-operations.js';
import type { CloseResult } from '../../operations/views.js';
import { CardServiceError } from '../../rules/errors.js';
import { closeStateRefusal, withdrawCooldownRefusal } from '../../rules/rules.js';
import type { ClosureHold, ClosureRequest, MoneyStore, MoneyStoreDeps } from '../port.js';
import { holdClosure as holdStatement, settleClosure as settleStatement, toClosureSettled } from './closure-statements.js';
import { holdOnce } from './withdraw-statements.js';

// A card's closure (`operations/card-closure.ts`), each transaction one statement.

/**
 * `MoneyStore.holdClosure` as one statement (`holdClosure` of `closure-statements.ts`), committed on its
 * own. The same refusals from the same named checks in the same order, from what the statement found. When
 * the caller has operations pending past the grace period the statement does nothing, and the portable
 * store, which recovers them first, holds instead (rare).
 */
export async function holdClosure(
  { db, settings, pending }: MoneyStoreDeps,
  steps: MoneyStore,
  request: ClosureRequest,
): Promise<ClosureHold> {
  const { caller, cardId, operationId, now } = request;
  // The statement claims the cardholder's cooldown; a system closure does not: in steps (rare).
  if (request.system) return steps.holdClosure(request);
  checkCardId(cardId);
  const held = await holdOnce(
    holdStatement,
    db,
    cardId,
    caller.userId,
    now.toISOString(),
    new Date(now.getTime() - settings.withdrawCooldownSeconds * 1000).toISOString(),
    new Date(now.getTime() - PENDING_GRACE_MS).toISOString(),
    operationId,
    await pending.inFlightAccount(db),
    `hold:${operationId}`,
  );
  if (held.stale) return steps.holdClosure(request);
  const { card } = held;
  if (!card) throw new CardServiceError('CARD_NOT_FOUND');
  const refused =
    closeStateRefusal({ status: card.status, provider_ready: card.providerReady }) ??
    (card.cooled ? undefined : withdrawCooldownRefusal(card.last_withdraw_attempt_at, settings, now, { refused: true }));
  if (refused) throw refused;
  if (card.available > 0 && held.heldJournalId === undefined) throw new Error('Card balance changed during closure');
  return {
    ...request,
    card: { id: cardId, account_id: card.account_id, currency: card.currency, provider_card_id: card.provider_card_id },
  };
}

/**
 * `MoneyStore.settleClosure` as one statement (`settleClosure`), committed on its own. When it did nothing
 * (the operation no longer pending, the card closed meanwhile), the portable store's settling says which
 * and releases what the operation held (rare).
 */
export async function settleClosure({ pending }: MoneyStoreDeps, steps: MoneyStore, hold: ClosureHold): Promise<CloseResult> {
  const { caller, card, operationId, now } = hold;
  const settled = await pending.finishWhole(operationId, async (ex) =>
    toClosureSettled(
      await settleStatement.executeTakeOne(
        ex,
        operationId,
        card.id,
        caller.userId,
        caller.walletAccountId,
        await pending.inFlightAccount(ex),
        now.toISOString(),
        `close:${card.id}`,
        `close-rest:${card.id}`,
        newRecordId(),
      ),
    ),
  );
  if (!settled.taken) return steps.settleClosure(hold);
  return {
    cardId: card.id,
    balanceWithdrawn: settled.balance,
    transactionId: settled.transactionId,
    invoiceId: settled.invoiceId,
    newWalletBalance: settled.walletBalance,
  };
}
