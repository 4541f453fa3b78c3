import type { PendingOperationRow } from '../../db/schema.js';
import type { Cents } from '../ledger/money.js';

/** What a withdrawal or a closure waiting on the provider holds off a card: the `Pending` line its statement shows. */
export interface CardHold {
  kind: 'withdrawal' | 'close';
  amount: Cents;
  /** When the operation began (settled as interrupted once older than `PENDING_GRACE_MS`). */
  since: string;
}

/** The pending operations that hold money off a card (a creation's fee is held off the wallet instead). */
export const CARD_HOLD_KINDS: readonly PendingOperationRow['kind'][] = ['withdraw', 'close'];

/**
 * Rows of cards read with their holds in one statement (a card with two holds comes twice, one with
 * none once, its hold columns null), grouped back: each card once, in the rows' order, with its holds.
 */
export function groupHolds<
  R extends { id: string; hold_kind: string | null; hold_amount: number | string | bigint | null; hold_since: string | null },
>(rows: R[]): { row: R; holds: CardHold[] }[] {
  const cards = new Map<string, { row: R; holds: CardHold[] }>();
  for (const row of rows) {
    const card = cards.get(row.id) ?? { row, holds: [] };
    cards.set(row.id, card);
    if (row.hold_kind !== null) {
      card.holds.push({
        kind: row.hold_kind === 'close' ? 'close' : 'withdrawal',
        amount: Number(row.hold_amount),
        since: row.hold_since!,
      });
    }
  }
  return [...cards.values()];
}
