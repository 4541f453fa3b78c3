import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { CardServiceError, isCardServiceError } from '../../core/rules/errors.js';
import { hashToken } from '../../core/keys/secrets.js';
import type { CardService } from '../../core/service.js';
import type { Caller } from '../../core/operations/views.js';
import type { TokenHolder } from '../../core/operations/authentication.js';
import { asArray } from '../hooks.js';
import type { RequestLimiter, TokenCounts } from '../rate-limits.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** No token needed (liveness, metrics, the OpenAPI document). */
    public?: boolean;
    /** The bot's webhook, mounted by the bot: counted per address apart from the API's limits. */
    webhook?: boolean;
    /** Error text in `error` rather than `message`: the spec's OTP endpoints. */
    errorField?: boolean;
    /**
     * The route's operation checks the token itself (it takes `callerOf(request)`, a `TokenHolder` then),
     * so the token is not looked up first: on Postgres the HTTP top-up is then one round trip, not two,
     * and the wallet read one statement, not two, on either database.
     * Not with an `Idempotency-Key` (its claim needs the user first) nor a token over its own limit.
     */
    tokenCheckedByOperation?: boolean;
  }
  interface FastifyInstance {
    /** Authentication's part in answering an error (`plugins/errors.ts`). */
    authentication: Authentication;
  }
  interface FastifyRequest {
    /** Who the bearer token stands for; set before any authenticated route's handler runs. */
    caller: Caller;
    /** The hash of the request's valid bearer token (its rate-limit key); set with `caller`. */
    tokenHash: string;
    /** A token left to the route's operation to check (`tokenCheckedByOperation`), until it has. */
    tokenToCheck: TokenToCheck | null;
  }
}

/** A request's token not yet looked up, and how to settle its rate-limit counts once it has been. */
interface TokenToCheck {
  tokenHash: string;
  counts: TokenCounts | undefined;
}

const BEARER = /^Bearer[ \t]+([\x21-\x7e]{1,512})[ \t]*$/i;

/** The token of an `Authorization: Bearer <token>` header, or undefined when absent or malformed. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  return BEARER.exec(header)?.[1];
}

/**
 * Every route needs a valid token (spec section 5) unless marked public; unknown routes answer 404 first.
 * With limits (`plugins/limits.ts`), the request is counted against its token (a request without one, against
 * its address) in one step before the token is looked up; a valid token then goes on unless over its own
 * limit, whatever its address has spent, and a missing or invalid one counts against its address and as a
 * failed authentication of it, refused (429) once the address has used up either.
 */
export const authPlugin = fp<{ core: CardService }>(
  async (app, { core }) => {
    app.decorate('authentication', installAuthentication(app, core, app.requestLimiter));
  },
  { name: 'auth', dependencies: ['limits'] },
);

type Authentication = ReturnType<typeof installAuthentication>;

function installAuthentication(app: FastifyInstance, core: CardService, limiter: RequestLimiter | undefined) {
  app.decorateRequest('caller', null as unknown as Caller);
  app.decorateRequest('tokenHash', '');
  app.decorateRequest('tokenToCheck', null);

  async function authenticateAs(request: FastifyRequest, tokenHash: string | undefined): Promise<void> {
    if (tokenHash === undefined) throw new CardServiceError('INVALID_TOKEN');
    request.caller = await core.authenticateByTokenHash(tokenHash);
    request.tokenHash = tokenHash;
  }

  /** The token refused: counted as a failed authentication of its address (429 once they are used up), else 401. */
  async function refused(request: FastifyRequest, counts: TokenCounts | undefined, error: unknown): Promise<never> {
    if (limiter && counts && isCardServiceError(error) && error.code === 'INVALID_TOKEN') await limiter.tokenRefused(request, counts);
    throw error;
  }

  async function check(request: FastifyRequest, tokenHash: string | undefined, counts: TokenCounts | undefined): Promise<void> {
    try {
      await authenticateAs(request, tokenHash);
    } catch (error) {
      await refused(request, counts, error);
    }
    if (counts) limiter!.tokenAccepted(counts);
  }

  /**
   * Leaves the token to the route's operation (`tokenCheckedByOperation`) when it may: no key to claim
   * first, and not over its own limit (429 before any lookup). Returns whether it did.
   */
  function leftToOperation(request: FastifyRequest, tokenHash: string | undefined, counts: TokenCounts | undefined): boolean {
    if (tokenHash === undefined || request.headers['idempotency-key'] !== undefined || (counts && limiter!.overTokenLimit(counts)))
      return false;
    request.tokenToCheck = { tokenHash, counts };
    return true;
  }

  async function authenticateCounted(request: FastifyRequest, tokenHash: string | undefined, byOperation: boolean): Promise<void> {
    const counts = await limiter!.beforeToken(request, tokenHash);
    if (byOperation && leftToOperation(request, tokenHash, counts)) return;
    await check(request, tokenHash, counts);
  }

  /**
   * The route's `onRequest` hook, made when the route is declared (so no request reads its route's
   * options). A callback hook rather than an async one: a token left to the operation with no limits
   * to count goes on at once, with no promise to wait for.
   */
  function authenticateFor(byOperation: boolean): onRequestHookHandler {
    return (request, _reply, done) => {
      const tokenHash = tokenHashOf(request);
      let pending: Promise<void> | undefined;
      if (limiter) pending = authenticateCounted(request, tokenHash, byOperation);
      else if (!(byOperation && leftToOperation(request, tokenHash, undefined))) pending = check(request, tokenHash, undefined);
      if (pending === undefined) done();
      // A rejection with no error (a falsy value) must still stop the request, never let it through.
      else
        pending.then(
          () => done(),
          (error: unknown) => done(error instanceof Error ? error : new Error(`Authentication failed: ${String(error)}`)),
        );
    };
  }

  app.addHook('onRoute', (route) => {
    if (route.config?.public === true) return;
    route.onRequest = [authenticateFor(route.config?.tokenCheckedByOperation === true), ...asArray(route.onRequest)];
  });

  return {
    /**
     * Before an error is answered: a token left to the operation was found invalid by it (counted as a
     * failed authentication, which may turn the 401 into a 429), or was never checked because the request
     * failed first (a bad body): it is looked up now, so a bad token is told before anything else, as on
     * the other routes. Returns the error to answer with.
     */
    beforeErrorAnswer(request: FastifyRequest, error: unknown): Promise<unknown> | undefined {
      const pending = request.tokenToCheck;
      if (pending === null) return undefined;
      request.tokenToCheck = null;
      const settle = async () => {
        if (isCardServiceError(error) && error.code === 'INVALID_TOKEN') await refused(request, pending.counts, error);
        await check(request, pending.tokenHash, pending.counts);
        return error;
      };
      return settle().catch((authError: unknown) => authError);
    },
  };
}

/**
 * Who a route's operation acts for: the caller authentication found, or, on a route whose operation
 * checks the token itself (`tokenCheckedByOperation`), the token's holder, made the request's caller once
 * the operation has found it.
 */
export function callerOf(request: FastifyRequest): Caller | TokenHolder {
  const pending = request.tokenToCheck;
  if (pending === null) return request.caller;
  return {
    tokenHash: pending.tokenHash,
    authenticated(caller) {
      request.caller = caller;
      request.tokenHash = pending.tokenHash;
      request.tokenToCheck = null;
    },
  };
}

function tokenHashOf(request: FastifyRequest): string | undefined {
  const token = bearerToken(request.headers.authorization);
  return token === undefined ? undefined : hashToken(token);
}
