import type { I18n, TranslationVariables } from '@grammyjs/i18n';
import { GrammyError, type Api } from 'grammy';
import { loggableError } from '../../infra/log-safe.js';
import type { CoreEvent, EventOutbox, PendingEvent } from '../card-service/from-core.js';
import type { Claim, Claimant } from '../../db/claims.js';
import { reasonFor, translatorIn } from '../ui/deposit-texts.js';
import { localMoney, merchantText, otpPushText } from '../ui/format.js';
import { alertKeyboard } from '../ui/keyboards.js';
import { autoTopupPush } from '../ui/auto-topup-push.js';
import { declineAlert } from '../ui/decline-fixes.js';
import { challengeKeyboard, challengeQuestion } from '../ui/challenges.js';
import { chatLocaleKey } from '../store/kv-keys.js';
import { type ChatLink, chatsOfUser } from '../store/chat-links.js';
import { claimNotices, forgetNotice } from '../store/notices.js';
import { pruneConfirmations } from '../store/confirmations.js';
import { pruneDeliveries } from '../store/deliveries.js';
import { deliveredTo, recordDeliveries } from '../store/delivery-batches.js';
import { readKv } from '../store/kv.js';
import type { BotContext } from '../context.js';
import type { PushKind } from '../metrics.js';
import { deleteLater, type Services } from '../services.js';
import { startLoop, type Loop, type Report } from '../../infra/loop.js';
import { getOrCreate } from '../../infra/get-or-create.js';
import { ChatPace } from './chat-pace.js';
import { otpBatchText } from './otp-batch-text.js';

/**
 * Pushes the core's stored events (new OTPs, card transactions, deposit decisions) to every chat linked
 * to the user they concern. Each (event, chat) pair is recorded once sent, and the event is marked delivered only after
 * every chat got it, so a restart resumes where it stopped and sends nothing twice.
 *
 * Several processes may share the outbox: each claims the events it pushes (the oldest first), so an
 * event goes to each chat once; events a process held when it died are taken over once its claim
 * lapses, and then only the chats not recorded as sent get them (a crash between a send and its record
 * sends that one again). The loop runs on every poll and whenever events are committed (`wake`).
 *
 * Pushes are paced per chat (`ChatPace`: a burst of 3, then one a second, Telegram's own pace for a
 * chat). Events whose chat must wait stay claimed by this process, in memory, while the next ones are
 * claimed, so the other chats' events behind them go first; when the chat's turn comes, all its OTPs
 * pending here go as one message (the newest codes shown, the older ones counted: `otpBatchText`). An
 * OTP flood on one card (2,000 codes from a broken or hostile card service) reaches its chat as a few
 * messages and holds up nobody else's codes.
 */
const HOUR = 3_600_000;
/** Events claimed in one go; a full claim means more may be waiting. */
const CLAIMED_AT_ONCE = 200;
/** Events held waiting for their chat's turn at most; past that nothing more is claimed until some are pushed. */
const MAX_HELD = 20_000;

/** An event claimed by this process and not yet pushed to every chat it goes to. */
interface Held {
  pending: PendingEvent;
  claim: Claim<PendingEvent>;
  /** The chats it still goes to; undefined until looked up. */
  chats?: Set<number>;
}

export function startOutboxLoop(s: Services, api: Api, report: Report | undefined, claimant: Claimant): Loop {
  const interval = s.config.pollIntervalMs ?? 500;
  let prunedAt = 0;
  const pace = new ChatPace();
  /** By event seq, oldest first. */
  const held = new Map<number, Held>();
  const releaseHeld = async () => {
    const claims = new Set([...held.values()].map((entry) => entry.claim));
    held.clear();
    await Promise.all([...claims].map((claim) => claim.release().catch(() => undefined)));
  };
  const loop = startLoop(interval, s.logger, 'outbox', report, async () => {
    const now = s.clock.now().getTime();
    if (now - prunedAt > HOUR) {
      // Confirmations outlive any conversation (idle ones expire) and an event's deliveries are
      // read only until it is marked delivered; a day later both are dead weight.
      const dayAgo = new Date(now - 24 * HOUR);
      await pruneConfirmations(s.db, dayAgo);
      await pruneDeliveries(s.db, dayAgo);
      pace.forgetRested();
      prunedAt = now;
    }
    await tellUnlinkedChats(s, api, claimant);
    // A service without our event outbox pushes nothing; unlink notices are the bot's own.
    const events = s.cards.events;
    if (events === undefined) return undefined;
    let full = false;
    if (held.size < MAX_HELD) {
      const claim = await events.claim(claimant, CLAIMED_AT_ONCE);
      full = claim.items.length === CLAIMED_AT_ONCE;
      for (const pending of claim.items) {
        const known = held.get(pending.seq);
        // Taken again after its lease lapsed (this process held it too long): the new claim is the live one.
        if (known) known.claim = claim;
        else held.set(pending.seq, { pending, claim });
      }
    }
    try {
      await pushHeld(s, api, events, held, pace);
    } catch (error) {
      // These events and the later ones are tried again after the back-off (here or by another process),
      // in their order, rather than once the leases lapse.
      await releaseHeld();
      throw error;
    }
    if (full && held.size < MAX_HELD) return 0;
    // Back when the first chat with events waiting may be pushed to again.
    const waiting = new Set([...held.values()].flatMap((entry) => [...(entry.chats ?? [])]));
    if (waiting.size === 0) return undefined;
    return Math.max(1, Math.min(...[...waiting].map((chatId) => pace.waitMs(chatId))));
  });
  return {
    wake: loop.wake,
    async stop() {
      await loop.stop();
      // Given back for another process to push at once, not after the leases lapse.
      await releaseHeld();
    },
  };
}

