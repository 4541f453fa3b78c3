import type { I18n, TranslationVariables } from '@grammyjs/i18n';
import { GrammyError, type Api } from 'grammy';
import { loggableError } from '../../infra/log-safe.js';
import type { CoreEvent, PendingEvent } from '../card-service/from-core.js';
import type { Claimant } from '../../db/claims.js';
import { reasonFor, translatorIn } from '../ui/deposit-texts.js';
import { localMoney, merchantText, otpPushText } from '../ui/format.js';
import { alertKeyboard } from '../ui/keyboards.js';
import { chatLocaleKey } from '../store/kv-keys.js';
import { chatsOfUser } from '../store/chat-links.js';
import { claimNotices, forgetNotice } from '../store/notices.js';
import { pruneConfirmations } from '../store/confirmations.js';
import { pruneDeliveries, recordDelivery, wasDelivered } from '../store/deliveries.js';
import { readKv } from '../store/kv.js';
import type { BotContext } from '../context.js';
import type { PushKind } from '../metrics.js';
import { deleteLater, type Services } from '../services.js';
import { startLoop, type Loop, type Report } from '../../infra/loop.js';

/**
 * Pushes the core's stored events (new OTPs, card transactions, deposit decisions) to every chat linked
 * to the user they concern. Each (event, chat) pair is recorded once sent, and the event is marked delivered only after
 * every chat got it, so a restart resumes where it stopped and sends nothing twice.
 *
 * Several processes may share the outbox: each claims the events it pushes (the oldest first), so an
 * event goes to each chat once; events a process held when it died are taken over once its claim
 * lapses, and then only the chats not recorded as sent get them (a crash between a send and its record
 * sends that one again). The loop runs on every poll and whenever events are committed (`wake`).
 */
const HOUR = 3_600_000;
/** Events claimed in one go; a full claim means more may be waiting. */
const CLAIMED_AT_ONCE = 50;

export function startOutboxLoop(s: Services, api: Api, report: Report | undefined, claimant: Claimant): Loop {
  const interval = s.config.pollIntervalMs ?? 500;
  let prunedAt = 0;
  return startLoop(interval, s.logger, 'outbox', report, async () => {
    const now = s.clock.now().getTime();
    if (now - prunedAt > HOUR) {
      // Confirmations outlive any conversation (idle ones expire) and an event's deliveries are
      // read only until it is marked delivered; a day later both are dead weight.
      const dayAgo = new Date(now - 24 * HOUR);
      await pruneConfirmations(s.db, dayAgo);
      await pruneDeliveries(s.db, dayAgo);
      prunedAt = now;
    }
    await tellUnlinkedChats(s, api, claimant);
    // A service without our event outbox pushes nothing; unlink notices are the bot's own.
    const events = s.cards.events;
    if (events === undefined) return undefined;
    const claim = await events.claim(claimant, CLAIMED_AT_ONCE);
    try {
      for (const pending of claim.items) {
        if (!(await claim.holds(pending))) continue;
        await deliver(s, api, pending);
        await events.markDelivered(pending.seq, s.clock.now());
      }
    } catch (error) {
      // This event and the later ones are tried again after the back-off (here or by another process),
      // in their order, rather than once the lease lapses.
      await claim.release().catch(() => undefined);
      throw error;
    }
    return claim.items.length === CLAIMED_AT_ONCE ? 0 : undefined;
  });
}

/** Sends an event to each chat linked to its user that has not had it yet. */
async function deliver(s: Services, api: Api, pending: PendingEvent): Promise<void> {
  for (const link of await chatsOfUser(s.db, pending.userId)) {
    if (await wasDelivered(s.db, pending.seq, link.chatId)) continue;
    // Only to a chat whose token still works: a revocation ends its links, and a link made in the
    // moment of a revocation still finds its token refused here.
    if (!(await s.cards.tokenIsActive(link))) continue;
    try {
      await push(s, api, link.chatId, pending.event);
    } catch (error) {
      // A chat that blocked the bot or is gone will never take it: skip it rather than hold up
      // every later event. Anything else (network, server) is retried on the next tick.
      if (!undeliverable(error)) throw error;
      s.logger.warn({ chatId: link.chatId, seq: pending.seq, err: loggableError(error) }, 'event not deliverable to a chat; skipped');
    }
    await recordDelivery(s.db, pending.seq, link.chatId, s.clock.now());
  }
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
  const params = {
    side: t('tx-side', { side: event.side }),
    amount: localMoney(event.amount, event.currency),
    merchant: merchantText(t, event.merchantName),
    name: event.cardName,
    masked: event.maskedPan,
    balance: localMoney(event.cardBalance),
    reason: event.declineCode ? t('decline-reason', { code: event.declineCode }) : '',
  };
  const declined = event.status === 'Declined';
  const text = t(declined ? 'tx-push-declined' : 'tx-push-approved', params);
  const reply_markup = alertKeyboard(t, event.cardId, { declineCode: event.declineCode, type: event.type });
  await counted(s, declined ? 'decline' : 'transaction', api.sendMessage(chatId, text, { reply_markup }));
}
