import { z } from 'zod';
import type { Db } from '../../../db/schema.js';
import type { Clock } from '../../../infra/clock.js';
import type { Logger } from '../../../infra/logger.js';
import { type Loop, type Report, startLoop } from '../../../infra/loop.js';
import type { Cents } from '../../ledger/money.js';
import { selectCards } from '../../operations/card-queries.js';
import { CHALLENGE_VALIDITY_MS, openChallenge } from '../../operations/challenges.js';
import { LithicApiError, LithicClient } from '../lithic/lithic-client.js';

/** Lithic's `challenge-event` (the object of `three_ds_authentication.challenge`): the fields read. */
export interface LithicThreeDsChallenge {
  authentication_object: {
    token: string;
    card_token: string;
    merchant?: { name?: string | null } | null;
    transaction?: { amount: number; cardholder_amount?: number | null } | null;
  };
  challenge: { expiry_time: string };
}

/** The cardholder's answer as Lithic takes it (`challenge-response`). */
export type ThreeDsAnswer = 'APPROVE' | 'DECLINE_BY_CUSTOMER';

/** Sends a cardholder's answer to Lithic: `POST /v1/three_ds_decisioning/challenge_response`. */
export interface ThreeDsResponder {
  /** Resolves once Lithic took it, or said it can take no answer any more (422: answered or expired there). */
  respond(threeDsToken: string, answer: ThreeDsAnswer): Promise<void>;
}

type Deps = { db: Db; clock: Clock };

/**
 * Lithic asks us to challenge the cardholder (3-D Secure out of band): the chat approval of issue 33 is opened
 * for the card, until Lithic's expiry (at most the usual 5 minutes), and remembered with Lithic's token so the
 * answer can be sent back (`sendThreeDsAnswers`). Asked twice for one token, it is opened once.
 */
export async function openThreeDsChallenge(deps: Deps, event: LithicThreeDsChallenge): Promise<string | null> {
  const auth = event.authentication_object;
  const known = await deps.db
    .selectFrom('lithic_three_ds')
    .select('challenge_id')
    .where('three_ds_token', '=', auth.token)
    .executeTakeFirst();
  if (known) return null;
  const card = await selectCards(deps.db).where('cards.provider_card_id', '=', auth.card_token).executeTakeFirst();
  if (!card) return 'unknown card';
  if (card.status !== 'active') return `card ${card.status}: not challenged, Lithic's challenge left to expire`;
  const amount: Cents = Math.abs(auth.transaction?.cardholder_amount ?? auth.transaction?.amount ?? 0);
  const left = Date.parse(event.challenge.expiry_time) - deps.clock.now().getTime();
  const validForMs = Number.isFinite(left) ? Math.max(1_000, Math.min(left, CHALLENGE_VALIDITY_MS)) : CHALLENGE_VALIDITY_MS;
  const merchant = auth.merchant?.name?.trim() || 'Unknown merchant';
  const challenge = await openChallenge(deps, card, { amount, merchant, validForMs });
  await deps.db
    .insertInto('lithic_three_ds')
    .values({ challenge_id: challenge.id, three_ds_token: auth.token, sent_answer: null, sent_at: null })
    .execute();
  return null;
}

/**
 * Sends Lithic every cardholder's answer not yet sent (approved → APPROVE, declined → DECLINE_BY_CUSTOMER); an
 * expired challenge is left to expire at Lithic too. A failed send is tried again on the next run. Returns how
 * many were sent. Run it after an answer and on a timer (the answer is taken in whichever process runs the bot).
 */
export async function sendThreeDsAnswers(deps: Deps, responder: ThreeDsResponder): Promise<number> {
  const answered = await deps.db
    .selectFrom('lithic_three_ds')
    .innerJoin('card_challenges', 'card_challenges.id', 'lithic_three_ds.challenge_id')
    .select(['lithic_three_ds.challenge_id', 'lithic_three_ds.three_ds_token', 'card_challenges.status'])
    .where('lithic_three_ds.sent_at', 'is', null)
    .where('card_challenges.status', 'in', ['approved', 'declined'])
    .execute();
  let sent = 0;
  for (const row of answered) {
    const answer: ThreeDsAnswer = row.status === 'approved' ? 'APPROVE' : 'DECLINE_BY_CUSTOMER';
    await responder.respond(row.three_ds_token, answer);
    await deps.db
      .updateTable('lithic_three_ds')
      .set({ sent_answer: answer, sent_at: deps.clock.now().toISOString() })
      .where('challenge_id', '=', row.challenge_id)
      .execute();
    sent += 1;
  }
  return sent;
}

/**
 * The answer sent through Lithic's client (src/core/provider/lithic/): `POST /v1/three_ds_decisioning/challenge_response`,
 * a 422 (answered or expired at Lithic already) taken as done. Not repeated by the client (a POST without an
 * idempotency key); `sendThreeDsAnswers` tries a failed one again on its next run.
 */
export function lithicThreeDsResponder(
  lithic: LithicClient | { apiUrl: string; apiKey: string; timeoutMs?: number; fetch?: typeof fetch },
): ThreeDsResponder {
  const client =
    lithic instanceof LithicClient
      ? lithic
      : new LithicClient({ apiKey: lithic.apiKey, baseUrl: lithic.apiUrl, timeoutMs: lithic.timeoutMs ?? 10_000, fetch: lithic.fetch });
  return {
    async respond(token, answer) {
      try {
        await client.request({
          method: 'POST',
          path: '/v1/three_ds_decisioning/challenge_response',
          body: { token, challenge_response: answer },
          answer: z.unknown(),
        });
      } catch (error) {
        if (!(error instanceof LithicApiError && error.status === 422)) throw error;
      }
    },
  };
}

/** How often answers are looked for: a cardholder's answer reaches Lithic within this (its challenge lasts minutes). */
export const THREE_DS_ANSWER_POLL_MS = 1_000;

/**
 * The background job sending the cardholders' answers to Lithic (`sendThreeDsAnswers` each tick), for the process
 * that serves Lithic's routes; `wake()` after an answer sends it at once.
 */
export function startThreeDsAnswers(deps: Deps, responder: ThreeDsResponder, logger: Logger, report?: Report): Loop {
  return startLoop(
    THREE_DS_ANSWER_POLL_MS,
    logger,
    'lithic 3-D Secure answers',
    report,
    async () => {
      await sendThreeDsAnswers(deps, responder);
      return undefined;
    },
    { unref: true },
  );
}
