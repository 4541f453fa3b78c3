import type { FastifyInstance } from 'fastify';
import { Counter, type Registry } from 'prom-client';
import { decideAsa, knownTransaction } from '../../core/provider/lithic-events/asa.js';
import { receiveLithicEvent } from '../../core/provider/lithic-events/events.js';
import type { CardService } from '../../core/service.js';
import type { Db } from '../../db/schema.js';
import type { Clock } from '../../infra/clock.js';
import type { Logger } from '../../infra/logger.js';
import { loggableError } from '../../infra/log-safe.js';
import { lithicAsaRoutes } from './lithic-asa.js';
import { lithicEventsRoutes } from './lithic-events.js';

/**
 * Lithic's two routes, each served only when its secret is set (CARD_PROVIDER=lithic requires both; without it,
 * 404 as any unknown path): the ASA responder and the events receiver. Neither takes a bearer token nor counts
 * against the per-address limit (Lithic's bursts come from few addresses): their signatures authenticate them.
 */
export interface LithicRoutesOptions {
  /** LITHIC_ASA_SECRET: `POST /provider/lithic/asa` when set. */
  asaSecret?: string;
  /** LITHIC_WEBHOOK_SECRET: `POST /provider/lithic/events` when set. */
  webhookSecret?: string;
  /** Where `lithic_events_unknown_total` is counted (the process's registry); not counted when absent. */
  registry?: Registry;
  /**
   * The handle the routes record on: the core's own (`CoreRuntime.eventsDb`), so that the events they record (a
   * challenge, a wallet code) reach the bot at once rather than at its next look at the outbox.
   */
  db?: Db;
  /** The ASA decision's budget (1.5 s by default). */
  asaBudgetMs?: number;
}

export function registerLithicRoutes(
  app: FastifyInstance,
  deps: { core: CardService; db: Db; clock: Clock; logger: Logger },
  options: LithicRoutesOptions,
): void {
  const { core, clock, logger } = deps;
  const db = options.db ?? deps.db;
  if (options.asaSecret) {
    const onFailure = (why: 'error' | 'late', error?: unknown) =>
      logger.error(
        error === undefined ? {} : { err: loggableError(error) },
        `ASA decision ${why === 'late' ? 'over its budget' : 'failed'}: declined`,
      );
    void app.register(lithicAsaRoutes, {
      secret: options.asaSecret,
      clock,
      logger,
      decide: (request) => decideAsa({ db, core, budgetMs: options.asaBudgetMs, onFailure }, request),
      known: (token) => knownTransaction(db, token),
    });
  }
  if (options.webhookSecret) {
    const unknown = options.registry
      ? new Counter({
          name: 'lithic_events_unknown_total',
          help: "Lithic's events of a type not handled: acknowledged and counted",
          labelNames: ['event_type'],
          registers: [options.registry],
        })
      : undefined;
    void app.register(lithicEventsRoutes, {
      secret: options.webhookSecret,
      logger,
      receive: (webhookId, payload) =>
        receiveLithicEvent(
          { db, clock, core, onUnknown: (eventType) => unknown?.inc({ event_type: eventType.slice(0, 100) }) },
          webhookId,
          payload,
        ),
    });
  }
}
