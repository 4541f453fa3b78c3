import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Update } from 'grammy/types';
import type { Inbox } from './inbox.js';

/** Looks like an update: an object with a non-negative integer `update_id` and one object beside it. */
function isUpdate(body: unknown): body is Update {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const { update_id: id, ...rest } = body as Record<string, unknown>;
  return Number.isSafeInteger(id) && (id as number) >= 0 && Object.values(rest).some((v) => typeof v === 'object' && v !== null);
}

/** A Fastify route handler for the webhook (`app.post(path, route)`). */
export type WebhookRoute = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * The webhook route for Fastify over an inbox: a request without Telegram's secret-token header
 * (`X-Telegram-Bot-Api-Secret-Token` equal to `secretToken`) gets 401, a body that is no update 400;
 * an update is stored and answered 200 at once, and handled after.
 */
export function inboxWebhookRoute(inbox: Inbox, secretToken: string): WebhookRoute {
  const expected = digest(secretToken);
  return async (request, reply) => {
    const header = request.headers['x-telegram-bot-api-secret-token'];
    if (typeof header !== 'string' || !timingSafeEqual(digest(header), expected)) return reply.code(401).send('secret token is wrong');
    if (!isUpdate(request.body)) return reply.code(400).send('not an update');
    await inbox.receive(request.body);
    return reply.code(200).send('');
  };
}
