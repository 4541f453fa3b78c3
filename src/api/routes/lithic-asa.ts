import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { isLosslessNumber, parse as losslessParse, stringify as losslessStringify } from 'lossless-json';
import { Webhook } from 'standardwebhooks';
import { type AsaRequest, type AsaResponse, FAILED_RESULT } from '../../core/provider/lithic-events/asa.js';
import type { Clock } from '../../infra/clock.js';
import type { Logger } from '../../infra/logger.js';
import { loggableError } from '../../infra/log-safe.js';

/**
 * `POST /provider/lithic/asa` (issue 34, section 2): Lithic's Auth Stream Access request, answered with an
 * `asa-response` decided by the core (src/core/provider/lithic-events/asa.ts).
 *
 * Signed as Lithic documents its `X-Lithic-HMAC`: base64 of HMAC-SHA256 with the ASA secret over the request's
 * JSON, keys sorted, without spaces, non-ASCII escaped (Python's `json.dumps(sort_keys=True, separators=(',', ':'))`);
 * a signature over the body exactly as sent is taken too (the same secret signed it). Lithic's newer ASA headers
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature`: Standard Webhooks with the same secret) are taken
 * instead when present. Refused with 401, before
 * anything is read: no signature, a wrong one, or a stale request: under Standard Webhooks, a `webhook-timestamp`
 * more than 5 minutes from our clock; under `X-Lithic-HMAC`, which signs no time, a request for a transaction never
 * seen here whose own `created` is more than `maxAgeMs` (5 minutes) from our clock either way (Lithic waits 2 s at
 * most). A transaction decided here before (an incremental authorization, Lithic's retry) keeps its first
 * `created` and is answered however old that is: the first answer given again, or the increment decided. A signed
 * request is always answered 200 with an `asa-response`: one that cannot be read, or whose decision fails or is
 * late, is declined.
 */
export interface LithicAsaRouteOptions {
  /** LITHIC_ASA_SECRET */
  secret: string;
  clock: Clock;
  logger: Logger;
  decide: (request: AsaRequest) => Promise<AsaResponse>;
  /** Whether a transaction was decided here before (`knownTransaction`): its requests are not judged stale by `created`. */
  known: (transactionToken: string) => Promise<boolean>;
  /** How far the request's `created` may be from our clock (5 minutes by default). */
  maxAgeMs?: number;
}

export const LITHIC_ASA_PATH = '/provider/lithic/asa';
const MAX_AGE_MS = 5 * 60_000;

/** Lithic's documented canonical JSON: keys sorted, no spaces, non-ASCII as `\uXXXX` (as Python's `json.dumps`). */
export function canonicalJson(value: unknown): string {
  return asciiOnly(JSON.stringify(sortKeys(value)));
}

/**
 * The canonical JSON of a body's text with its numbers written as they were sent (`1.0` stays `1.0`, as Python
 * writes a float, where `JSON.parse` and `JSON.stringify` would give `1`); undefined when it is not JSON.
 */
export function canonicalJsonOfText(text: string): string | undefined {
  try {
    return asciiOnly(losslessStringify(sortKeys(losslessParse(text))) ?? '');
  } catch {
    return undefined;
  }
}

/** DEL and non-ASCII as `\uXXXX`, UTF-16 units (an astral character as its surrogate pair), as Python's `ensure_ascii`. */
function asciiOnly(json: string): string {
  return json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object' || isLosslessNumber(value)) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
  );
}

/** The `X-Lithic-HMAC` of a body: base64 HMAC-SHA256 with the ASA secret. */
export function lithicHmac(secret: string, body: string | Buffer): string {
  return createHmac('sha256', secret).update(body).digest('base64');
}

function sameSignature(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Whether `header` signs the body: as sent, or as Lithic's canonical JSON of it, its numbers as sent or as
 * JavaScript writes them.
 */
export function verifyLithicHmac(secret: string, raw: Buffer, parsed: unknown, header: string | undefined): boolean {
  if (!header) return false;
  const given = header.trim();
  if (sameSignature(lithicHmac(secret, raw), given)) return true;
  if (parsed === undefined) return false;
  const asSent = canonicalJsonOfText(raw.toString('utf8'));
  if (asSent !== undefined && sameSignature(lithicHmac(secret, asSent), given)) return true;
  return sameSignature(lithicHmac(secret, canonicalJson(parsed)), given);
}

/** The Standard Webhooks check with the ASA secret: a `whsec_`/base64 secret as such, any other as its bytes. */
function standardWebhook(secret: string): Webhook {
  try {
    return new Webhook(secret);
  } catch {
    return new Webhook(Buffer.from(secret), { format: 'raw' });
  }
}

function verifiesStandard(webhook: Webhook, raw: Buffer, request: FastifyRequest): boolean {
  const header = (name: string) => {
    const value = request.headers[name];
    return typeof value === 'string' ? value : '';
  };
  try {
    webhook.verify(raw, {
      'webhook-id': header('webhook-id'),
      'webhook-timestamp': header('webhook-timestamp'),
      'webhook-signature': header('webhook-signature'),
    });
    return true;
  } catch {
    return false;
  }
}

function parse(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** The request as far as its shape goes; the core reads the fields it needs. */
function asAsaRequest(body: unknown): AsaRequest | null {
  if (body === null || typeof body !== 'object') return null;
  const request = body as Partial<AsaRequest>;
  const ok =
    typeof request.token === 'string' &&
    typeof request.status === 'string' &&
    typeof request.created === 'string' &&
    typeof request.card?.token === 'string' &&
    typeof request.merchant?.descriptor === 'string' &&
    (Number.isSafeInteger(request.amounts?.cardholder?.amount) || Number.isSafeInteger(request.amount));
  return ok ? (request as AsaRequest) : null;
}

/** The ASA route in a scope of its own, where JSON bodies are kept raw for the signature. */
export const lithicAsaRoutes: FastifyPluginAsync<LithicAsaRouteOptions> = async (scope, options) => {
  const { secret, clock, logger, decide, known } = options;
  const maxAgeMs = options.maxAgeMs ?? MAX_AGE_MS;
  const webhook = standardWebhook(secret);
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  scope.post(
    LITHIC_ASA_PATH,
    { config: { public: true }, schema: { hide: true } },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const parsed = parse(raw);
      const header = request.headers['x-lithic-hmac'];
      const standard = request.headers['webhook-signature'] !== undefined;
      const signed = standard
        ? verifiesStandard(webhook, raw, request)
        : verifyLithicHmac(secret, raw, parsed, typeof header === 'string' ? header : undefined);
      if (!signed) {
        return reply.code(401).send({ error: 'Invalid or missing signature (X-Lithic-HMAC or webhook-signature)' });
      }
      const asa = asAsaRequest(parsed);
      if (asa && !standard) {
        const created = Date.parse(asa.created);
        const fresh = Number.isFinite(created) && Math.abs(clock.now().getTime() - created) <= maxAgeMs;
        // A lookup that fails counts the transaction as never seen: the stale request is refused, as it would be.
        if (!fresh && !(await known(asa.token).catch(() => false))) {
          return reply.code(401).send({ error: 'Stale request: created too far from now' });
        }
      }
      if (!asa) {
        logger.warn('A signed ASA request could not be read: declined');
        return reply.code(200).send({ result: FAILED_RESULT } satisfies AsaResponse);
      }
      try {
        return reply.code(200).send(await decide(asa));
      } catch (error) {
        logger.error({ err: loggableError(error) }, 'ASA decision failed: declined');
        return reply.code(200).send({ result: FAILED_RESULT, token: asa.token } satisfies AsaResponse);
      }
    },
  );
};
