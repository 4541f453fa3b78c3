import { z } from 'zod';
import { AT_MOST_TWO_DECIMALS, toAmount } from '../../core/ledger/money.js';
import type { Challenge } from '../../core/operations/challenges.js';
import { ok } from '../envelope.js';
import { cardIdParams, envelope } from '../http-schemas.js';
import { bearerAuth, cardIdFrom, errorResponses, type ApiApp, type RouteDeps } from './route-kit.js';

/** A purchase approval asked in chat (3-D Secure out of band) and its outcome. */
const challenge = z.object({
  id: z.string(),
  card_id: z.string(),
  amount: z.number().describe(`the purchase's amount, ${AT_MOST_TWO_DECIMALS}`),
  currency: z.string(),
  merchant_name: z.string(),
  status: z
    .enum(['pending', 'approved', 'declined', 'expired'])
    .describe('`pending` until answered in chat or past `expires_at` (then `expired`); answered once'),
  created_at: z.string().describe('ISO 8601, UTC'),
  expires_at: z.string().describe('ISO 8601, UTC: 5 minutes after `created_at`'),
  answered_at: z.string().nullable().describe('ISO 8601, UTC; null unless approved or declined'),
});

const presentChallenge = (c: Challenge): z.infer<typeof challenge> => ({
  id: c.id,
  card_id: c.cardId,
  amount: toAmount(c.amount),
  currency: c.currency,
  merchant_name: c.merchantName,
  status: c.status,
  created_at: c.createdAt,
  expires_at: c.expiresAt,
  answered_at: c.answeredAt,
});

/** Extension: a card's recent purchase approvals (section 5 of issue 33). */
export function challengeRoutes(app: ApiApp, { core, clock }: RouteDeps): void {
  app.get(
    '/api/v1/cards/:id/challenges',
    {
      schema: {
        summary: "Extension: the card's recent purchase approvals asked in chat (3-D Secure out of band), newest first, at most 20",
        tags: ['extension'],
        security: bearerAuth,
        params: cardIdParams,
        response: { 200: envelope(challenge.array()), ...errorResponses },
      },
    },
    async (request) =>
      ok(
        (await core.listChallenges(request.caller, cardIdFrom(request.params))).map(presentChallenge),
        'Challenges retrieved successfully',
        clock.now(),
      ),
  );
}
