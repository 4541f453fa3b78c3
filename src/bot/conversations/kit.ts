import type { Conversation } from '@grammyjs/conversations';
import { type Api, InlineKeyboard } from 'grammy';
import { randomUUID } from 'node:crypto';
import type { ZodError, ZodType } from 'zod';
import type { Cents, CardAccount } from '../card-service/port.js';
import { toValidationIssue, isApiTokenShaped } from '../card-service/from-core.js';
import { conversationButton, parseConversationButton } from '../ui/callback-data.js';
import type { BotContext, ConversationContext } from '../context.js';
import { refusalText, validationIssueText, type Refusal } from '../ui/refusal-texts.js';
import { localMoney, parseTypedAmount } from '../ui/format.js';
import { confirmKeyboard, choiceKeyboard } from '../ui/keyboards.js';
import { claimConfirmation, issueConfirmation } from '../store/confirmations.js';
import { deleteKv, readKv, writeKv } from '../store/kv.js';
import { flowButtonsKey } from '../store/kv-keys.js';
import { show } from '../ui/screens.js';
import { attempt, type Outcome, type Services } from '../services.js';

export type Convo = Conversation<BotContext, ConversationContext>;

/**
 * Runs a card-service call for the account of the update being handled now (the link is re-checked on
 * every update), once: on replay the stored outcome is returned.
 */
export function call<T>(conversation: Convo, task: (account: CardAccount) => Promise<T>): Promise<Outcome<T>> {
  return conversation.external((octx) => attempt(() => task(requireAccount(octx))));
}

function requireAccount(ctx: BotContext): CardAccount {
  if (!ctx.account) throw new Error('conversation update without a linked account');
  return ctx.account;
}

/**
 * The wallet balance an operation's result gave; from a service that leaves it out, read now (once: a
 * replay keeps it), undefined when that read is refused.
 */
export async function walletAfter(conversation: Convo, given: Cents | undefined): Promise<Cents | undefined> {
  if (given !== undefined) return given;
  const read = await call(conversation, async (account) => (await account.walletBalance()).balance);
  return 'ok' in read ? read.ok : undefined;
}

export async function sayRefusal(ctx: ConversationContext, refusal: Refusal): Promise<void> {
  await ctx.reply(refusalText(ctx.t, refusal));
}

/** The default time a flow waits for the user before it expires. */
export const DEFAULT_IDLE_MS = 10 * 60_000;

/**
 * Waits for an update the flow wants; any other passes through to the bot (menus, commands). One that
 * comes after the flow sat idle too long ends it, saying so, and does nothing else.
 */
export async function waitFor(
  conversation: Convo,
  s: Services,
  wanted: (ctx: ConversationContext) => boolean,
): Promise<ConversationContext> {
  const idleMs = s.config.conversationIdleMs ?? DEFAULT_IDLE_MS;
  const clockNow = () => conversation.external(() => s.clock.now().getTime());
  const since = await clockNow();
  const ctx = await conversation.waitUntil(wanted, { next: true });
  if ((await clockNow()) - since >= idleMs) {
    const minutes = Math.max(1, Math.round(idleMs / 60_000));
    await dropButtons(conversation, s, ctx);
    if (ctx.callbackQuery) await ctx.answerCallbackQuery({ text: ctx.t('flow-expired', { minutes }) });
    await ctx.reply(ctx.t('flow-expired', { minutes }));
    return conversation.halt();
  }
  return ctx;
}

/** Typed text a flow may take as its answer: not a command (/cancel, /menu) and not a pasted API token. */
export function isTypedAnswer(ctx: ConversationContext): boolean {
  const text = ctx.message?.text;
  return text !== undefined && !text.startsWith('/') && !isApiTokenShaped(text.trim());
}

/** A typed answer; commands and pasted tokens pass through to the bot. */
export async function waitForText(conversation: Convo, s: Services): Promise<{ ctx: ConversationContext; text: string }> {
  const ctx = await waitFor(conversation, s, isTypedAnswer);
  return { ctx, text: ctx.message!.text!.trim() };
}

/** The first validation message of a refused input, in the chat's language (the next step follows it). */
export function issueText(t: ConversationContext['t'], error: ZodError, field?: string): string {
  const issue = error.issues[0];
  return issue ? validationIssueText(t, toValidationIssue(issue), field) : t('refusal-validation', { count: 0, details: '' });
}

