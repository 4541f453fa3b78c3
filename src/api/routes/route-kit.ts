import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { checkCardId, isUuid } from '../../core/operations/card-queries.js';
import type { Clock } from '../../infra/clock.js';
import { CardServiceError } from '../../core/rules/errors.js';
import type { CardService } from '../../core/service.js';
import { errorEnvelope } from '../http-schemas.js';

export type ApiApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  ZodTypeProvider
>;

export interface RouteDeps {
  core: CardService;
  clock: Clock;
}

/** The `{id}` of a card route: empty → `Card ID is required`; not a UUID → not found, without asking the core. */
export function cardIdFrom(params: { id: string }): string {
  return checkCardId(params.id);
}

/** The OTP routes also take the card's small integer number (the spec documents an integer id there). */
export function cardReferenceFrom(params: { id: string }): string {
  const id = params.id;
  if (id.trim() === '') throw new CardServiceError('CARD_ID_REQUIRED');
  if (!isUuid(id) && !/^[1-9]\d{0,8}$/.test(id)) throw new CardServiceError('CARD_NOT_FOUND');
  return id;
}

/**
 * Error responses every authenticated route documents: 400 also for a malformed URL, 414 for one too
 * long, 429 for cooldowns and for the request limits.
 */
export const errorResponses = {
  400: errorEnvelope,
  401: errorEnvelope,
  404: errorEnvelope,
  409: errorEnvelope,
  414: errorEnvelope,
  422: errorEnvelope,
  429: errorEnvelope,
  500: errorEnvelope,
  502: errorEnvelope,
} as const;

/** Those of a route that reads a request body, plus 413 (too large) and 415 (not JSON). */
export const bodyErrorResponses = { ...errorResponses, 413: errorEnvelope, 415: errorEnvelope } as const;

export const bearerAuth = [{ bearerAuth: [] }];