/**
 * Pushes what the chats' pace allows of the held events, the chats in the order of their oldest event:
 * a chat that must wait is passed over, its events kept. Each event is dropped once every chat it goes
 * to has it (marked delivered then), or once this process no longer holds it.
 */
async function pushHeld(s: Services, api: Api, events: EventOutbox, held: Map<number, Held>, pace: ChatPace): Promise<void> {
  // Still ours? (Renews the claims' leases as they age: events may wait here a while.)
  for (const [seq, entry] of held) if (!(await entry.claim.holds(entry.pending))) held.delete(seq);
  // The chats of each user with events here, read once a tick: a chat unlinked meanwhile gets nothing more.
  const links = new Map<string, Map<number, ChatLink>>();
  for (const entry of held.values()) {
    const { userId } = entry.pending;
    if (!links.has(userId)) links.set(userId, new Map((await chatsOfUser(s.db, userId)).map((link) => [link.chatId, link])));
  }
  const done: number[] = [];
  // The chats new events go to, less those that had them (a push taken over after a crash).
  const fresh = [...held.values()].filter((entry) => entry.chats === undefined);
  for (const [userId, chats] of links) {
    const ofUser = fresh.filter((entry) => entry.pending.userId === userId);
    if (ofUser.length === 0) continue;
    for (const entry of ofUser) entry.chats = new Set(chats.keys());
    for (const chatId of chats.keys()) {
      const delivered = await deliveredTo(
        s.db,
        ofUser.map((entry) => entry.pending.seq),
        chatId,
      );
      for (const entry of ofUser) if (delivered.has(entry.pending.seq)) entry.chats!.delete(chatId);
    }
  }
  const queues = new Map<number, Held[]>();
  for (const [seq, entry] of held) {
    const linked = links.get(entry.pending.userId)!;
    for (const chatId of [...entry.chats!]) {
      if (linked.has(chatId)) getOrCreate(queues, chatId, () => []).push(entry);
      else entry.chats!.delete(chatId);
    }
    if (entry.chats!.size === 0) done.push(seq);
  }
  const active = new Map<number, boolean>();
  for (const [chatId, queue] of queues) {
    const link = links.get(queue[0]!.pending.userId)!.get(chatId)!;
    while (queue.length > 0 && pace.available(chatId) >= 1) {
      // Only to a chat whose token still works: a revocation ends its links, and a link made in the
      // moment of a revocation still finds its token refused here.
      if (!active.has(chatId)) active.set(chatId, await s.cards.tokenIsActive(link));
      // Each event on its own while the chat's pace allows one message each; past that its OTPs go
      // together, as one message (the first one's turn).
      const otps = queue[0]!.pending.event.kind === 'otp' ? queue.filter((entry) => entry.pending.event.kind === 'otp') : [];
      const batch = otps.length > pace.available(chatId) ? otps : [queue[0]!];
      for (const entry of batch) queue.splice(queue.indexOf(entry), 1);
      if (active.get(chatId)) {
        pace.take(chatId);
        try {
          await pushBatch(s, api, chatId, batch);
        } catch (error) {
          // A chat that blocked the bot or is gone will never take it: skip it rather than hold up
          // every later event. Anything else (network, server) is retried on the next tick.
          if (!undeliverable(error)) throw error;
          const seqs = batch.map((entry) => entry.pending.seq);
          s.logger.warn(
            { chatId, seqs: seqs.slice(0, 10), events: seqs.length, err: loggableError(error) },
            'events not deliverable to a chat; skipped',
          );
        }
        await recordDeliveries(
          s.db,
          batch.map((entry) => entry.pending.seq),
          chatId,
          s.clock.now(),
        );
      }
      for (const entry of batch) {
        entry.chats!.delete(chatId);
        if (entry.chats!.size === 0) done.push(entry.pending.seq);
      }
    }
  }
  const at = s.clock.now();
  for (let i = 0; i < done.length; i += MARKED_AT_ONCE) {
    await Promise.all(done.slice(i, i + MARKED_AT_ONCE).map((seq) => events.markDelivered(seq, at)));
  }
  for (const seq of done) held.delete(seq);
}

/** Events marked delivered together (one commit on SQLite, which gathers the writes in flight). */
const MARKED_AT_ONCE = 100;

