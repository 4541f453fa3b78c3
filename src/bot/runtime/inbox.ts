import { randomUUID } from 'node:crypto';
import type { Update } from 'grammy/types';
import { sql } from 'kysely';
import type { Clock, CardDataCipher } from '../card-service/from-core.js';
import { keepRenewed, leasesOn, takeMany } from '../../db/lease.js';
import type { Db } from '../../db/schema.js';
import { loggableError } from '../../infra/log-safe.js';
import type { Logger } from '../../infra/logger.js';
import { type Report, startLoop } from '../../infra/loop.js';
import type { BotDb } from '../store/tables.js';
import { type ChatLeaseDeps, finish, holds, type Lease, release, renew, take } from './inbox-leases.js';
import { type InboxDb, oldestPending, pruneHandled, readPayload, SEALED, sealContext, storeUpdate } from './inbox-store.js';
import { updateOriginOf } from './update-types.js';

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
  const { chatId, userId } = updateOriginOf(update);
  if (chatId !== undefined) return `chat:${chatId}`;
  return userId === undefined ? undefined : `user:${userId}`;
}

/** How long the process that stored an update has to claim its chat before the sweeps may. */
const SWEEP_GRACE_MS = 1_000;

/** How many chats one sweep takes at most. */
const SWEEP_BATCH = 50;

/**
 * The inbox over the bot's database; its sweep starts at once (see `Inbox`). Storage is `inbox-store.ts`,
 * the chats' leases `inbox-leases.ts`, the webhook route `inbox-webhook.ts`; the steps below take what they
 * need, and this factory binds them to one process's drains.
 *
 * @example
 * const inbox = createInbox({ db, clock, logger, handle: (update) => bot.handleUpdate(update) });
 * app.post('/telegram/webhook', inboxWebhookRoute(inbox, secretToken));
 */
export function createInbox(options: InboxOptions): Inbox {
  const { clock, logger, handle, secrets } = options;
  const leaseMs = options.leaseMs ?? 30_000;
  const me = randomUUID().slice(0, 8);
  let claims = 0;
  const deps: InboxDeps = {
    db: options.db as unknown as InboxDb,
    clock,
    logger,
    handle,
    secrets,
    leaseMs,
    rememberMs: options.rememberMs ?? 24 * 3600_000,
    /** The chats' leases (`src/db/lease.ts`). */
    leases: leasesOn({ table: 'bot_chat_leases', key: ['chat_key'], leaseMs }),
    newHolder: () => `${me}:${++claims}`,
    state: { stopping: false, prunedAt: 0 },
    draining: new Map(),
    loose: new Set(),
  };
  const sweeping = startLoop(options.sweepIntervalMs ?? 2_000, logger, 'inbox sweep', options.report, async () => {
    await sweep(deps);
    return undefined;
  });
  return {
    receive: (update) => receiveAll(deps, [update]),
    receiveAll: (updates) => receiveAll(deps, updates),
    sweep: () => sweep(deps),
    idle: () => idle(deps),
    async stop() {
      deps.state.stopping = true;
      await sweeping.stop();
      await idle(deps);
    },
  };
}

/** What the steps share: the chats' leases, the handler, and this process's drains. */
interface InboxDeps extends ChatLeaseDeps {
  logger: Logger;
  handle(update: Update): Promise<void>;
  secrets: InboxOptions['secrets'];
  rememberMs: number;
  /** Set once the inbox stops; when the sweep last forgot handled updates (clock time, ms). */
  state: { stopping: boolean; prunedAt: number };
  /** The chats this process is handling. */
  draining: Map<string, Promise<void>>;
  /** Updates without a chat, handled at once. */
  loose: Set<Promise<void>>;
}

/** Stores the updates and takes the free leases of their chats, in one commit; the chats taken are handled after. */
async function receiveAll(deps: InboxDeps, updates: readonly Update[]): Promise<void> {
  const { db, clock, secrets, loose } = deps;
  const stored: { update: Update; chatKey: string; secret: boolean }[] = [];
  for (const update of updates) {
    const secret = secrets?.holds(update) === true;
    const chatKey = secret && secrets?.cipher === undefined ? undefined : chatKeyOf(update);
    if (chatKey !== undefined) stored.push({ update, chatKey, secret });
    else {
      const run = handleOne(deps, update).finally(() => loose.delete(run));
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
      // A repeat of a stored update: whoever has it in hand handles it.
      if (await storeUpdate(trx, { updateId: update.update_id, chatKey, payload, receivedAt })) fresh.add(chatKey);
    }
    const taken: Lease[] = [];
    for (const chatKey of fresh) {
      const lease = await take(deps, trx, chatKey);
      if (lease !== undefined) taken.push(lease);
    }
    return taken;
  });
  for (const lease of leases) kick(deps, lease);
}

