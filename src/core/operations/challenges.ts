import { randomUUID } from 'node:crypto';
import type { CardChallengeRow, Db, Executor } from '../../db/schema.js';
import type { Clock } from '../../infra/clock.js';
import type { Cents } from '../ledger/money.js';
import { CardServiceError } from '../rules/errors.js';
import { findOwnedCard, isUuid } from './card-queries.js';
import { recordEvent } from './events.js';
import type { Caller } from './views.js';

/**
 * Purchase approval in chat (3-D Secure out of band): the provider asks the cardholder to approve a
 * purchase; the cardholder approves or declines it once, before it expires. Its answer is one conditional
 * update, so of two answers at once exactly one is taken, and a late one changes nothing.
 */

/** How long a challenge waits for its answer (the 5 minutes; shorter only in the sandbox's tests). */
export const CHALLENGE_VALIDITY_MS = 5 * 60_000;
/** How many of a card's challenges its list shows, newest first. */
export const RECENT_CHALLENGES = 20;

export type ChallengeStatus = CardChallengeRow['status'];
export type ChallengeAnswer = 'approve' | 'decline';

export interface Challenge {
  id: string;
  cardId: string;
  cardName: string;
  maskedPan: string;
  amount: Cents;
  currency: string;
  merchantName: string;
  /** `expired` once past `expiresAt` unanswered, whether or not that was written. */
  status: ChallengeStatus;
  createdAt: string;
  expiresAt: string;
  answeredAt: string | null;
}

/** An answer's outcome: whether this answer was the one taken, and the challenge as it now is. */
export interface AnsweredChallenge {
  answered: boolean;
  challenge: Challenge;
}

/** The card a challenge is for, as the push names it. */
export interface ChallengedCard {
  id: string;
  user_id: string;
  name: string;
  masked_pan: string;
  currency: string;
}

type ChallengeDeps = { db: Db; clock: Clock };

const selectChallenges = (ex: Executor) =>
  ex
    .selectFrom('card_challenges')
    .innerJoin('cards', 'cards.id', 'card_challenges.card_id')
    .selectAll('card_challenges')
    .select(['cards.name as card_name', 'cards.masked_pan']);

type JoinedRow = CardChallengeRow & { card_name: string; masked_pan: string };

function toChallenge(row: JoinedRow, now: string): Challenge {
  const expired = row.status === 'pending' && row.expires_at <= now;
  return {
    id: row.id,
    cardId: row.card_id,
    cardName: row.card_name,
    maskedPan: row.masked_pan,
    amount: Number(row.amount),
    currency: row.currency,
    merchantName: row.merchant_name,
    status: expired ? 'expired' : row.status,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    answeredAt: row.answered_at,
  };
}

/**
 * Asks the card's holder to approve a purchase (the provider's side: the sandbox): the challenge and the
 * event that pushes it to the holder's chats, in one transaction.
 */
export async function openChallenge(
  { db, clock }: ChallengeDeps,
  card: ChallengedCard,
  purchase: { amount: Cents; merchant: string; validForMs?: number },
): Promise<Challenge> {
  const id = randomUUID();
  const now = clock.now();
  const at = now.toISOString();
  const expiresAt = new Date(now.getTime() + (purchase.validForMs ?? CHALLENGE_VALIDITY_MS)).toISOString();
  const row = {
    id,
    card_id: card.id,
    user_id: card.user_id,
    amount: purchase.amount,
    currency: card.currency,
    merchant_name: purchase.merchant,
    status: 'pending' as const,
    created_at: at,
    expires_at: expiresAt,
    answered_at: null,
  };
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('card_challenges').values(row).execute();
    await recordEvent(
      trx,
      card.user_id,
      {
        kind: 'challenge',
        challengeId: id,
        cardId: card.id,
        cardName: card.name,
        maskedPan: card.masked_pan,
        amount: purchase.amount,
        currency: card.currency,
        merchantName: purchase.merchant,
        expiresAt,
        createdAt: at,
      },
      at,
    );
  });
  return toChallenge({ ...row, card_name: card.name, masked_pan: card.masked_pan }, at);
}

/** A challenge by id, as it is now (the sandbox's wait reads it); undefined when there is none. */
export async function readChallenge({ db, clock }: ChallengeDeps, challengeId: string): Promise<Challenge | undefined> {
  const row = await selectChallenges(db).where('card_challenges.id', '=', challengeId).executeTakeFirst();
  return row && toChallenge(row, clock.now().toISOString());
}

/** Writes `expired` on a challenge left unanswered past its time (what the reads already show). */
export async function recordExpiry({ db, clock }: ChallengeDeps, challengeId: string): Promise<void> {
  await db
    .updateTable('card_challenges')
    .set({ status: 'expired' })
    .where('id', '=', challengeId)
    .where('status', '=', 'pending')
    .where('expires_at', '<=', clock.now().toISOString())
    .execute();
}

/**
 * The cardholder's answer: taken only while the challenge waits (pending, not expired) and only from its
 * card's owner, while its card is active; another user's challenge reads like a missing card. A second or
 * late answer, or one for a card closed or frozen meanwhile, is not taken and changes nothing: the outcome says so, with the challenge as it is.
 */
export async function answerChallenge(
  { db, clock }: ChallengeDeps,
  caller: Caller,
  challengeId: string,
  answer: ChallengeAnswer,
): Promise<AnsweredChallenge> {
  if (!isUuid(challengeId)) throw new CardServiceError('CARD_NOT_FOUND');
  const at = clock.now().toISOString();
  const taken = await db
    .updateTable('card_challenges')
    .set({ status: answer === 'approve' ? 'approved' : 'declined', answered_at: at })
    .where('id', '=', challengeId)
    .where('user_id', '=', caller.userId)
    .where('status', '=', 'pending')
    .where('expires_at', '>', at)
    // A card closed or frozen since the challenge opened takes no answer: its purchase cannot go on.
    .where((eb) =>
      eb.exists(
        eb.selectFrom('cards').select('cards.id').whereRef('cards.id', '=', 'card_challenges.card_id').where('cards.status', '=', 'active'),
      ),
    )
    .executeTakeFirst();
  const row = await selectChallenges(db)
    .where('card_challenges.id', '=', challengeId)
    .where('card_challenges.user_id', '=', caller.userId)
    .executeTakeFirst();
  if (!row) throw new CardServiceError('CARD_NOT_FOUND');
  return { answered: taken.numUpdatedRows === 1n, challenge: toChallenge(row, at) };
}

/** A card's recent challenges with their outcomes, newest first (the caller's card only). */
export async function listChallenges({ db, clock }: ChallengeDeps, caller: Caller, cardId: string): Promise<Challenge[]> {
  await findOwnedCard(db, caller, cardId);
  const rows = await selectChallenges(db)
    .where('card_challenges.card_id', '=', cardId)
    .orderBy('card_challenges.created_at', 'desc')
    .orderBy('card_challenges.id')
    .limit(RECENT_CHALLENGES)
    .execute();
  const now = clock.now().toISOString();
  return rows.map((row) => toChallenge(row, now));
}

/** The cardholder's side, bound to the core's database and clock (spread into the card service). */
export function createChallengeOperations(deps: ChallengeDeps) {
  return {
    answerChallenge: (caller: Caller, challengeId: string, answer: ChallengeAnswer) => answerChallenge(deps, caller, challengeId, answer),
    listChallenges: (caller: Caller, cardId: string) => listChallenges(deps, caller, cardId),
  };
}
