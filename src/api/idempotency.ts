import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Clock } from '../infra/clock.js';
import { CardServiceError } from '../core/rules/errors.js';
import type { OperationHooks } from '../core/service.js';
import type { Database } from '../db/schema.js';
import type { Logger } from '../infra/logger.js';
import { asArray } from './auth.js';
import { failure } from './envelope.js';
import { HttpRefusal } from './http-errors.js';
import { ClaimTakenOverError, type IdempotencyStore } from './idempotency-store.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route's successes are kept for `Idempotency-Key` (routes that change something; their
     * handlers reply through `sendOnce`). `'otp'`: the reply holds an OTP code, and is kept no longer
     * than OTP codes are.
     */
    idempotent?: true | 'otp';
  }
  interface FastifyRequest {
    /** The `Idempotency-Key` claim this request holds, if any. */
    idempotencyClaim: IdempotencyClaim | null;
  }
}

export interface IdempotencyClaim {
  readonly key: string;
  readonly token: string;
  /** Stores the reply inside the operation's transaction; throws (rolling it back) if a retry took the claim over. */
  complete(trx: Transaction<Database>, statusCode: number, body: string): Promise<void>;
  completed: boolean;
}

export interface IdempotencyTtls {
  /** How long a reply is replayed. */
  ttlSeconds: number;
  /** How long a reply holding an OTP code is replayed (OTP_RETENTION_SECONDS): never longer than the code is kept. */
  otpTtlSeconds: number;
}

/**
 * What an `Idempotency-Key` may be: visible ASCII (0x21 to 0x7e), 1 to 255 characters. The check
 * below and the OpenAPI document (`openapi.ts`) both read these, so they cannot drift apart.
 */
export const IDEMPOTENCY_KEY_LENGTH = { min: 1, max: 255 } as const;
export const IDEMPOTENCY_KEY_PATTERN = new RegExp(`^[\\x21-\\x7e]{${IDEMPOTENCY_KEY_LENGTH.min},${IDEMPOTENCY_KEY_LENGTH.max}}$`);
/** The rule in words: `1 to 255 visible ASCII characters`. */
export const IDEMPOTENCY_KEY_RULE = `${IDEMPOTENCY_KEY_LENGTH.min} to ${IDEMPOTENCY_KEY_LENGTH.max} visible ASCII characters`;
const IN_PROGRESS_TEXT = 'A request with this Idempotency-Key is still being processed; retry shortly';

function requestHash(request: FastifyRequest): string {
  return createHash('sha256')
    .update(`${request.method} ${request.url}\n${JSON.stringify(request.body ?? null)}`)
    .digest('base64url');
}

/**
 * Extension: `Idempotency-Key` on POST. On a route marked `idempotent`, the same key with the same
 * request replays the stored reply; with another request it is refused (422); while the first has
 * neither committed nor outlived its lease, 409. Only successes are stored, in the operation's own
 * transaction (`sendOnce`): a refusal or a fault frees the key. Runs after authentication and
 * validation, so keys are per user and only valid requests claim one. Other POSTs (the read-only
 * top-up quote) check the header and keep nothing.
 */
