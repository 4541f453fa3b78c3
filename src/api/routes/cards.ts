import { ok } from '../envelope.js';
import { card, cardIdParams, closeResult, createdCard, envelope, noBody, sensitiveDetails, statusChange } from '../http-schemas.js';
import { presentCard, presentClose, presentCreatedCard, presentSensitiveDetails, presentStatusChange } from '../presenters.js';
import { sendOnce } from '../idempotency.js';
import { bearerAuth, bodyErrorResponses, cardIdFrom, errorResponses, type ApiApp, type RouteDeps } from './route-kit.js';

/** Spec 4.4, 4.5, 4.8 to 4.11, and the card list extension. */
export function cardRoutes(app: ApiApp, { core, clock }: RouteDeps): void {
  app.post(
    '/api/v1/cards',
    {
      config: { idempotent: true },
      schema: {
        summary: 'Create a card; the plan fee is taken from the wallet',
        description:
          'Refusals, checked in this order before the provider is asked to issue the card: 422 `Invalid BIN ID or BIN is disabled`, ' +
          '`Invalid plan ID or plan is inactive`, `Initial balance of this BIN exceeds the plan limit. Initial balance: <n>, ' +
          'Limit: <n>` (the BIN would start the card above its limit), `Invalid coupon: <reason>`, `Insufficient balance. ' +
          'Required: <n>`; then 502 `Failed to issue card: <provider message>` (also when the provider does not answer in time).',
        tags: ['spec'],
        security: bearerAuth,
        body: core.schemas.createCard,
        response: { 201: envelope(createdCard), ...bodyErrorResponses },
      },
    },
    async (request, reply) =>
      sendOnce(
        request,
        reply,
        201,
        (hooks) => core.createCard(request.caller, request.body, hooks),
        (created) => ok(presentCreatedCard(created), 'Card created successfully', clock.now()),
      ),
  );

  app.get(
    '/api/v1/cards',
    {
      schema: {
        summary: "Extension: the caller's cards",
        tags: ['extension'],
        security: bearerAuth,
        response: { 200: envelope(card.array()), ...errorResponses },
      },
    },
    async (request) => ok((await core.listCards(request.caller)).map(presentCard), 'Cards retrieved successfully', clock.now()),
  );

  app.get(
    '/api/v1/cards/:id',
    {
      schema: {
        summary: 'Card details (non-sensitive)',
        tags: ['spec'],
        security: bearerAuth,
        params: cardIdParams,
        response: { 200: envelope(card), ...errorResponses },
      },
    },
    async (request) =>
      ok(presentCard(await core.getCard(request.caller, cardIdFrom(request.params))), 'Card retrieved successfully', clock.now()),
  );

  app.get(
    '/api/v1/cards/:id/details',
    {
      schema: {
        summary: 'Sensitive card details (PAN, CVV, EXP); never log or store',
        tags: ['spec'],
        security: bearerAuth,
        params: cardIdParams,
        response: { 200: envelope(sensitiveDetails), ...errorResponses },
      },
    },
    async (request, reply) => {
      const details = await core.getSensitiveDetails(request.caller, cardIdFrom(request.params));
      void reply.header('cache-control', 'no-store');
      return ok(presentSensitiveDetails(details), 'Card details retrieved successfully', clock.now());
    },
  );

  const stateChange = { tags: ['spec'], security: bearerAuth, params: cardIdParams, body: noBody };

  app.patch(
    '/api/v1/cards/:id/freeze',
    { schema: { ...stateChange, summary: 'Freeze an active card', response: { 200: envelope(statusChange), ...bodyErrorResponses } } },
    async (request) =>
      ok(presentStatusChange(await core.freeze(request.caller, cardIdFrom(request.params))), 'Card frozen successfully', clock.now()),
  );

  app.patch(
    '/api/v1/cards/:id/unfreeze',
    { schema: { ...stateChange, summary: 'Unfreeze a frozen card', response: { 200: envelope(statusChange), ...bodyErrorResponses } } },
    async (request) =>
      ok(presentStatusChange(await core.unfreeze(request.caller, cardIdFrom(request.params))), 'Card unfrozen successfully', clock.now()),
  );

  app.patch(
    '/api/v1/cards/:id/close',
    {
      schema: {
        ...stateChange,
        summary: 'Close a card for good; its balance returns to the wallet',
        response: { 200: envelope(closeResult), ...bodyErrorResponses },
      },
    },
    async (request) =>
      ok(presentClose(await core.close(request.caller, cardIdFrom(request.params))), 'Card closed successfully', clock.now()),
  );
}
