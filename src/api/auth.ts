import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CardServiceError, isCardServiceError } from '../core/rules/errors.js';
import { hashToken } from '../core/keys/secrets.js';
import type { CardService } from '../core/service.js';
import type { Caller } from '../core/operations/views.js';
import type { RequestLimiter } from './rate-limits.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** No token needed (liveness, metrics, the OpenAPI document). */
    public?: boolean;
    /** The bot's webhook, mounted by the bot: counted per address apart from the API's limits. */
    webhook?: boolean;
    /** Error text in `error` rather than `message`: the spec's OTP endpoints. */
    errorField?: boolean;
  }
  interface FastifyRequest {
    /** Who the bearer token stands for; set before any authenticated route's handler runs. */
    caller: Caller;
    /** The hash of the request's valid bearer token (its rate-limit key); set with `caller`. */
    tokenHash: string;
  }
}

const BEARER = /^Bearer[ \t]+([\x21-\x7e]{1,512})[ \t]*$/i;

/** The token of an `Authorization: Bearer <token>` header, or undefined when absent or malformed. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  return BEARER.exec(header)?.[1];
}

/**
 * Every route needs a valid token (spec section 5) unless marked public; unknown routes answer 404 first.
 * With limits, the request is counted against its address and its token in one step before the token is
 * looked up; a valid token then goes on unless over its own limit, and a missing or invalid one counts as
 * a failed authentication of its address, refused (429) once the address has used them up.
 */
export function installAuthentication(app: FastifyInstance, core: CardService, limiter?: RequestLimiter): void {
  app.decorateRequest('caller', null as unknown as Caller);
  app.decorateRequest('tokenHash', '');

  async function authenticateAs(request: FastifyRequest, tokenHash: string | undefined): Promise<void> {
    if (tokenHash === undefined) throw new CardServiceError('INVALID_TOKEN');
    request.caller = await core.authenticateByTokenHash(tokenHash);
    request.tokenHash = tokenHash;
  }

  const check = (request: FastifyRequest) => authenticateAs(request, tokenHashOf(request));

  async function checkWithinLimits(request: FastifyRequest, limits: RequestLimiter): Promise<void> {
    const tokenHash = tokenHashOf(request);
    const counts = await limits.beforeToken(request, tokenHash);
    try {
      await authenticateAs(request, tokenHash);
    } catch (error) {
      if (isCardServiceError(error) && error.code === 'INVALID_TOKEN') await limits.tokenRefused(request, counts);
      throw error;
    }
    limits.tokenAccepted(counts);
  }

  const authenticate = limiter === undefined ? check : (request: FastifyRequest) => checkWithinLimits(request, limiter);

  // Attached per route when it is declared, so no request looks up its route's options.
  app.addHook('onRoute', (route) => {
    if (route.config?.public === true) return;
    route.onRequest = [authenticate, ...asArray(route.onRequest)];
  });
}

function tokenHashOf(request: FastifyRequest): string | undefined {
  const token = bearerToken(request.headers.authorization);
  return token === undefined ? undefined : hashToken(token);
}

export function asArray<T>(value: T | readonly T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? [...(value as T[])] : [value as T];
}
