import { randomUUID } from 'node:crypto';
import type { BinRow, CardType, Executor, PendingOperationRow, PlanRow } from '../../../db/schema.js';
import { sealCardData } from '../../keys/card-data-keys.js';
import { createAccount, postJournal, SYSTEM_ACCOUNTS } from '../../ledger/ledger.js';
import { binAndPlan, creationFee } from '../../operations/card-creation-checks.js';
import { accountBalance, findOwnedCard } from '../../operations/card-queries.js';
import { recordCardTransaction } from '../../operations/card-records.js';
import { NOTHING_SPENT, toCard, type Caller, type Card } from '../../operations/views.js';
import { type IssuedCard, maskedPanOf } from '../../provider/provider.js';
import { creationFeeRefusal } from '../../rules/rules.js';
import type { OperationHooks } from '../../service.js';
import type { CreationHold, CreationRequest, MoneyStoreDeps } from '../port.js';

// A card's creation (`operations/card-creation.ts`), a statement per step.

/** A `processing` card's address until the provider gives one. */
export const NO_ADDRESS = { city: '', line1: '', line2: null, state: '', country: '', postalCode: '' } satisfies IssuedCard['address'];

/** `MoneyStore.holdCreation`: the recovery of stale operations, the checks, the card written, the fee held. */
export async function holdCreation({ db, pending }: MoneyStoreDeps, request: CreationRequest): Promise<CreationHold> {
  const { caller, input, cardId, now } = request;
  const at = now.toISOString();
  const bin = await db.transaction().execute(async (trx) => {
    await pending.recoverStale(trx, caller.userId, now);
    const { bin, plan } = await binAndPlan(trx, input);
    const fee = await creationFee(trx, Number(plan.creation_fee), input.coupon_id, now);
    await writeProcessingCard(trx, { caller, cardId, name: input.name, type: input.type ?? 'multi_use', bin, plan, at });
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
    if (!held) throw creationFeeRefusal({ fee, available: await accountBalance(trx, caller.walletAccountId) }, { refused: true });
    return bin;
  });
  return { ...request, bin };
}

/** `MoneyStore.settleCreation`: the operation taken (`pending.finish`), its fee to the revenue account, the card issued. */
export async function settleCreation(
  deps: MoneyStoreDeps,
  hold: CreationHold,
  issued: IssuedCard,
  hooks: OperationHooks<Card>,
): Promise<Card> {
  const { caller, cardId, now } = hold;
  const at = now.toISOString();
  return deps.pending.finish(
    cardId,
    async (trx, operation) => {
      await deps.pending.settleHold(trx, operation, {
        accountId: await deps.systemAccounts(trx, SYSTEM_ACCOUNTS.revenue),
        system: true,
        reference: `creation-fee:${cardId}`,
        kind: 'creation_fee',
        at,
      });
      await issueCard(deps, trx, hold, issued);
      return toCard(await findOwnedCard(trx, caller, cardId), NOTHING_SPENT);
    },
    hooks,
  );
}

/**
 * The card being created, in the creation's first transaction: `processing`, with its account and no
 * card data yet (a temporary provider id, so every operation needing the provider refuses it as not
 * ready), beside the fee held for it. `issueCard` completes it; a release removes it.
 */
async function writeProcessingCard(
  trx: Executor,
  {
    caller,
    cardId,
    name,
    type,
    bin,
    plan,
    at,
  }: { caller: Caller; cardId: string; name: string; type: CardType; bin: BinRow; plan: PlanRow; at: string },
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
      type,
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

/**
 * Finishes a creation a crash left pending with the card the provider made for it (the recovery's
 * `{ issued }`), in the recovery's transaction, the operation taken: as its own last transaction would have,
 * the fee to the revenue account, the card's data on its `processing` card, made `active`.
 */
export async function completeInterruptedCreation(
  deps: Pick<MoneyStoreDeps, 'cipher' | 'systemAccounts'> & { pending: Pick<MoneyStoreDeps['pending'], 'settleHold'> },
  trx: Executor,
  operation: PendingOperationRow,
  at: string,
  issued: IssuedCard,
): Promise<void> {
  const row = await trx
    .selectFrom('cards')
    .innerJoin('users', 'users.id', 'cards.user_id')
    .innerJoin('bins', 'bins.id', 'cards.bin_id')
    .select(['users.wallet_account_id', 'bins.bin', 'bins.country', 'bins.currency', 'bins.initial_balance'])
    .where('cards.id', '=', operation.card_id)
    .executeTakeFirstOrThrow();
  await deps.pending.settleHold(trx, operation, {
    accountId: await deps.systemAccounts(trx, SYSTEM_ACCOUNTS.revenue),
    system: true,
    reference: `creation-fee:${operation.card_id}`,
    kind: 'creation_fee',
    at,
  });
  const caller = { userId: operation.user_id, walletAccountId: row.wallet_account_id };
  await issueCard(deps, trx, { caller, cardId: operation.card_id, bin: row, now: new Date(at) }, issued);
}

/** The issued card's data on its `processing` card, made `active`, and the BIN's initial balance on it, in the creation's last transaction. */
async function issueCard(
  { cipher, systemAccounts }: Pick<MoneyStoreDeps, 'cipher' | 'systemAccounts'>,
  trx: Executor,
  { caller, cardId, bin, now }: Pick<CreationHold, 'caller' | 'cardId' | 'bin' | 'now'>,
  issued: IssuedCard,
): Promise<void> {
  const at = now.toISOString();
  const initialBalance = Number(bin.initial_balance);
  const written = await trx
    .updateTable('cards')
    .set({
      status: 'active',
      masked_pan: maskedPanOf(issued),
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
        { accountId: await systemAccounts(trx, SYSTEM_ACCOUNTS.promotions), amount: -initialBalance, system: true },
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
