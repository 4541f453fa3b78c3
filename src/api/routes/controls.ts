import { CATEGORY_GROUP_NAMES } from '../../core/authorization/categories.js';
import { ok } from '../envelope.js';
import { autoTopup, cardIdParams, controlsView, envelope } from '../http-schemas.js';
import { presentAutoTopup, presentControlsView } from '../presenters.js';
import { bearerAuth, bodyErrorResponses, cardIdFrom, errorResponses, type ApiApp, type RouteDeps } from './route-kit.js';

const CATEGORIES = CATEGORY_GROUP_NAMES.map((name) => `\`${name}\``).join(', ');

/**
 * Our extension beside the interface's endpoints (issue 33, sections 2 and 3): a card's spending controls and
 * its auto top-up (the interface's earlier `auto_topup`), read and set by its holder. A card that is not the
 * caller's answers as every card route does (404); a closed card refuses a change (409).
 */
export function controlRoutes(app: ApiApp, { core, clock }: RouteDeps): void {
  app.get(
    '/api/v1/cards/:id/controls',
    {
      schema: {
        summary: "Extension: a card's spending controls, and what it has spent today and this month (UTC)",
        tags: ['extension'],
        security: bearerAuth,
        params: cardIdParams,
        response: { 200: envelope(controlsView), ...errorResponses },
      },
    },
    async (request) =>
      ok(
        presentControlsView(await core.getControls(request.caller, cardIdFrom(request.params))),
        'Card controls retrieved successfully',
        clock.now(),
      ),
  );

  app.put(
    '/api/v1/cards/:id/controls',
    {
      schema: {
        summary: "Extension: set a card's spending controls",
        description:
          'Per-purchase, daily and monthly limits (USD, UTC days and months; null for none) and the merchant-category groups ' +
          `refused (${CATEGORIES}). A field left out stays as it is. Refusals: 400 for a limit not positive, a third decimal, ` +
          "or an unknown category (its item names the allowed ones); 404 for a card that is not the caller's; 409 `Card is closed`.",
        tags: ['extension'],
        security: bearerAuth,
        params: cardIdParams,
        body: core.schemas.controls,
        response: { 200: envelope(controlsView), ...bodyErrorResponses },
      },
    },
    async (request) =>
      ok(
        presentControlsView(await core.setControls(request.caller, cardIdFrom(request.params), request.body)),
        'Card controls updated successfully',
        clock.now(),
      ),
  );

  app.put(
    '/api/v1/cards/:id/auto-topup',
    {
      schema: {
        summary: "Extension: turn a card's auto top-up on or off, with its minimum balance and top-up amount",
        description:
          'Once on, a top-up of `topup_amount` (a top-up like any other: platform fee, plan limit, wallet balance) runs when a ' +
          'clearing leaves the balance below `min_balance`, and during a purchase that would be declined for funds. An amount left ' +
          "out stays as it is. Refusals: 400 for `topup_amount` outside a top-up's bounds or above the card's plan limit, " +
          '`min_balance` negative or above the plan limit, or turning it on without a `topup_amount` given now or before; 404 ' +
          "for a card that is not the caller's; 409 `Card is closed`.",
        tags: ['extension'],
        security: bearerAuth,
        params: cardIdParams,
        body: core.schemas.autoTopup,
        response: { 200: envelope(autoTopup), ...bodyErrorResponses },
      },
    },
    async (request) =>
      ok(
        presentAutoTopup(await core.setAutoTopup(request.caller, cardIdFrom(request.params), request.body)),
        'Auto top-up updated successfully',
        clock.now(),
      ),
  );
}
