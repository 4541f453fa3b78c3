import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CardServiceError } from '../core/errors.js';
import { hashToken } from '../core/secrets.js';
import type { CardService } from '../core/service.js';
import type { Caller } from '../core/views.js';

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
  }
}

const BEARER = /^Bearer[ \t]+([\x21-\x7e]{1,512})[ \t]*$/i;

/** The token of an `Authorization: Bearer <token>` header, or undefined when absent or malformed. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  return BEARER.exec(header)?.[1];
}

/** Every route needs a valid token (spec section 5) unless marked public; unknown routes answer 404 first. */
export function installAuthentication(app: FastifyInstance, core: CardService): void {
  app.decorateRequest('caller', null as unknown as Caller);

  async function authenticate(request: FastifyRequest): Promise<void> {
    const token = bearerToken(request.headers.authorization);
    if (token === undefined) throw new CardServiceError('INVALID_TOKEN');
    request.caller = await core.authenticateByTokenHash(hashToken(token));
  }

  // Attached per route when it is declared, so no request looks up its route's options.
  app.addHook('onRoute', (route) => {
    if (route.config?.public === true) return;
    route.onRequest = [authenticate, ...asArray(route.onRequest)];
  });
}

export function asArray<T>(value: T | readonly T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? [...(value as T[])] : [value as T];
}
