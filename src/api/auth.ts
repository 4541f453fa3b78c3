import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CardServiceError, isCardServiceError } from '../core/errors.js';
import { hashToken } from '../core/secrets.js';
import type { CardService } from '../core/service.js';
import type { Caller } from '../core/views.js';
import type { RequestLimiter } from './rate-limits.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** No token needed (liveness, metrics, the OpenAPI document). */
    public?: boolean;
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
 * With limits, an address that failed authentication too often is refused (429) before its token is
 * read, so guessing tokens (or trying a stolen one's neighbours) stops; then the request counts against
 * its address and, once its token is valid, against the token.
 */
export function installAuthentication(app: FastifyInstance, core: CardService, limiter?: RequestLimiter): void {
  app.decorateRequest('caller', null as unknown as Caller);
  app.decorateRequest('tokenHash', '');

  async function check(request: FastifyRequest): Promise<void> {
    const token = bearerToken(request.headers.authorization);
    if (token === undefined) throw new CardServiceError('INVALID_TOKEN');
    const tokenHash = hashToken(token);
    request.caller = await core.authenticateByTokenHash(tokenHash);
    request.tokenHash = tokenHash;
  }

  // The address is counted here too, in the same hook, for authenticated routes (the server counts it for public ones).
  async function checkWithinLimits(request: FastifyRequest, limits: RequestLimiter): Promise<void> {
    await limits.beforeToken(request);
    await limits.address(request);
    try {
      await check(request);
    } catch (error) {
      if (isCardServiceError(error) && error.code === 'INVALID_TOKEN') await limits.tokenRefused(request);
      throw error;
    }
    await limits.token(request);
  }

  const authenticate = limiter === undefined ? check : (request: FastifyRequest) => checkWithinLimits(request, limiter);

  // Attached per route when it is declared, so no request looks up its route's options.
  app.addHook('onRoute', (route) => {
    if (route.config?.public === true) return;
    route.onRequest = [authenticate, ...asArray(route.onRequest)];
  });
}

export function asArray<T>(value: T | readonly T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? [...(value as T[])] : [value as T];
}
