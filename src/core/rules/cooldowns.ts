import type { Transaction } from 'kysely';
import { compiledOnce } from '../../db/compiled-query.js';
import type { CardRow, Database, Db, Executor } from '../../db/schema.js';
import { isoTime } from '../../infra/clock.js';
import { checkCardId, findOwnedCard } from '../operations/card-queries.js';
import { CardServiceError } from './errors.js';
import { topupCooldownRefusal, withdrawCooldownRefusal } from './rules.js';
import type { OperationHooks } from '../service.js';
import type { CoreSettings } from '../settings.js';
import type { Caller } from '../operations/views.js';

/**
 * A per-card cooldown between attempts (spec 4.6, 4.7, 4.11). It counts attempts: the claim is
 * recorded once the card is found and the cooldown has passed, and stays recorded when a later rule
 * refuses the operation (see `runAttempt`); an attempt refused by the cooldown itself records nothing.
 */
export interface Cooldown {
  /**
   * Records an attempt on the caller's card and returns the card as it is once claimed (its row
   * locked until the transaction ends); refuses a card the caller does not have, then a cooldown
   * that has not passed. A conditional update decides, so two simultaneous attempts cannot both pass.
   */
  claim(trx: Executor, caller: Caller, cardId: string, now: Date): Promise<ClaimedCard>;
}

/** What the operations that claim a cooldown read of the card (no more: each column returned costs). */
const CLAIMED_COLUMNS = [
  'id',
  'account_id',
  'status',
  'category',
  'deposit',
  'limit_amount',
  'currency',
  'provider_ready',
  'provider_card_id',
] as const satisfies readonly (keyof CardRow)[];
export type ClaimedCard = Pick<CardRow, (typeof CLAIMED_COLUMNS)[number]>;

/** The spec's two cooldowns: top-ups, and withdrawals and closures together; their refusals are the named checks'. */
export type Cooldowns = { topup: Cooldown; withdrawal: Cooldown };

export function createCooldowns(settings: CoreSettings): Cooldowns {
  return {
    topup: cooldown('last_topup_attempt_at', settings.topupCooldownSeconds, (last, now) =>
      topupCooldownRefusal(last, settings, now, { refused: true }),
    ),
    withdrawal: cooldown('last_withdraw_attempt_at', settings.withdrawCooldownSeconds, (last, now) =>
      withdrawCooldownRefusal(last, settings, now, { refused: true }),
    ),
  };
}

function cooldown(
  column: 'last_topup_attempt_at' | 'last_withdraw_attempt_at',
  cooldownSeconds: number,
  refusal: (last: string | null, now: Date) => CardServiceError | undefined,
): Cooldown {
  // Compiled once: the top-up's first statement (see `compiledOnce`).
  const claimAttempt = compiledOnce(4, (trx, at: string, cardId: string, userId: string, threshold: string) =>
    trx
      .updateTable('cards')
      .set({ [column]: at })
      .where('id', '=', cardId)
      .where('user_id', '=', userId)
      .where((eb) => eb.or([eb(column, 'is', null), eb(column, '<=', threshold)]))
      .returning(CLAIMED_COLUMNS),
  );
  return {
    async claim(trx, caller, cardId, now) {
      checkCardId(cardId);
      const threshold = isoTime(now.getTime() - cooldownSeconds * 1000);
      const [claimed] = (await claimAttempt.execute(trx, isoTime(now), cardId, caller.userId, threshold)).rows;
      if (claimed) return claimed;
      // The conditional update decided (the cooldown runs); the named check words the refusal.
      const card = await findOwnedCard(trx, caller, cardId);
      throw refusal(card[column], now);
    },
  };
}

/**
 * Runs an operation that claims a cooldown, in one transaction. A refusal (`CardServiceError`) that
 * `work` throws still commits what came before it, the claimed attempt, and is thrown once committed;
 * any other error rolls everything back. So an operation refuses before it moves anything
 * (`postJournal` refuses having changed nothing). `hooks.commit` runs last, once `work` has
 * succeeded: whatever it throws rolls the whole operation back.
 */
export async function runAttempt<T>(db: Db, work: (trx: Transaction<Database>) => Promise<T>, hooks: OperationHooks<T> = {}): Promise<T> {
  const outcome = await db.transaction().execute(async (trx): Promise<{ done: T } | { refused: CardServiceError }> => {
    let done: T;
    try {
      done = await work(trx);
    } catch (error) {
      if (error instanceof CardServiceError) return { refused: error };
      throw error;
    }
    await hooks.commit?.(trx, done);
    return { done };
  });
  if ('refused' in outcome) throw outcome.refused;
  return outcome.done;
}
