import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Update } from 'grammy/types';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Clock, CardDataCipher } from '../card-service/from-core.js';
import { keepRenewed, leasesOn, takeMany } from '../../db/lease.js';
import type { Db } from '../../db/schema.js';
import { loggableError } from '../../infra/log-safe.js';
import type { Logger } from '../../infra/logger.js';
import { type Report, startLoop } from '../../infra/loop.js';
import type { BotDb, BotTables } from '../store/tables.js';

/** The bot's tables with the inbox's (migrations/20261123_05_webhook_inbox.ts). */
export type InboxTables = BotTables & {
  /** Updates as Telegram posted them; `handled_at` set (and `payload` emptied) once handled. */
  bot_updates: { update_id: number; chat_key: string; payload: string; received_at: string; handled_at: string | null };
  /** One row per chat that ever had an update: who handles its updates now, and until when unless renewed. */
  bot_chat_leases: { chat_key: string; claimed_by: string | null; claimed_until: string | null };
};

type InboxDb = Kysely<InboxTables>;
type Executor = InboxDb | Transaction<InboxTables>;

export interface InboxOptions {
  /** The bot's database (the core's, or the bot's view of it). */
  db: Db | BotDb;
  clock: Clock;
  logger: Logger;
  /** Handles one update: the bot's `handleUpdate`. A failure is logged and the update counts as handled. */
  handle(update: Update): Promise<void>;
  /** How long a chat's lease lasts unrenewed: a dead holder's chats are taken over this long after. 30 s by default. */
  leaseMs?: number;
  /** How often each process looks for chats with stored updates and no live lease. 2 s by default. */
  sweepIntervalMs?: number;
  /** How long a handled update is remembered, so that a delivery Telegram repeats is not handled again. 24 h by default. */
  rememberMs?: number;
  /** Tells an operator when the sweep starts failing. */
  report?: Report;
  /**
   * Updates holding a secret (an API token the bot is about to delete from the chat), which a payload
   * stored in clear would leave in the database file and its log long after the row is emptied: sealed
   * with `cipher` (the card-data key, bound to the update's id) when one is given, else never stored and
   * handled at once, outside their chat's order.
   */
  secrets?: { holds(update: Update): boolean; cipher?: Pick<CardDataCipher, 'encrypt' | 'decrypt'> };
}

/** A stored payload sealed with the card-data key starts with this. */
export const SEALED = 'sealed:';
/** What a sealed payload is bound to: its update. */
export const sealContext = (updateId: number) => `bot_updates:${updateId}`;

/**
 * A durable inbox of updates, per chat: what makes several webhook processes on one database handle a
 * chat's updates one at a time, in update_id order, each once (at least once if a process dies while
 * handling one).
 */
export interface Inbox {
  /**
   * Stores the update (a repeat of a stored update_id is ignored) and, right after, handles its chat's
   * stored updates in the background if no process holds the chat's lease. Resolves once stored.
   */
  receive(update: Update): Promise<void>;
  /** Stores a batch of updates in one commit (a polled batch) and handles their chats as `receive` does. */
  receiveAll(updates: readonly Update[]): Promise<void>;
  /** Takes the chats with stored updates whose lease is free or has lapsed, and handles them; returns how many. */
  sweep(): Promise<number>;
  /** Resolves once this process is handling nothing. */
  idle(): Promise<void>;
  /** Stops the sweep and stops taking updates; resolves once the updates in hand are handled and their leases given back. */
  stop(): Promise<void>;
}

/** Which chat an update belongs to: its chat, else its sender (`undefined` for neither: handled at once, unordered). */
export function chatKeyOf(update: Update): string | undefined {
  type Body = { chat?: { id: number }; message?: { chat?: { id: number } }; from?: { id: number }; user?: { id: number } };
  const type = Object.keys(update).find((key) => key !== 'update_id');
  const body = type === undefined ? undefined : ((update as unknown as Record<string, Body | undefined>)[type] ?? undefined);
  const chatId = body?.chat?.id ?? body?.message?.chat?.id;
  if (chatId !== undefined) return `chat:${chatId}`;
  const userId = body?.from?.id ?? body?.user?.id;
  return userId === undefined ? undefined : `user:${userId}`;
}

