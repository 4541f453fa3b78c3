import fp from 'fastify-plugin';
import type { Logger } from '../../infra/logger.js';
import type { Redis } from '../../infra/redis.js';
import { WindowCounts } from '../../infra/window-counts.js';
import { asArray } from '../hooks.js';
import { warnOfUntrustedProxy } from '../proxy-warning.js';
import { createRequestLimiter, type RateLimits, type RequestLimiter } from '../rate-limits.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The request limits (`rate-limits.ts`), read by authentication and the unknown routes; undefined without limits. */
    requestLimiter: RequestLimiter | undefined;
  }
}

export interface LimitsOptions {
  /** None when absent (tests, benchmarks): `startHttpApi` always passes the settings. */
  limits?: RateLimits;
  /** The process's Redis client (`REDIS_URL`): the limits are counted there, one count for every process. */
  redis?: Redis;
  /** Whether a proxy's addresses are believed (`HTTP_TRUST_PROXY`): if not, one carrying X-Forwarded-For is warned of. */
  trustsProxy: boolean;
  logger: Logger;
}

/**
 * The request limits, shared with the plugins that count (authentication, the unknown routes, the API's
 * public routes) as `requestLimiter`. The bot's webhook, mounted by the bot's part, gets its own count per
 * address here.
 */
export const limitsPlugin = fp<LimitsOptions>(
  async (app, { limits, redis, trustsProxy, logger }) => {
    const limiter = limits && createRequestLimiter(limits, logger, redis && new WindowCounts(redis, logger));
    app.decorate('requestLimiter', limiter);
    if (!trustsProxy) warnOfUntrustedProxy(app, logger);
    if (limiter) {
      app.addHook('onRoute', (route) => {
        if (route.config?.webhook === true) route.onRequest = [limiter.webhook, ...asArray(route.onRequest)];
      });
    }
  },
  { name: 'limits' },
);
