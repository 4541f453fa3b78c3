import type { CoreDeps } from '../deps.js';
import type { Caller } from '../operations/views.js';
import { AdminError } from './errors.js';

/**
 * The operator acting for a card's holder (`cards show`, `cards controls`): the caller the card's owner
 * authenticates as, so the core's own operations (and their checks) run as they do for the holder.
 */
export function createCardOwners({ db }: Pick<CoreDeps, 'db'>) {
  return {
    /** The caller who owns the card, or an `AdminError` naming the id when there is no such card. */
    async cardOwner(cardId: string): Promise<Caller> {
      const row = await db
        .selectFrom('cards')
        .innerJoin('users', 'users.id', 'cards.user_id')
        .select(['cards.user_id as userId', 'users.wallet_account_id as walletAccountId'])
        .where('cards.id', '=', cardId)
        .executeTakeFirst();
      if (!row) throw new AdminError(`No card with id ${cardId}`);
      return { userId: row.userId, walletAccountId: Number(row.walletAccountId) };
    },
  };
}