/** Asks until the typed amount passes the core's schema; returns cents. */
export async function askAmount(conversation: Convo, s: Services, schema: ZodType<{ amount: Cents }, { amount: number }>): Promise<Cents> {
  for (;;) {
    const { ctx, text } = await waitForText(conversation, s);
    const parsed = schema.safeParse({ amount: parseTypedAmount(text) });
    if (parsed.success) return parsed.data.amount;
    await ctx.reply(ctx.t('amount-invalid', { message: issueText(ctx.t, parsed.error) }));
  }
}

/**
 * Asks for an amount under `text` with preset buttons (those the schema takes) and "Other": a press on a
 * preset, or a typed amount that passes the core's schema, is the answer; returns cents.
 */
export async function askPresetAmount(
  conversation: Convo,
  s: Services,
  ctx: ConversationContext,
  text: string,
  schema: ZodType<{ amount: Cents }, { amount: number }>,
  presets: readonly Cents[],
  /** An "All" button for this amount (a withdrawal: the whole card), after the presets. */
  all?: Cents,
): Promise<Cents> {
  const nonce = await newNonce(conversation);
  const takes = (amount: Cents) => schema.safeParse({ amount: amount / 100 }).success;
  const choices = presets
    .filter((amount) => takes(amount) && amount !== all)
    .map((amount) => ({ label: ctx.t('btn-amount', { amount: localMoney(amount) }), value: String(amount) }));
  if (all !== undefined && takes(all)) choices.push({ label: ctx.t('btn-amount-all', { amount: localMoney(all) }), value: String(all) });
  choices.push({ label: ctx.t('btn-amount-other'), value: 'other' });
  await offer(conversation, s, ctx, text, choiceKeyboard(nonce, choices));
  const pressed = buttonOf(nonce);
  for (;;) {
    const answer = await waitFor(conversation, s, (c) => isTypedAnswer(c) || pressed(c));
    if (answer.callbackQuery) {
      const choice = parseConversationButton(answer.callbackQuery.data!)!.choice;
      await settlePress(conversation, s, answer);
      if (choice !== 'other') return Number(choice);
      await answer.reply(answer.t('amount-type'));
      continue;
    }
    const parsed = schema.safeParse({ amount: parseTypedAmount(answer.message!.text!.trim()) });
    if (parsed.success) {
      // Typed instead of pressed: the presets are spent all the same.
      await dropButtons(conversation, s, answer);
      return parsed.data.amount;
    }
    await answer.reply(answer.t('amount-invalid', { message: issueText(answer.t, parsed.error) }));
  }
}

/** A fresh nonce for a set of buttons, the same on every replay. */
export function newNonce(conversation: Convo): Promise<string> {
  return conversation.external(() => randomUUID().slice(0, 8));
}

/** Answers a pressed flow button and takes the buttons off its message (they are spent). */
export async function settlePress(conversation: Convo, s: Services, pressed: ConversationContext): Promise<void> {
  await pressed.answerCallbackQuery();
  await takeOffPressed(conversation, s, pressed);
}

/** Takes the buttons off the pressed message, which then has no flow buttons left to remove. */
async function takeOffPressed(conversation: Convo, s: Services, pressed: ConversationContext): Promise<void> {
  await pressed.editMessageReplyMarkup({ reply_markup: undefined }).catch(() => undefined);
  const chatId = pressed.chat!.id;
  await conversation.external(() => deleteKv(s.db, flowButtonsKey(chatId)));
}

/**
 * Sends a flow's buttons, remembered per chat (`bot_kv`) until pressed, so that a flow that ends some
 * other way (expired, /cancel, another flow started, done after a typed answer) takes them off: no dead
 * buttons stay behind. Buttons sent earlier by the flow are taken off first.
 */
export async function offer(conversation: Convo, s: Services, ctx: ConversationContext, text: string, keyboard: InlineKeyboard) {
  await dropButtons(conversation, s, ctx);
  const sent = await ctx.reply(text, { reply_markup: keyboard });
  const chatId = sent.chat.id;
  await conversation.external(() => writeKv(s.db, flowButtonsKey(chatId), String(sent.message_id), s.clock.now()));
  return sent;
}

/** Takes off the buttons the chat's flow left waiting, if any (from inside the flow, once). */
export async function dropButtons(conversation: Convo, s: Services, ctx: ConversationContext): Promise<void> {
  const chatId = ctx.chat?.id;
  if (chatId === undefined) return;
  await conversation.external((octx) => dropFlowButtons(s, octx.api, chatId));
}

/** Takes off the buttons a flow left waiting in the chat, if any (a message already gone is no matter). */
export async function dropFlowButtons(s: Pick<Services, 'db'>, api: Api, chatId: number): Promise<void> {
  const key = flowButtonsKey(chatId);
  const messageId = await readKv(s.db, key);
  if (messageId === undefined) return;
  await deleteKv(s.db, key);
  await api.editMessageReplyMarkup(chatId, Number(messageId), { reply_markup: undefined }).catch(() => undefined);
}

