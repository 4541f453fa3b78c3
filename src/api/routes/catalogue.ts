import { ok } from '../envelope.js';
import { bin, envelope, health, plan } from '../http-schemas.js';
import { presentBin, presentHealth, presentPlan } from '../presenters.js';
import { bearerAuth, errorResponses, type ApiApp, type RouteDeps } from './route-kit.js';

/** Spec 4.1 to 4.3: health, BINs, plans. */
export function catalogueRoutes(app: ApiApp, { core, clock }: RouteDeps): void {
  app.get(
    '/api/v1/health',
    {
      schema: {
        summary: 'Health check (also a token test)',
        tags: ['spec'],
        security: bearerAuth,
        response: { 200: envelope(health), ...errorResponses },
      },
    },
    async () => ok(presentHealth(await core.health()), 'API is healthy', clock.now()),
  );

  app.get(
    '/api/v1/bins',
    {
      schema: {
        summary: 'Enabled BINs',
        tags: ['spec'],
        security: bearerAuth,
        response: { 200: envelope(bin.array()), ...errorResponses },
      },
    },
    async () => ok((await core.listBins()).map(presentBin), 'BINs retrieved successfully', clock.now()),
  );

  app.get(
    '/api/v1/card-plans',
    {
      schema: {
        summary: 'Active card plans',
        tags: ['spec'],
        security: bearerAuth,
        response: { 200: envelope(plan.array()), ...errorResponses },
      },
    },
    async () => ok((await core.listPlans()).map(presentPlan), 'Card plans retrieved successfully', clock.now()),
  );
}
