import type { Db } from '../../db/schema.js';
import type { OperationDeps } from '../deps.js';
import type { CardDataCipher } from '../keys/secrets.js';
import { callProvider, CardServiceError } from '../rules/errors.js';
import { type CardProvider, KEPT_BY_PROVIDER } from '../provider/provider.js';
import { inputGuards, type CreateCardInput } from '../rules/schemas.js';
import type { OperationHooks } from '../service.js';
import { close } from './card-closure.js';
import { createCard, quoteCreateCard } from './card-creation.js';
import { checkCardId, findOwnedCard, selectCards } from './card-queries.js';
import { spendingOfCards } from '../authorization/controls.js';
import { spendingOf } from '../authorization/controls.js';
import type { Clock } from '../../infra/clock.js';
import { freeze, unfreeze } from './card-status.js';
import { NOTHING_SPENT, toCard, type Caller, type Card, type SensitiveCardDetails } from './views.js';

/**
 * What cardholders do with their cards: create one (`card-creation.ts`), read them (below), freeze and
 * unfreeze one (`card-status.ts`), close one (`card-closure.ts`). Each is a function taking what it
 * needs; this factory binds them to one database, clock, provider, cipher and money store.
 */
export function createCardOperations({ db, clock, provider, cipher, settings, pending, money }: OperationDeps) {
  const guard = inputGuards(settings);
  const deps = { db, clock, provider, guard, pending, money };
  return {
    quoteCreateCard: (caller: Caller, input: CreateCardInput) => quoteCreateCard(deps, caller, input),
    createCard: (caller: Caller, input: CreateCardInput, hooks?: OperationHooks<Card>) => createCard(deps, caller, input, hooks),
    getCard: (caller: Caller, cardId: string) => getCard(db, clock, caller, cardId),
    listCards: (caller: Caller) => listCards(db, clock, caller),
    getSensitiveDetails: (caller: Caller, cardId: string) => getSensitiveDetails({ db, cipher, provider }, caller, cardId),
    freeze: (caller: Caller, cardId: string) => freeze(deps, caller, cardId),
    unfreeze: (caller: Caller, cardId: string) => unfreeze(deps, caller, cardId),
    close: (caller: Caller, cardId: string) => close(deps, caller, cardId),
  };
}

/** The caller's card, with what it has spent (read beside it: nothing is learnt of a card that is not the caller's). */
async function getCard(db: Db, clock: Clock, caller: Caller, cardId: string): Promise<Card> {
  checkCardId(cardId);
  const [row, spent] = await Promise.all([findOwnedCard(db, caller, cardId), spendingOf(db, cardId, clock.now())]);
  return (await withHeldFees(db, [toCard(row, spent)]))[0]!;
}

/** The caller's cards, oldest first (an extension: the spec lists no such endpoint). */
async function listCards(db: Db, clock: Clock, caller: Caller): Promise<Card[]> {
  const rows = await selectCards(db).where('cards.user_id', '=', caller.userId).orderBy('cards.number').execute();
  const spent = await spendingOfCards(
    db,
    rows.map((r) => r.id),
    clock.now(),
  );
  return withHeldFees(
    db,
    rows.map((r) => toCard(r, spent.get(r.id) ?? NOTHING_SPENT)),
  );
}

/**
 * The card's number, code and expiry: opened from the card row, or, when the provider keeps them (the row's
 * sealed number is `KEPT_BY_PROVIDER`: `IssuedCard.keptByProvider`), read from the provider now and kept nowhere.
 */
async function getSensitiveDetails(
  { db, cipher, provider }: { db: Db; cipher: CardDataCipher; provider: CardProvider },
  caller: Caller,
  cardId: string,
): Promise<SensitiveCardDetails> {
  const card = await findOwnedCard(db, caller, cardId);
  if (card.status === 'processing') throw new CardServiceError('CARD_PROCESSING');
  const pan = cipher.decrypt(card.pan_encrypted, `${card.id}:pan`);
  const kept =
    pan === KEPT_BY_PROVIDER && provider.readDetails !== undefined
      ? await callProvider('read', () => provider.readDetails!(card.provider_card_id))
      : { pan, cvv: cipher.decrypt(card.cvv_encrypted, `${card.id}:cvv`), exp: card.exp };
  return { id: card.id, pan: kept.pan, cvv: kept.cvv, exp: kept.exp, maskedPan: card.masked_pan, name: card.name };
}

/** The cards, each `processing` one with the creation fee its creation holds (one read, only when there is one). */
async function withHeldFees(db: Db, cards: Card[]): Promise<Card[]> {
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
