import type { Executor, PendingOperationRow } from '../../../db/schema.js';
import { postJournal } from '../../ledger/ledger.js';
import { accountBalance, findOwnedCard, lockedBalance, lockedCardStatus } from '../../operations/card-queries.js';
import { recordCardTransaction } from '../../operations/card-records.js';
import type { CloseResult } from '../../operations/views.js';
import { runAttempt } from '../../rules/cooldowns.js';
import { CardServiceError } from '../../rules/errors.js';
import { closeStateRefusal } from '../../rules/rules.js';
import type { ClosureHold, ClosureRequest, MoneyStoreDeps } from '../port.js';
import type { PostedJournal } from '../../ledger/ledger.js';
import type { HeldDestination, settleLine } from '../../operations/pending-settlement.js';

/** What the closure's last transaction asks of the pending operations (`PendingOperations`). */
interface ClosureSettling {
  release(trx: Executor, op: PendingOperationRow, at: string): Promise<void>;
  settleHold(trx: Executor, op: PendingOperationRow, to: HeldDestination): Promise<PostedJournal>;
  settleLine: typeof settleLine;
}

// A card's closure (`operations/card-closure.ts`), a statement per step.

/** `MoneyStore.holdClosure`: the recovery of stale operations, the checks, the hold. */
export async function holdClosure({ db, cooldowns, pending }: MoneyStoreDeps, request: ClosureRequest): Promise<ClosureHold> {
  const { caller, cardId, operationId, now } = request;
  const at = now.toISOString();
  const card = await runAttempt(db, async (trx) => {
    await pending.recoverStale(trx, caller.userId, now);
    const found = await findOwnedCard(trx, caller, cardId);
    const refused = closeStateRefusal(found);
    if (refused) throw refused;
    if (!request.system) await cooldowns.withdrawal.claim(trx, caller, found.id, now);
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
  return { ...request, card };
}

/** `MoneyStore.settleClosure`: the closure's last transaction, given the operation taken (`pending.finish`). */
export async function settleClosure(deps: MoneyStoreDeps, hold: ClosureHold): Promise<CloseResult> {
  return deps.pending.finish(hold.operationId, (trx, operation) => settleTaken(deps, hold, trx, operation));
}

async function settleTaken(
  { pending }: { pending: ClosureSettling },
  { caller, card, now }: ClosureHold,
  trx: Executor,
  operation: PendingOperationRow,
): Promise<CloseResult> {
  const at = now.toISOString();
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
}

/**
 * Finishes a closure a crash left pending once the provider shows the card closed (the recovery's `done`),
 * in the recovery's transaction, the operation taken: as its own last transaction would have, the balance
 * onto the owner's wallet and the card closed.
 */
export async function completeInterruptedClosure(
  pending: ClosureSettling,
  trx: Executor,
  operation: PendingOperationRow,
  at: string,
): Promise<void> {
  const card = await trx
    .selectFrom('cards')
    .innerJoin('users', 'users.id', 'cards.user_id')
    .select(['cards.id', 'cards.account_id', 'cards.currency', 'cards.provider_card_id', 'users.wallet_account_id'])
    .where('cards.id', '=', operation.card_id)
    .executeTakeFirstOrThrow();
  const caller = { userId: operation.user_id, walletAccountId: card.wallet_account_id };
  const hold = { caller, card, cardId: card.id, operationId: operation.id, now: new Date(at), system: true };
  await settleTaken({ pending }, hold, trx, operation).catch((error: unknown) => {
    // Closed meanwhile by another way: its hold given back already (`settleTaken`).
    if (!(error instanceof CardServiceError && error.code === 'ALREADY_CLOSED')) throw error;
  });
}
