import { callerOf } from '../plugins/auth.js';
import { ok } from '../envelope.js';
import { cardIdParams, envelope, topupQuote, topupResult, withdrawResult } from '../http-schemas.js';
import { presentQuote, presentTopup, presentWithdrawal } from '../presenters.js';
import { sendOnce } from '../idempotency.js';
import { bearerAuth, bodyErrorResponses, cardIdFrom, type ApiApp, type RouteDeps } from './route-kit.js';

/** Spec 4.6 and 4.7, and the top-up quote extension. */
export function movementRoutes(app: ApiApp, { core, clock }: RouteDeps): void {
  app.post(
    '/api/v1/cards/:id/topup',
    {
      config: { idempotent: true, tokenCheckedByOperation: true },
      schema: {
        summary: 'Top up a card from the wallet (amount plus platform fee)',
        tags: ['spec'],
        security: bearerAuth,
        params: cardIdParams,
        body: core.schemas.topup,
        response: { 200: envelope(topupResult), ...bodyErrorResponses },
      },
    },
    async (request, reply) =>
      sendOnce(
        request,
        reply,
        200,
        (hooks) => core.topup(callerOf(request), cardIdFrom(request.params), request.body, hooks),
        (result) => ok(presentTopup(result), 'Card topped up successfully', clock.now()),
      ),
  );

  app.post(
    '/api/v1/cards/:id/topup/quote',
    {
      schema: {
        summary: 'Extension: what a top-up would cost; changes nothing and starts no cooldown',
        tags: ['extension'],
        security: bearerAuth,
        params: cardIdParams,
        body: core.schemas.topup,
        response: { 200: envelope(topupQuote), ...bodyErrorResponses },
      },
    },
    async (request) =>
      ok(presentQuote(await core.quoteTopup(request.caller, cardIdFrom(request.params), request.body)), 'Top-up quote', clock.now()),
  );

  app.post(
    '/api/v1/cards/:id/withdraw',
    {
      config: { idempotent: true },
      schema: {
        summary: 'Withdraw from a card to the wallet',
        tags: ['spec'],
        security: bearerAuth,
        params: cardIdParams,
        body: core.schemas.withdraw,
        response: { 200: envelope(withdrawResult), ...bodyErrorResponses },
      },
    },
    async (request, reply) =>
      sendOnce(
        request,
        reply,
        200,
        (hooks) => core.withdraw(request.caller, cardIdFrom(request.params), request.body, hooks),
        (result) => ok(presentWithdrawal(result), 'Withdrawal completed successfully', clock.now()),
      ),
  );
}