export function installIdempotency(
  app: FastifyInstance,
  store: IdempotencyStore,
  clock: Clock,
  ttls: IdempotencyTtls,
  logger: Logger,
): void {
  app.decorateRequest('idempotencyClaim', null);

  function keyOf(request: FastifyRequest): string | undefined {
    const key = request.headers['idempotency-key'];
    if (key === undefined) return undefined;
    if (typeof key !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw new CardServiceError('VALIDATION', {
        issues: [{ code: 'invalid_format', message: `Idempotency-Key must be ${IDEMPOTENCY_KEY_RULE}`, path: ['Idempotency-Key'] }],
      });
    }
    return key;
  }

  const checkKey: preHandlerAsyncHookHandler = async (request) => {
    keyOf(request);
  };

  function claimFor(ttlSeconds: number): preHandlerAsyncHookHandler {
    return async (request: FastifyRequest, reply: FastifyReply) => {
      const key = keyOf(request);
      if (key === undefined) return;
      const userId = request.caller.userId;
      const outcome = await store.claim(userId, key, requestHash(request), clock.now(), ttlSeconds);
      const errorField = request.routeOptions.config?.errorField === true;
      switch (outcome.kind) {
        case 'claimed': {
          const claim: IdempotencyClaim = {
            key,
            token: outcome.token,
            completed: false,
            async complete(trx, statusCode, body) {
              try {
                await store.complete(trx, userId, key, outcome.token, statusCode, body);
              } catch (error) {
                if (error instanceof ClaimTakenOverError) throw new HttpRefusal(409, IN_PROGRESS_TEXT);
                throw error;
              }
              claim.completed = true;
            },
          };
          request.idempotencyClaim = claim;
          return;
        }
        case 'replay':
          return reply
            .code(outcome.statusCode)
            .header('content-type', 'application/json; charset=utf-8')
            .header('idempotent-replayed', 'true')
            .send(outcome.body);
        case 'mismatch':
          return reply.code(422).send(failure('Idempotency-Key was already used with a different request', clock.now(), { errorField }));
        case 'in-progress':
          return reply.code(409).send(failure(IN_PROGRESS_TEXT, clock.now(), { errorField }));
      }
    };
  }

  /** A stored reply bounds the user's keys; anything else frees the claim (conditional on its token: a stored one stays). */
  async function settle(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
    const claim = request.idempotencyClaim;
    if (claim === null) return payload;
    request.idempotencyClaim = null;
    const userId = request.caller.userId;
    if (claim.completed && reply.statusCode < 400) {
      await store.evictOldest(userId).catch((error: unknown) => logger.warn({ err: error }, 'Evicting old idempotency keys failed'));
    } else {
      await store.release(userId, claim.key, claim.token);
    }
    return payload;
  }

  // Attached to the authenticated POST routes only, so other requests do not pay for it.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.includes('POST') || route.config?.public === true) return;
    const kept = route.config?.idempotent;
    if (kept === undefined) {
      route.preHandler = [...asArray(route.preHandler), checkKey];
      return;
    }
    const ttlSeconds = kept === 'otp' ? Math.min(ttls.ttlSeconds, ttls.otpTtlSeconds) : ttls.ttlSeconds;
    route.preHandler = [...asArray(route.preHandler), claimFor(ttlSeconds)];
    route.onSend = [...asArray(route.onSend), settle];
  });
}

/**
 * Runs a core operation on a route marked `idempotent` and sends its reply. With a claimed
 * `Idempotency-Key`, the reply is rendered and stored inside the operation's transaction (through
 * the core's `commit` hook), so the two commit together: after a crash there is either a stored
 * reply or no effect at all.
 *
 * @example
 * async (request, reply) =>
 *   sendOnce(request, reply, 200, (hooks) => core.topup(request.caller, id, request.body, hooks), (r) => ok(presentTopup(r), '…', clock.now()))
 */
export async function sendOnce<R>(
  request: FastifyRequest,
  reply: FastifyReply,
  statusCode: number,
  // `unknown` rather than `R`, so that R is inferred from what `run` returns.
  run: (hooks: OperationHooks<unknown>) => Promise<R>,
  render: (result: R) => unknown,
): Promise<FastifyReply> {
  const claim = request.idempotencyClaim;
  if (claim === null) return reply.code(statusCode).send(render(await run({})));
  let body: string | undefined;
  const result = await run({
    commit: async (trx, done) => {
      // The core hands its hook the very result `run` resolves to.
      body = JSON.stringify(render(done as R));
      await claim.complete(trx, statusCode, body);
    },
  });
  return reply
    .code(statusCode)
    .header('content-type', 'application/json; charset=utf-8')
    .send(body ?? JSON.stringify(render(result)));
}
