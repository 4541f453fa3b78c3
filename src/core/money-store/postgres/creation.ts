import { randomUUID } from 'node:crypto';
import { newRecordId } from '../../ids.js';
import { retiredKeyError, sealWith } from '../../keys/card-data-keys.js';
import { SYSTEM_ACCOUNTS } from '../../ledger/ledger.js';
import { PENDING_GRACE_MS } from '../../operations/pending-operations.js';
import { NOTHING_SPENT, toCard, type Card } from '../../operations/views.js';
import { type IssuedCard, maskedPanOf } from '../../provider/provider.js';
import { CardServiceError } from '../../rules/errors.js';
import { couponRefusal, creationFeeRefusal, initialBalanceRefusal } from '../../rules/rules.js';
import type { OperationHooks } from '../../service.js';
import type { CreationHold, CreationRequest, MoneyStore, MoneyStoreDeps } from '../port.js';
import { NO_ADDRESS } from '../portable/creation.js';
import {
  holdCreation as holdStatement,
  settleCreation as settleStatement,
  toCreationHold,
  toCreationSettled,
} from './creation-statements.js';

// A card's creation (`operations/card-creation.ts`), each transaction one statement.

/**
 * `MoneyStore.holdCreation` as one statement (`holdCreation` of `creation-statements.ts`), committed on its
 * own; a refusal has done nothing. The same refusals from the same named checks in the same order, from
 * what the statement found. When the caller has operations pending past the grace period the statement does
 * nothing, and the portable store, which recovers them first, holds instead (rare).
 */
export async function holdCreation({ db, pending }: MoneyStoreDeps, steps: MoneyStore, request: CreationRequest): Promise<CreationHold> {
  const { caller, input, cardId, now } = request;
  const row = await holdStatement.executeTakeOne(
    db,
    caller.userId,
    caller.walletAccountId,
    input.bin_id,
    input.planId,
    input.coupon_id ?? null,
    now.toISOString(),
    new Date(now.getTime() - PENDING_GRACE_MS).toISOString(),
    cardId,
    input.name,
    input.type ?? 'multi_use',
    `tmp_${randomUUID()}`,
    JSON.stringify(NO_ADDRESS),
    await pending.inFlightAccount(db),
    `hold:${cardId}`,
  );
  const held = toCreationHold(row);
  if (held.stale) return steps.holdCreation(request);
  const { bin, plan } = held;
  if (!bin) throw new CardServiceError('INVALID_BIN');
  if (!plan) throw new CardServiceError('INVALID_PLAN');
  const refused =
    initialBalanceRefusal({ initialBalance: bin.initial_balance }, plan) ??
    (input.coupon_id === undefined ? undefined : couponRefusal(held.coupon, now));
  if (refused) throw refused;
  if (held.fee === undefined) throw new Error(`Creation ${cardId} was neither refused nor priced`);
  if (held.heldJournalId === undefined) throw creationFeeRefusal({ fee: held.fee, available: held.walletAvailable }, { refused: true });
  return { ...request, bin };
}

/**
 * `MoneyStore.settleCreation` as one statement (`settleCreation`), committed on its own or with
 * `hooks.commit` beside it, whichever store held. When it did nothing, the refusal the portable store's
 * settling would give, in its order: the operation settled by the recovery, this process's key retired,
 * the card no longer being created.
 */
export async function settleCreation(
  { cipher, pending, systemAccounts }: MoneyStoreDeps,
  { caller, cardId, bin, now }: CreationHold,
  issued: IssuedCard,
  hooks: OperationHooks<Card>,
): Promise<Card> {
  return pending.finishWhole(
    cardId,
    async (ex) => {
      const sealed = sealWith(cipher, cardId, issued);
      const row = await settleStatement.executeTakeOne(
        ex,
        cardId,
        caller.userId,
        cipher.fingerprint,
        maskedPanOf(issued),
        sealed.pan_encrypted,
        sealed.cvv_encrypted,
        issued.exp,
        issued.providerCardId ?? `tmp_${randomUUID()}`,
        issued.providerCardId ? 1 : 0,
        JSON.stringify(issued.address),
        Number(bin.initial_balance),
        await systemAccounts(ex, SYSTEM_ACCOUNTS.revenue),
        await pending.inFlightAccount(ex),
        await systemAccounts(ex, SYSTEM_ACCOUNTS.promotions),
        now.toISOString(),
        `creation-fee:${cardId}`,
        `initial-balance:${cardId}`,
        newRecordId(),
      );
      const settled = toCreationSettled(row);
      if (settled.card) return toCard(settled.card, NOTHING_SPENT);
      if (!settled.pending) throw new Error(`Pending operation ${cardId} was settled by the recovery meanwhile`);
      if (settled.currentKey !== cipher.fingerprint) throw retiredKeyError(cipher);
      throw new Error(`Card ${cardId} is no longer being created`);
    },
    hooks,
  );
}