/** Pushes one event, or several OTPs of one chat as one message. */
async function pushBatch(s: Services, api: Api, chatId: number, batch: Held[]): Promise<void> {
  if (batch.length === 1) return push(s, api, chatId, batch[0]!.pending.event);
  const otps = batch.map((entry) => entry.pending.event).filter((event) => event.kind === 'otp');
  const locale = (await readKv(s.db, chatLocaleKey(chatId))) ?? 'en';
  const t = (key: string, params?: TranslationVariables) => (s.i18n as I18n<BotContext>).t(locale, key, params);
  const ttl = s.config.otpTtlSeconds;
  const sent = await counted(s, 'otp', api.sendMessage(chatId, otpBatchText(t, otps, ttl), { protect_content: true }));
  await deleteLater(s, chatId, sent.message_id, ttl);
}

/**
 * Chats whose link ended (a revoked token, an operator) are told once, in the language they were
 * linked in: each notice is claimed by one process, and forgotten once told.
 */
async function tellUnlinkedChats(s: Services, api: Api, claimant: Claimant): Promise<void> {
  const claim = await claimNotices(s.db, claimant);
  try {
    for (const notice of claim.items) {
      if (!(await claim.holds(notice))) continue;
      try {
        const text = (s.i18n as I18n<BotContext>).t(notice.locale, `unlinked-${notice.kind}`);
        await counted(s, 'unlink_notice', api.sendMessage(notice.chatId, text));
      } catch (error) {
        if (!undeliverable(error)) throw error;
        s.logger.warn({ chatId: notice.chatId, err: loggableError(error) }, 'unlink notice not deliverable to a chat; skipped');
      }
      await forgetNotice(s.db, notice);
    }
  } catch (error) {
    await claim.release().catch(() => undefined);
    throw error;
  }
}

/** Waits for a push to be sent, counting it as sent or failed under its kind (`METRICS_PORT`). */
async function counted<T>(s: Services, kind: PushKind, sending: Promise<T>): Promise<T> {
  try {
    const sent = await sending;
    s.metrics?.pushed(kind, true);
    return sent;
  } catch (error) {
    s.metrics?.pushed(kind, false);
    throw error;
  }
}

/** A chat that blocked the bot or is gone will never take a message. */
function undeliverable(error: unknown): boolean {
  return error instanceof GrammyError && (error.error_code === 400 || error.error_code === 403);
}

async function push(s: Services, api: Api, chatId: number, event: CoreEvent): Promise<void> {
  const locale = (await readKv(s.db, chatLocaleKey(chatId))) ?? 'en';
  const t = (key: string, params?: TranslationVariables) => (s.i18n as I18n<BotContext>).t(locale, key, params);
  if (event.kind === 'otp') {
    const ttl = s.config.otpTtlSeconds;
    const text = otpPushText(t, event, ttl);
    const sent = await counted(s, 'otp', api.sendMessage(chatId, text, { protect_content: true }));
    await deleteLater(s, chatId, sent.message_id, ttl);
    return;
  }
  if (event.kind === 'deposit_decision') {
    const id = String(event.requestId);
    const amount = localMoney(event.amount);
    const text =
      event.status === 'approved'
        ? t('deposit-approved', { id, amount, balance: localMoney(event.walletBalance ?? 0) })
        : t('deposit-rejected', { id, amount, reason: reasonFor(t, translatorIn(s.i18n, 'en'), event.reason ?? '') });
    await counted(s, 'deposit_decision', api.sendMessage(chatId, text));
    return;
  }
  if (event.kind === 'challenge') {
    // Past its expiry (the bot was down) it can no longer be answered: not asked at all.
    if (Date.parse(event.expiresAt) <= s.clock.now().getTime()) return;
    const reply_markup = challengeKeyboard(t, event.challengeId);
    await counted(s, 'challenge', api.sendMessage(chatId, challengeQuestion(t, event), { reply_markup }));
    return;
  }
  if (event.kind === 'auto_topup') {
    // What it did, or why it could not run with the button that fixes it.
    const pushed = autoTopupPush(t, event);
    await counted(s, 'auto_topup', api.sendMessage(chatId, pushed.text, { reply_markup: pushed.keyboard }));
    return;
  }
  if (event.status === 'Declined') {
    // Why, in plain words, and the button that fixes it.
    const alert = declineAlert(t, event);
    await counted(s, 'decline', api.sendMessage(chatId, alert.text, { reply_markup: alert.keyboard }));
    return;
  }
  const params = {
    side: t('tx-side', { side: event.side }),
    amount: localMoney(event.amount, event.currency),
    merchant: merchantText(t, event.merchantName),
    name: event.cardName,
    masked: event.maskedPan,
    balance: localMoney(event.cardBalance),
  };
  const reply_markup = alertKeyboard(t, event.cardId, { declineCode: event.declineCode, type: event.type });
  // A held purchase says it is held; a released hold says the money is back.
  const key = event.status === 'Pending' ? 'tx-push-pending' : event.status === 'Reversed' ? 'tx-push-reversed' : 'tx-push-approved';
  await counted(s, 'transaction', api.sendMessage(chatId, t(key, params), { reply_markup }));
}
