import type { Transaction } from 'kysely';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OperationHooks } from '../core/service.js';
import type { Database } from '../db/schema.js';

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

/**
 * What an `Idempotency-Key` may be: visible ASCII (0x21 to 0x7e), 1 to 255 characters. The check
 * below and the OpenAPI document (`openapi.ts`) both read these, so they cannot drift apart.
 */
export const IDEMPOTENCY_KEY_LENGTH = { min: 1, max: 255 } as const;
export const IDEMPOTENCY_KEY_PATTERN = new RegExp(`^[\\x21-\\x7e]{${IDEMPOTENCY_KEY_LENGTH.min},${IDEMPOTENCY_KEY_LENGTH.max}}$`);
/** The rule in words: `1 to 255 visible ASCII characters`. */
export const IDEMPOTENCY_KEY_RULE = `${IDEMPOTENCY_KEY_LENGTH.min} to ${IDEMPOTENCY_KEY_LENGTH.max} visible ASCII characters`;

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
