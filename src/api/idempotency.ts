import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../core/clock.js';
import { CardServiceError } from '../core/errors.js';
import { asArray } from './auth.js';
import { failure } from './envelope.js';
import type { IdempotencyStore } from './idempotency-store.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The key this request claimed; its reply is stored when it completes. */
    idempotencyKey: string | null;
  }
}

const KEY = /^[\x21-\x7e]{1,255}$/;

function requestHash(request: FastifyRequest): string {
  return createHash('sha256')
    .update(`${request.method} ${request.url}\n${JSON.stringify(request.body ?? null)}`)
    .digest('base64url');
}

/**
 * Extension: `Idempotency-Key` on POST. The same key with the same request replays the stored reply;
 * with another request it is refused (422); while the first is still running, 409. Runs after
 * authentication and validation, so keys are per user and only valid requests claim one. Cooldown
 * refusals (429) and faults (5xx) are not stored: the key can be retried.
 */
export function installIdempotency(app: FastifyInstance, store: IdempotencyStore, clock: Clock): void {
  app.decorateRequest('idempotencyKey', null);

  async function claim(request: FastifyRequest, reply: FastifyReply) {
    const key = request.headers['idempotency-key'];
    if (key === undefined) return;
    if (typeof key !== 'string' || !KEY.test(key)) {
      throw new CardServiceError('VALIDATION', {
        issues: [{ code: 'invalid_format', message: 'Idempotency-Key must be 1 to 255 visible ASCII characters', path: ['Idempotency-Key'] }],
      });
    }
    const outcome = await store.claim(request.caller.userId, key, requestHash(request), clock.now());
    const errorField = request.routeOptions.config?.errorField === true;
    switch (outcome.kind) {
      case 'claimed':
        request.idempotencyKey = key;
        return;
      case 'replay':
        return reply
          .code(outcome.statusCode)
          .header('content-type', 'application/json; charset=utf-8')
          .header('idempotent-replayed', 'true')
          .send(outcome.body);
      case 'mismatch':
        return reply
          .code(422)
          .send(failure('Idempotency-Key was already used with a different request', clock.now(), { errorField }));
      case 'in-progress':
        return reply
          .code(409)
          .send(failure('A request with this Idempotency-Key is still being processed; retry shortly', clock.now(), { errorField }));
    }
  }

  async function keepReply(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
    const key = request.idempotencyKey;
    if (key === null) return payload;
    request.idempotencyKey = null;
    const status = reply.statusCode;
    if (status >= 500 || status === 429 || typeof payload !== 'string') {
      await store.release(request.caller.userId, key);
    } else {
      await store.complete(request.caller.userId, key, status, payload);
    }
    return payload;
  }

  // Attached to the authenticated POST routes only, so other requests do not pay for it.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.includes('POST') || route.config?.public === true) return;
    route.preHandler = [...asArray(route.preHandler), claim];
    route.onSend = [...asArray(route.onSend), keepReply];
  });
}

