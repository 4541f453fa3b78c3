import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Webhook } from 'standardwebhooks';
import type { ReceivedEvent } from '../../core/provider/lithic-events/events.js';
import type { Logger } from '../../infra/logger.js';
import { loggableError } from '../../infra/log-safe.js';

/**
 * `POST /provider/lithic/events` (issue 34, section 3): Lithic's events, signed as Standard Webhooks
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature`) with LITHIC_WEBHOOK_SECRET, checked by the
 * `standardwebhooks` library over the body as sent (a timestamp more than 5 minutes from now is refused).
 * Refused 401 unsigned, forged or stale; 200 once stored and handled (a replay: 200, nothing done again; a type
 * not handled: 200, counted); 500 when handling failed, so that Lithic delivers it again.
 */
export interface LithicEventsRouteOptions {
  /** LITHIC_WEBHOOK_SECRET (`whsec_…`) */
  secret: string;
  logger: Logger;
  receive: (webhookId: string, payload: { event_type?: unknown }) => Promise<ReceivedEvent>;
}

export const LITHIC_EVENTS_PATH = '/provider/lithic/events';

const header = (request: FastifyRequest, name: string) => {
  const value = request.headers[name];
  return typeof value === 'string' ? value : '';
};

/** The events route in a scope of its own, where JSON bodies are kept raw for the signature. */
export const lithicEventsRoutes: FastifyPluginAsync<LithicEventsRouteOptions> = async (scope, { secret, logger, receive }) => {
  const webhook = new Webhook(secret);
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  scope.post(
    LITHIC_EVENTS_PATH,
    { config: { public: true }, schema: { hide: true } },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const headers = {
        'webhook-id': header(request, 'webhook-id'),
        'webhook-timestamp': header(request, 'webhook-timestamp'),
        'webhook-signature': header(request, 'webhook-signature'),
      };
      let payload: unknown;
      try {
        payload = webhook.verify(raw, headers);
      } catch {
        return reply.code(401).send({ error: 'Invalid, missing or stale webhook signature' });
      }
      if (payload === null || typeof payload !== 'object' || headers['webhook-id'].length > 200) {
        return reply.code(400).send({ error: 'An event is a JSON object' });
      }
      try {
        const received = await receive(headers['webhook-id'], payload as { event_type?: unknown });
        return reply.code(200).send({ received: true, status: received.status, duplicate: received.duplicate });
      } catch (error) {
        logger.error({ err: loggableError(error) }, 'A Lithic event failed: Lithic will deliver it again');
        return reply.code(500).send({ error: 'The event could not be handled; deliver it again' });
      }
    },
  );
};
