import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { CardService } from '../../core/service.js';
import type { Logger } from '../../infra/logger.js';
import { asArray } from '../hooks.js';
import type { ApiMetrics } from '../metrics.js';
import { webAppRoutes, type WebAppFromBot, type WebAppOptions } from '../webapp.js';
import { cardRoutes } from './cards.js';
import { catalogueRoutes } from './catalogue.js';
import { controlRoutes } from './controls.js';
import { challengeRoutes } from './challenges.js';
import { type HealthDeps, healthRoutes } from './health.js';
import { historyRoutes } from './history.js';
import { movementRoutes } from './movements.js';
import { openApiRoutes } from './openapi.js';

export interface ApiRoutesOptions extends HealthDeps {
  core: CardService;
  logger: Logger;
  /** Collects request durations when given; nothing is collected otherwise. */
  metrics?: ApiMetrics;
  /** The card-details Mini App, the bot's; not served when absent. */
  webApp?: WebAppOptions & { bot: WebAppFromBot };
  /** Whether to serve the card-service interface (`/api/v1`, the OpenAPI document): false in remote mode. */
  cardApi: boolean;
}

/**
 * The API's own routes, in a scope of their own registered after the plugins (so the OpenAPI document sees
 * them): hooks added here (the per-address limit of the public routes, the metrics) reach these routes
 * only, not those other parts mount on the app (the bot's webhook). Routes declared in here are logged by
 * their pattern; any mounted by another part is not.
 */
export const apiRoutes: FastifyPluginAsync<ApiRoutesOptions> = async (api, options) => {
  const { core, clock, logger, metrics, webApp, cardApi } = options;
  api.accessLog.apiRoutes(true);
  // Authentication counts the address of the other routes, in its own hook.
  const limiter = api.requestLimiter;
  if (limiter) {
    api.addHook('onRoute', (route) => {
      if (route.config?.public === true) route.onRequest = [limiter.address, ...asArray(route.onRequest)];
    });
  }
  metrics?.instrument(api);
  const routes = api.withTypeProvider<ZodTypeProvider>();
  const routeDeps = { core, clock };
  if (cardApi) {
    catalogueRoutes(routes, routeDeps);
    cardRoutes(routes, routeDeps);
    movementRoutes(routes, routeDeps);
    controlRoutes(routes, routeDeps);
    historyRoutes(routes, routeDeps);
    challengeRoutes(routes, routeDeps);
  }
  // The Mini App is the bot's: served in remote mode too, over the service the bot stands in front of.
  if (webApp) webAppRoutes(api, { ...webApp, clock, logger });
  healthRoutes(routes, options);
  if (cardApi) openApiRoutes(routes);
  api.accessLog.apiRoutes(false);
};
