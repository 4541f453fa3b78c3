import { setTimeout as sleep } from 'node:timers/promises';
import type { CoreDeps } from '../deps.js';
import type { Cents } from '../ledger/money.js';
import { selectCards } from '../operations/card-queries.js';
import { type Challenge, CHALLENGE_VALIDITY_MS, openChallenge, readChallenge, recordExpiry } from '../operations/challenges.js';
import { AdminError } from './errors.js';

/** How often the sandbox's wait reads the challenge: an answer given by any process (the bot) is seen this soon. */
const ANSWER_POLL_MS = 100;

export interface Simulated3ds {
  outcome: 'approved' | 'declined' | 'expired';
  challenge: Challenge;
}

/**
 * The provider asking a cardholder to approve a purchase (3-D Secure out of band), played by the operator:
 * the challenge is pushed to the holder's chats, and the wait reads the database until it is answered (by
 * whichever process: the bot) or expires, never longer.
 */
export function createSandboxChallenges({ db, clock }: Pick<CoreDeps, 'db' | 'clock'>) {
  const deps = { db, clock };
  return {
    /**
     * Opens a challenge for the card and waits for its outcome. `validForMs` shortens the 5 minutes
     * (the command line's `--valid-for`, for tests and demonstrations).
     */
    async simulate3ds(
      cardId: string,
      amount: Cents,
      merchant: string,
      options: { validForMs?: number; pollMs?: number } = {},
    ): Promise<Simulated3ds> {
      if (!Number.isSafeInteger(amount) || amount <= 0) throw new AdminError('The amount must be positive');
      const validForMs = options.validForMs ?? CHALLENGE_VALIDITY_MS;
      if (!Number.isSafeInteger(validForMs) || validForMs <= 0 || validForMs > CHALLENGE_VALIDITY_MS)
        throw new AdminError('The validity must be between 1 second and 5 minutes');
      const card = await selectCards(db).where('cards.id', '=', cardId).executeTakeFirst();
      if (!card) throw new AdminError(`No card with id ${cardId}`);
      // The issuer declines a purchase on a card that is not active without asking its holder.
      if (card.status !== 'active') throw new AdminError(`Card ${cardId} is ${card.status}: a purchase on it is declined without asking`);
      const opened = await openChallenge(deps, card, { amount, merchant, validForMs });
      for (;;) {
        const challenge = (await readChallenge(deps, opened.id))!;
        if (challenge.status === 'expired') await recordExpiry(deps, opened.id);
        if (challenge.status !== 'pending') return { outcome: challenge.status, challenge };
        const left = Date.parse(challenge.expiresAt) - clock.now().getTime();
        await sleep(Math.max(1, Math.min(options.pollMs ?? ANSWER_POLL_MS, left)));
      }
    },
  };
}
