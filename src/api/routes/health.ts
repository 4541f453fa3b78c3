import { z } from 'zod';
import type { Db } from '../../db/schema.js';
import type { Clock } from '../../infra/clock.js';
import { envelope, errorEnvelope } from '../http-schemas.js';
import { createReadiness } from '../readiness.js';
import type { ApiApp } from './route-kit.js';

export interface HealthDeps {
  db: Db;
  clock: Clock;
  /** Whether the bot running in this process has reached Telegram; absent when no bot runs here. */
  botReady?: () => boolean;
  /** Remote mode: whether the card service answers. */
  cardServiceReady?: () => Promise<boolean>;
}

/** Extensions: liveness (`/livez`) and readiness (`/readyz`), no token. */
export function healthRoutes(app: ApiApp, { db, clock, botReady, cardServiceReady }: HealthDeps): void {
  app.get(
    '/livez',
    {
      config: { public: true },
      schema: {
        summary: 'Extension: liveness (no token, no database)',
        tags: ['extension'],
        response: { 200: envelope(z.object({ status: z.literal('alive') })), 414: errorEnvelope, 429: errorEnvelope },
      },
    },
    async () => ({ success: true as const, data: { status: 'alive' as const }, message: 'Alive', timestamp: clock.now().toISOString() }),
  );
  const readiness = createReadiness(db, botReady, cardServiceReady);
  const checkState = z.enum(['ok', 'failing']);
  const checks = z.object({
    database: checkState,
    migrations: z.enum(['ok', 'pending', 'failing']),
    bot: z.enum(['ok', 'failing', 'disabled']),
    cardService: checkState.optional(),
  });
  app.get(
    '/readyz',
    {
      config: { public: true },
      schema: {
        summary:
          'Extension: readiness (no token): the database answers, no migration is pending, the bot (when it runs here) reached Telegram',
        tags: ['extension'],
        response: {
          200: envelope(z.object({ status: z.literal('ready'), checks })),
          414: errorEnvelope,
          429: errorEnvelope,
          503: z.object({
            success: z.literal(false),
            data: z.object({ status: z.literal('not_ready'), checks }),
            message: z.string(),
            timestamp: z.string(),
          }),
        },
      },
    },
    async (_request, reply) => {
      const { ready, checks: state } = await readiness();
      const timestamp = clock.now().toISOString();
      if (ready) return { success: true as const, data: { status: 'ready' as const, checks: state }, message: 'Ready', timestamp };
      return reply
        .code(503)
        .send({ success: false as const, data: { status: 'not_ready' as const, checks: state }, message: 'Not ready', timestamp });
    },
  );
}
