import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { CardServiceError } from '../../core/rules/errors.js';
import type { Db } from '../../db/schema.js';
import type { Clock } from '../../infra/clock.js';
import type { Logger } from '../../infra/logger.js';
import { failure } from '../envelope.js';
import { asArray } from '../hooks.js';
import { HttpRefusal } from '../http-errors.js';
import { IDEMPOTENCY_KEY_PATTERN, IDEMPOTENCY_KEY_RULE, type IdempotencyClaim } from '../idempotency.js';
import { ClaimTakenOverError, createIdempotencyStore, type IdempotencyStore } from '../idempotency-store.js';

export interface IdempotencyOptions {
  /** Where the replies are stored. */
  db: Db;
  clock: Clock;
  logger: Logger;
  /** How long a request may take: a pending claim is held this plus `LEASE_MARGIN_MS`, then a retry may take it over. */
  requestTimeoutMs: number;
  /** How long a stored reply is replayed (24 h by default). */
  ttlSeconds?: number;
  /** How long a reply holding an OTP code is replayed (24 h by default; never longer than `ttlSeconds`). */
  otpTtlSeconds?: number;
  /** Keys kept per user, the oldest stored replies going first (1000 by default). */
  maxKeysPerUser?: number;
}

const DAY_SECONDS = 86_400;
/** A pending `Idempotency-Key` claim is held this much longer than a request may take, then a retry may take it over. */
const LEASE_MARGIN_MS = 30_000;
const IN_PROGRESS_TEXT = 'A request with this Idempotency-Key is still being processed; retry shortly';

/**
 * `Idempotency-Key` on the authenticated POST routes, over the stored replies (`idempotency-store.ts`); the
 * expired ones are purged by the process's owner (`src/app/housekeeping.ts`).
 */
export const idempotencyPlugin = fp<IdempotencyOptions>(
  async (app, options) => {
    const ttlSeconds = options.ttlSeconds ?? DAY_SECONDS;
    const store = createIdempotencyStore(options.db, {
      ttlSeconds,
      leaseMs: options.requestTimeoutMs + LEASE_MARGIN_MS,
      maxKeysPerUser: options.maxKeysPerUser ?? 1000,
    });
    installIdempotency(app, store, options.clock, { ttlSeconds, otpTtlSeconds: options.otpTtlSeconds ?? ttlSeconds }, options.logger);
  },
  { name: 'idempotency', dependencies: ['auth'] },
);

interface IdempotencyTtls {
  /** How long a reply is replayed. */
  ttlSeconds: number;
  /** How long a reply holding an OTP code is replayed (OTP_RETENTION_SECONDS): never longer than the code is kept. */
  otpTtlSeconds: number;
}

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
function installIdempotency(app: FastifyInstance, store: IdempotencyStore, clock: Clock, ttls: IdempotencyTtls, logger: Logger): void {
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
