import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { leasesOn } from '../../db/lease.js';
import type { Db } from '../../db/schema.js';
import type { Clock } from '../../infra/clock.js';
import type { CardProvider } from '../provider/provider.js';
import { callProvider, CardServiceError } from '../rules/errors.js';
import { findOwnedCard } from './card-queries.js';
import type { Caller, CardWithBalance, StatusChange } from './views.js';

/** What a freeze or unfreeze needs: the database, the clock, the provider that applies it. */
export interface StatusDeps {
  db: Db;
  clock: Clock;
  provider: CardProvider;
}

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

export async function freeze(deps: StatusDeps, caller: Caller, cardId: string): Promise<StatusChange> {
  return changeStatus(deps, caller, cardId, 'freeze', (card) => {
    if (card.status === 'processing') throw new CardServiceError('CARD_NOT_READY_FREEZE');
    if (card.status === 'frozen') throw new CardServiceError('ALREADY_FROZEN');
    if (card.status !== 'active') throw new CardServiceError('ONLY_ACTIVE_CAN_FREEZE');
    if (!card.provider_ready) throw new CardServiceError('CARD_NOT_READY_FREEZE');
  });
}

export async function unfreeze(deps: StatusDeps, caller: Caller, cardId: string): Promise<StatusChange> {
  return changeStatus(deps, caller, cardId, 'unfreeze', (card) => {
    if (card.status === 'processing') throw new CardServiceError('CARD_NOT_READY_UNFREEZE');
    if (card.status !== 'frozen') throw new CardServiceError('ONLY_FROZEN_CAN_UNFREEZE');
    if (!card.provider_ready) throw new CardServiceError('CARD_NOT_READY_UNFREEZE');
  });
}

/**
 * A freeze or unfreeze: `allowed` refuses a card the change does not apply to (spec 4.8, 4.9), asked
 * before the hold and again under it; the provider applies the change, then the card records it.
 */
async function changeStatus(
  { db, clock, provider }: StatusDeps,
  caller: Caller,
  cardId: string,
  action: 'freeze' | 'unfreeze',
  allowed: (card: CardWithBalance) => void,
): Promise<StatusChange> {
  const [from, to] = action === 'freeze' ? (['active', 'frozen'] as const) : (['frozen', 'active'] as const);
  allowed(await findOwnedCard(db, caller, cardId));
  return holdingStatus({ db, clock }, caller, cardId, action, async (card) => {
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

/**
 * Runs a freeze or unfreeze holding the card's status (migrations/20261124_05_card_status_changes.ts),
 * so that one change of a card at a time reaches the provider, and the provider sees them in the order
 * the database does. `change` gets the card as read under the hold and checks its rules again. A change
 * that finds the card held waits for the other to finish, up to `STATUS_WAIT_MS`; a hold whose process
 * died lapses after `STATUS_HOLD_MS`.
 */
async function holdingStatus<T>(
  { db, clock }: Pick<StatusDeps, 'db' | 'clock'>,
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