/** A chat's lease as one drain holds it; `lost` once a renewal found another process holding it. */
interface Lease {
  chatKey: string;
  holder: string;
  /** When it was last claimed or renewed (clock time, ms). */
  renewedAt: number;
  lost: boolean;
}

/** How long the process that stored an update has to claim its chat before the sweeps may. */
const SWEEP_GRACE_MS = 1_000;

/** How many chats one sweep takes at most. */
const SWEEP_BATCH = 50;

/**
 * The inbox over the bot's database; its sweep starts at once (see `Inbox`).
 *
 * @example
 * const inbox = createInbox({ db, clock, logger, handle: (update) => bot.handleUpdate(update) });
 * app.post('/telegram/webhook', inboxWebhookRoute(inbox, secretToken));
 */
export function createInbox(options: InboxOptions): Inbox {
  const { clock, logger, handle, secrets } = options;
  const db = options.db as unknown as InboxDb;
  const leaseMs = options.leaseMs ?? 30_000;
  const rememberMs = options.rememberMs ?? 24 * 3600_000;
  /** The chats' leases (`src/db/lease.ts`). */
  const leases = leasesOn({ table: 'bot_chat_leases', key: ['chat_key'], leaseMs });
  const me = randomUUID().slice(0, 8);
  let claims = 0;
  let stopping = false;
  let prunedAt = 0;
  /** The chats this process is handling. */
  const draining = new Map<string, Promise<void>>();
  /** Updates without a chat, handled at once. */
  const loose = new Set<Promise<void>>();

  const newHolder = () => `${me}:${++claims}`;

  /**
   * Takes the chat's lease if it is free or has lapsed, writing the chat's row if it has none: one
   * statement, which also locks the row until the transaction ends (the holder's release waits for it).
   */
  async function claim(ex: Executor, chatKey: string): Promise<Lease | undefined> {
    const now = clock.now();
    const holder = newHolder();
    const taken = await leases.take(ex, { chat_key: chatKey }, holder, now, { insert: {} });
    return taken === undefined ? undefined : { chatKey, holder, renewedAt: now.getTime(), lost: false };
  }

  async function renew(lease: Lease): Promise<boolean> {
    const now = clock.now();
    if ((await leases.renew(db, { chat_key: lease.chatKey }, { holder: lease.holder }, now)) !== undefined) lease.renewedAt = now.getTime();
    else lease.lost = true;
    return !lease.lost;
  }

  async function release(ex: Executor, lease: Lease): Promise<void> {
    await leases.release(ex, { chat_key: lease.chatKey }, { holder: lease.holder });
  }

  const oldestPending = (ex: Executor, chatKey: string) =>
    ex
      .selectFrom('bot_updates')
      .select(['update_id', 'payload'])
      .where('chat_key', '=', chatKey)
      .where('handled_at', 'is', null)
      .orderBy('update_id')
      .limit(1)
      .executeTakeFirst();

  /**
   * Marks the update handled and, when the chat has no other, gives its lease back, in one transaction
   * (one commit). Returns whether the lease is still held (more to handle).
   */
  const finish = (lease: Lease, updateId: number) =>
    db.transaction().execute(async (trx) => {
      // The payload goes (it may hold a token the bot has deleted from the chat); the row stays a while to
      // recognise a repeated delivery.
      await trx
        .updateTable('bot_updates')
        .set({ handled_at: clock.now().toISOString(), payload: '' })
        .where('update_id', '=', updateId)
        .execute();
      const released = await leases.release(
        trx,
        { chat_key: lease.chatKey },
        { holder: lease.holder },
        {
          where: sql<boolean>`not exists (select update_id from bot_updates where bot_updates.chat_key = ${lease.chatKey} and handled_at is null)`,
        },
      );
      return !released;
    });

  /** A stored update; undefined (logged) for a sealed one this key cannot open, which is then skipped. */
  function readPayload(updateId: number, payload: string): Update | undefined {
    if (!payload.startsWith(SEALED)) return JSON.parse(payload) as Update;
    try {
      return JSON.parse(secrets!.cipher!.decrypt(payload.slice(SEALED.length), sealContext(updateId))) as Update;
    } catch (error) {
      logger.error({ err: loggableError(error), updateId }, 'a stored update sealed with another card-data key was skipped');
      return undefined;
    }
  }

  async function handleOne(update: Update): Promise<void> {
    try {
      await handle(update);
    } catch (error) {
      // The bot's error boundary answers what goes wrong inside it; this is what escaped it. Not retried:
      // an update that always fails would hold its chat up for good.
      logger.error({ err: loggableError(error), updateId: update.update_id }, 'update failed outside the error boundary');
    }
  }

  /** Whether the lease is still ours, renewed first once a third of it has passed (an update may have run long). */
  const holds = async (lease: Lease) => !lease.lost && (clock.now().getTime() - lease.renewedAt < leaseMs / 3 || (await renew(lease)));

  /**
   * Handles the chat's stored updates, oldest first, while the lease is ours, renewing it meanwhile.
   * Returns whether the lease was given back with the last update (else the caller gives it back).
   */
  async function handleInOrder(lease: Lease): Promise<boolean> {
    const renewal = keepRenewed(() => renew(lease), leaseMs / 3, {
      lost: () => logger.error({ chatKey: lease.chatKey }, 'a chat lease lapsed and was taken over while an update ran'),
      failed: (error) => logger.warn({ err: loggableError(error) }, 'could not renew a chat lease'),
    });
    try {
      while (!stopping && (await holds(lease))) {
        const next = await oldestPending(db, lease.chatKey);
        if (next === undefined) return false;
        const update = readPayload(Number(next.update_id), next.payload);
        if (update !== undefined) await handleOne(update);
        if (!(await finish(lease, Number(next.update_id)))) return true;
      }
      return false;
    } finally {
      renewal.stop();
    }
  }

  /**
   * Handles the chat's updates under `lease` until none is left, then looks again once the lease is
   * given back: an update stored meanwhile by a process that could not take the lease (this one held
   * it) is this drain's to handle.
   */
  async function drain(chatKey: string, claimed: Lease): Promise<void> {
    let lease: Lease | undefined = claimed;
    while (lease !== undefined) {
      let released = false;
      try {
        released = await handleInOrder(lease);
      } finally {
        if (!released) await release(db, lease);
      }
      if (stopping || (await oldestPending(db, chatKey)) === undefined) return;
      lease = await claim(db, chatKey);
    }
  }

  /** Drains the chat in the background under `lease`; after this process's own drain of the chat, if one runs. */
  function kick(lease: Lease): void {
    const { chatKey } = lease;
    const previous = draining.get(chatKey);
    const run = (async () => {
      // After the answer to Telegram has gone.
      await new Promise((resolve) => setImmediate(resolve));
      if (previous !== undefined) {
        await previous;
        // The lease waited: it may have lapsed and gone to another process meanwhile.
        if (!(await renew(lease))) return;
      }
      await drain(chatKey, lease);
    })()
      .catch((error: unknown) =>
        logger.error({ err: loggableError(error), chatKey }, 'could not handle stored updates; the sweep will retry'),
      )
      .finally(() => {
        if (draining.get(chatKey) === run) draining.delete(chatKey);
      });
    draining.set(chatKey, run);
  }

  async function sweep(): Promise<number> {
    if (stopping) return 0;
    const now = clock.now();
    const holder = newHolder();
    // An update stored a moment ago is left to the process that stored it, which is about to claim its chat.
    const settledAt = new Date(now.getTime() - SWEEP_GRACE_MS).toISOString();
    // On Postgres two sweeps (or a sweep and a claim) skip each other's rows instead of waiting for them.
    const until = new Date(now.getTime() + leaseMs).toISOString();
    const taken = await takeMany<{ chat_key: string }>(
      db,
      { table: 'bot_chat_leases', key: ['chat_key'] },
      { holder, until },
      now.toISOString(),
      {
        where: sql`chat_key in (select chat_key from bot_updates where handled_at is null and received_at <= ${settledAt})`,
        limit: SWEEP_BATCH,
      },
    );
    for (const { chat_key } of taken) kick({ chatKey: chat_key, holder, renewedAt: now.getTime(), lost: false });
    if (now.getTime() - prunedAt >= 60_000) {
      await db
        .deleteFrom('bot_updates')
        .where('handled_at', '<', new Date(now.getTime() - rememberMs).toISOString())
        .execute();
      prunedAt = now.getTime();
    }
    return taken.length;
  }

  const sweeping = startLoop(options.sweepIntervalMs ?? 2_000, logger, 'inbox sweep', options.report, async () => {
    await sweep();
    return undefined;
  });

  async function idle(): Promise<void> {
    while (draining.size > 0 || loose.size > 0) await Promise.all([...draining.values(), ...loose]);
  }

  /** Stores the updates and takes the free leases of their chats, in one commit; the chats taken are handled after. */
  async function receiveAll(updates: readonly Update[]): Promise<void> {
    const stored: { update: Update; chatKey: string; secret: boolean }[] = [];
    for (const update of updates) {
      const secret = secrets?.holds(update) === true;
      const chatKey = secret && secrets?.cipher === undefined ? undefined : chatKeyOf(update);
      if (chatKey !== undefined) stored.push({ update, chatKey, secret });
      else {
        const run = handleOne(update).finally(() => loose.delete(run));
        loose.add(run);
      }
    }
    if (stored.length === 0) return;
    const receivedAt = clock.now().toISOString();
    const leases = await db.transaction().execute(async (trx) => {
      const fresh = new Set<string>();
      for (const { update, chatKey, secret } of stored) {
        const json = JSON.stringify(update);
        const payload = secret ? `${SEALED}${secrets!.cipher!.encrypt(json, sealContext(update.update_id))}` : json;
        const inserted = await trx
          .insertInto('bot_updates')
          .values({
            update_id: update.update_id,
            chat_key: chatKey,
            payload,
            received_at: receivedAt,
            handled_at: null,
          })
          .onConflict((oc) => oc.column('update_id').doNothing())
          .executeTakeFirst();
        // A repeat of a stored update: whoever has it in hand handles it.
        if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) fresh.add(chatKey);
      }
      const taken: Lease[] = [];
      for (const chatKey of fresh) {
        const lease = await claim(trx, chatKey);
        if (lease !== undefined) taken.push(lease);
      }
      return taken;
    });
    for (const lease of leases) kick(lease);
  }

  return {
    receive: (update) => receiveAll([update]),
    receiveAll,
    sweep,
    idle,
    async stop() {
      stopping = true;
      await sweeping.stop();
      await idle();
    },
  };
}

/**
 * When the oldest update stored and not yet handled arrived, among the first `max` such rows (the
 * metrics' look, cheap however long the backlog); undefined when every stored update is handled.
 */
export async function oldestUnhandledAt(db: Db | BotDb, max: number): Promise<Date | undefined> {
  const row = await (db as unknown as InboxDb)
    .selectFrom((eb) => eb.selectFrom('bot_updates').select('received_at').where('handled_at', 'is', null).limit(max).as('unhandled'))
    .select((eb) => eb.fn.min('received_at').as('oldest'))
    .executeTakeFirst();
  return row?.oldest ? new Date(row.oldest) : undefined;
}

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