/** Sends buttons with a fresh nonce and waits for one of them; other buttons pass through. */
export async function choose(
  conversation: Convo,
  s: Services,
  ctx: ConversationContext,
  text: string,
  build: (nonce: string) => InlineKeyboard,
) {
  const nonce = await newNonce(conversation);
  await offer(conversation, s, ctx, text, build(nonce));
  const pressed = await waitFor(conversation, s, buttonOf(nonce));
  const choice = parseConversationButton(pressed.callbackQuery!.data!)!.choice;
  await settlePress(conversation, s, pressed);
  return { ctx: pressed, choice };
}

export function pick(
  conversation: Convo,
  s: Services,
  ctx: ConversationContext,
  text: string,
  choices: { label: string; value: string }[],
) {
  return choose(conversation, s, ctx, text, (nonce) => choiceKeyboard(nonce, choices));
}

/** A press on one of the buttons sent under `nonce`. */
export function buttonOf(nonce: string): (ctx: ConversationContext) => boolean {
  const prefix = `v:${nonce}:`;
  return (ctx) => ctx.callbackQuery?.data?.startsWith(prefix) === true;
}

/**
 * Confirm or cancel. The confirmation's nonce is a row in the database, claimed with a conditional
 * update: a double tap or a press on an old message never runs the operation twice. Cancelled, the
 * question's message says so in its place; confirmed, the flow puts its result there (`show` with the
 * context returned).
 */
export async function confirm(
  conversation: Convo,
  ctx: ConversationContext,
  s: Services,
  text: string,
): Promise<ConversationContext | undefined> {
  return (await confirmChoosing(conversation, ctx, s, { text: () => text, options: () => [], initial: '' }))?.ctx;
}

/** A choice made on a confirmation's own message, above Confirm and Cancel (a new card's type). */
export interface ConfirmChoice {
  initial: string;
  /** The question's text with `chosen` chosen. */
  text: (chosen: string) => string;
  /** The choices' buttons with `chosen` chosen (its label marked by the caller). */
  options: (chosen: string) => { label: string; value: string }[];
}

/**
 * `confirm`, with choices above Confirm and Cancel: a press on one redraws the question with it chosen, in
 * place, and waits again; Confirm returns the context and what was chosen then.
 */
export async function confirmChoosing(
  conversation: Convo,
  ctx: ConversationContext,
  s: Services,
  choice: ConfirmChoice,
): Promise<{ ctx: ConversationContext; chosen: string } | undefined> {
  const chatId = ctx.chat!.id;
  const nonce = await conversation.external(async () => {
    const fresh = randomUUID().replace(/-/g, '').slice(0, 16);
    await issueConfirmation(s.db, fresh, chatId, s.clock.now());
    return fresh;
  });
  let chosen = choice.initial;
  const keyboard = () => {
    const options = choice.options(chosen);
    if (options.length === 0) return confirmKeyboard(ctx.t, nonce);
    const kb = new InlineKeyboard();
    for (const option of options) kb.text(option.label, conversationButton(nonce, `c.${option.value}`));
    return kb.row().append(confirmKeyboard(ctx.t, nonce));
  };
  await offer(conversation, s, ctx, choice.text(chosen), keyboard());
  for (;;) {
    const pressed = await waitFor(conversation, s, buttonOf(nonce));
    const pick = parseConversationButton(pressed.callbackQuery!.data!)?.choice ?? '';
    if (pick.startsWith('c.')) {
      const value = pick.slice(2);
      await pressed.answerCallbackQuery();
      if (value !== chosen && choice.options(chosen).some((o) => o.value === value)) {
        chosen = value;
        await pressed.editMessageText(choice.text(chosen), { reply_markup: keyboard() }).catch(() => undefined);
      }
      continue;
    }
    await takeOffPressed(conversation, s, pressed);
    if (pick !== 'ok') {
      await pressed.answerCallbackQuery({ text: pressed.t('cancelled') });
      await show(pressed, { text: pressed.t('cancelled') });
      return undefined;
    }
    const claimed = await conversation.external(() => claimConfirmation(s.db, nonce, chatId, s.clock.now()));
    if (!claimed) {
      await pressed.answerCallbackQuery({ text: pressed.t('confirm-used') });
      return undefined;
    }
    await pressed.answerCallbackQuery();
    return { ctx: pressed, chosen };
  }
}
