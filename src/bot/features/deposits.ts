import { randomUUID } from 'node:crypto';
import { Composer } from 'grammy';
import { isDepositError, NOTE_MAX_LENGTH } from '../card-service/from-core.js';
import type { Cents } from '../card-service/port.js';
import type { BotContext } from '../context.js';
import { issueText } from '../conversations/kit.js';
import { postToAdmins } from '../jobs/deposit-notices.js';
import {
  ADD_MONEY_BUTTON,
  decodeDepositCallback,
  depositChoiceKeyboard,
  depositRefusalText,
  type DepositChoice,
  presetAmountsKeyboard,
} from '../ui/deposit-texts.js';
import { localMoney, parseTypedAmount } from '../ui/format.js';
import { deleteKv, readKv, writeKv } from '../store/kv.js';
import { withMenuButton } from '../ui/keyboards.js';
import { accountOf, show } from '../ui/screens.js';
import { fundingOf, type Services } from '../services.js';
import { sendWalletInvoice } from './payments.js';

/** An amount (and note) waiting for the cardholder to choose how to pay it in; one per chat, the latest. */
interface Draft {
  nonce: string;
  userId: string;
  amount: Cents;
  note: string | null;
  at: number;
}

/** A draft older than this is refused as an expired button, like a flow that waited too long. */
const DRAFT_TTL_MS = 10 * 60_000;
const draftKey = (chatId: number) => `deposit-draft:${chatId}`;

/**
 * "Add money": the wallet's limits, amounts offered with one press, and `/deposit AMOUNT [note]` for any
 * other amount or a note for the admins (a transfer reference).
 */
export async function showAddMoney(ctx: BotContext, s: Services, options: { apart?: boolean } = {}): Promise<void> {
  if (s.cards.funding === undefined) return show(ctx, { text: ctx.t('funding-unavailable'), keyboard: withMenuButton(ctx.t) }, options);
  const { topupMin, topupMax } = s.cards.rules;
  const within = (amount: Cents) => amount >= topupMin && amount <= topupMax;
  const text = ctx.t(recordedOnly(s) ? 'deposit-intro-recorded' : 'deposit-intro', {
    min: localMoney(topupMin),
    max: localMoney(topupMax),
  });
  await show(ctx, { text, keyboard: presetAmountsKeyboard(ctx.t, within) }, options);
}

/**
 * The cardholder's side of money in: `/deposit [amount [note]]` and the "Add money" buttons. An amount
 * becomes a draft with a choice: ask the admins to credit it, or (with `PAYMENT_PROVIDER_TOKEN`) pay an
 * invoice now. The choice uses the draft up, so a double tap asks or invoices once.
 */
export function depositsFeature(s: Services): Composer<BotContext> {
  const composer = new Composer<BotContext>();
  // Under a pushed message: the "Add money" screen in a message of its own, the push kept as it was.
  composer.callbackQuery(ADD_MONEY_BUTTON, async (ctx) => {
    await ctx.answerCallbackQuery();
    await showAddMoney(ctx, s, { apart: true });
  });
  if (s.cards.funding === undefined) {
    composer.command('deposit', (ctx) => showAddMoney(ctx, s));
    return composer;
  }
  composer.command('deposit', async (ctx) => {
    const [, amount, note] = /^(\S+)\s*([\s\S]*)$/.exec(ctx.match.trim()) ?? [];
    if (amount === undefined) return showAddMoney(ctx, s);
    await offer(ctx, s, parseTypedAmount(amount), note?.trim() || null);
  });
  composer.callbackQuery(/^dp:/, async (ctx) => {
    const data = decodeDepositCallback(ctx.callbackQuery.data);
    if (data?.kind === 'amount') {
      await ctx.answerCallbackQuery();
      return offer(ctx, s, data.amount / 100, null);
    }
    const draft = data && (await takeDraft(ctx, s, data.nonce));
    await ctx.editMessageReplyMarkup({ reply_markup: undefined }).catch(() => undefined);
    if (!data || !draft) return ctx.answerCallbackQuery({ text: ctx.t('button-expired') });
    await ctx.answerCallbackQuery(data.choice === 'cancel' ? { text: ctx.t('cancelled') } : undefined);
    await choose[data.choice](ctx, s, draft);
  });
  return composer;
}

/** Checks the amount (and note) and asks how to pay it in. */
async function offer(ctx: BotContext, s: Services, typed: number, note: string | null): Promise<void> {
  const parsed = s.cards.rules.schemas.topup.safeParse({ amount: typed });
  if (!parsed.success) {
    await ctx.reply(ctx.t('deposit-amount-invalid', { message: issueText(ctx.t, parsed.error) }));
    return;
  }
  if (note !== null && note.length > NOTE_MAX_LENGTH) {
    await ctx.reply(ctx.t('deposit-refusal-note-too-long', { max: NOTE_MAX_LENGTH }));
    return;
  }
  const draft: Draft = {
    nonce: randomUUID().slice(0, 8),
    userId: accountOf(ctx).userId,
    amount: parsed.data.amount,
    note,
    at: s.clock.now().getTime(),
  };
  await writeKv(s.db, draftKey(ctx.chat!.id), JSON.stringify(draft), s.clock.now());
  const text = ctx.t(recordedOnly(s) ? 'deposit-offer-recorded' : 'deposit-offer', { amount: localMoney(draft.amount), note: note ?? '—' });
  const choices = { recordedOnly: recordedOnly(s), canPay: s.config.paymentProviderToken !== undefined };
  await show(ctx, { text, keyboard: depositChoiceKeyboard(ctx.t, draft.nonce, choices) });
}

/**
 * With no admins' chat, nobody is sent a request: it is recorded and waits for the operator's
 * `deposits approve/reject`, and the texts say so instead of speaking of administrators.
 */
const recordedOnly = (s: Services) => s.config.adminChatId === undefined;

/**
 * The chat's draft if this press is for it, its user is the caller and it has not expired; it is used up.
 * A chat's updates run one at a time, so a second tap finds it gone.
 */
async function takeDraft(ctx: BotContext, s: Services, nonce: string): Promise<Draft | undefined> {
  const key = draftKey(ctx.chat!.id);
  const stored = await readKv(s.db, key);
  const draft = stored === undefined ? undefined : (JSON.parse(stored) as Draft);
  if (!draft || draft.nonce !== nonce) return undefined;
  await deleteKv(s.db, key);
  const fresh = s.clock.now().getTime() - draft.at < DRAFT_TTL_MS;
  return fresh && draft.userId === accountOf(ctx).userId ? draft : undefined;
}

/** What each choice does; its answer takes the offer's place (an invoice comes as a message of its own). */
const choose: Record<DepositChoice, (ctx: BotContext, s: Services, draft: Draft) => Promise<unknown>> = {
  cancel: (ctx) => show(ctx, { text: ctx.t('cancelled') }),
  pay: (ctx, s, draft) => sendWalletInvoice(ctx, s, draft.amount),
  async request(ctx, s, draft) {
    try {
      const request = await fundingOf(s).deposits.request({
        userId: draft.userId,
        amount: draft.amount,
        note: draft.note,
        chatId: ctx.chat!.id,
      });
      const said = recordedOnly(s) ? 'deposit-requested-recorded' : 'deposit-requested';
      await show(ctx, { text: ctx.t(said, { id: String(request.id), amount: localMoney(request.amount) }) });
      await postToAdmins(ctx.api, s, request);
    } catch (error) {
      if (!isDepositError(error)) throw error;
      await show(ctx, { text: depositRefusalText(ctx.t, error) });
    }
  },
};