/** Takes the chats with stored updates whose lease is free or has lapsed, and handles them; returns how many. */
async function sweep(deps: InboxDeps): Promise<number> {
  const { db, clock, leaseMs, newHolder, rememberMs, state } = deps;
  if (state.stopping) return 0;
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
  for (const { chat_key } of taken) kick(deps, { chatKey: chat_key, holder, renewedAt: now.getTime(), lost: false });
  if (now.getTime() - state.prunedAt >= 60_000) {
    await pruneHandled(db, new Date(now.getTime() - rememberMs).toISOString());
    state.prunedAt = now.getTime();
  }
  return taken.length;
}

/** Resolves once this process is handling nothing. */
async function idle({ draining, loose }: InboxDeps): Promise<void> {
  while (draining.size > 0 || loose.size > 0) await Promise.all([...draining.values(), ...loose]);
}

/** Drains the chat in the background under `lease`; after this process's own drain of the chat, if one runs. */
function kick(deps: InboxDeps, lease: Lease): void {
  const { logger, draining } = deps;
  const { chatKey } = lease;
  const previous = draining.get(chatKey);
  const run = (async () => {
    // After the answer to Telegram has gone.
    await new Promise((resolve) => setImmediate(resolve));
    if (previous !== undefined) {
      await previous;
      // The lease waited: it may have lapsed and gone to another process meanwhile.
      if (!(await renew(deps, lease))) return;
    }
    await drain(deps, chatKey, lease);
  })()
    .catch((error: unknown) =>
      logger.error({ err: loggableError(error), chatKey }, 'could not handle stored updates; the sweep will retry'),
    )
    .finally(() => {
      if (draining.get(chatKey) === run) draining.delete(chatKey);
    });
  draining.set(chatKey, run);
}

/**
 * Handles the chat's updates under `lease` until none is left, then looks again once the lease is
 * given back: an update stored meanwhile by a process that could not take the lease (this one held
 * it) is this drain's to handle.
 */
async function drain(deps: InboxDeps, chatKey: string, claimed: Lease): Promise<void> {
  const { db, state } = deps;
  let lease: Lease | undefined = claimed;
  while (lease !== undefined) {
    let released = false;
    try {
      released = await handleInOrder(deps, lease);
    } finally {
      if (!released) await release(deps, db, lease);
    }
    if (state.stopping || (await oldestPending(db, chatKey)) === undefined) return;
    lease = await take(deps, db, chatKey);
  }
}

/**
 * Handles the chat's stored updates, oldest first, while the lease is ours, renewing it meanwhile.
 * Returns whether the lease was given back with the last update (else the caller gives it back).
 */
async function handleInOrder(deps: InboxDeps, lease: Lease): Promise<boolean> {
  const { db, logger, leaseMs, secrets, state } = deps;
  const renewal = keepRenewed(() => renew(deps, lease), leaseMs / 3, {
    lost: () => logger.error({ chatKey: lease.chatKey }, 'a chat lease lapsed and was taken over while an update ran'),
    failed: (error) => logger.warn({ err: loggableError(error) }, 'could not renew a chat lease'),
  });
  try {
    while (!state.stopping && (await holds(deps, lease))) {
      const next = await oldestPending(db, lease.chatKey);
      if (next === undefined) return false;
      const update = readPayload(secrets?.cipher, logger, Number(next.update_id), next.payload);
      if (update !== undefined) await handleOne(deps, update);
      if (!(await finish(deps, lease, Number(next.update_id)))) return true;
    }
    return false;
  } finally {
    renewal.stop();
  }
}

async function handleOne({ handle, logger }: InboxDeps, update: Update): Promise<void> {
  try {
    await handle(update);
  } catch (error) {
    // The bot's error boundary answers what goes wrong inside it; this is what escaped it. Not retried:
    // an update that always fails would hold its chat up for good.
    logger.error({ err: loggableError(error), updateId: update.update_id }, 'update failed outside the error boundary');
  }
}
