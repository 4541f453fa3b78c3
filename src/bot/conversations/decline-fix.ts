import type { ConversationContext } from '../context.js';
import type { Card, Cents } from '../card-service/port.js';
import { controlsOf, type ControlsView } from '../ui/controls-access.js';
import type { ButtonFix } from '../ui/controls-callbacks.js';
import { localMoney } from '../ui/format.js';
import { categoryName, limitInput, limitName, limitOf } from '../ui/limits-screens.js';
import { refusalText } from '../ui/refusal-texts.js';
import { show } from '../ui/screens.js';
import type { Services } from '../services.js';
import { call, confirm, sayRefusal, type Convo } from './kit.js';

/** A decline alert's fix that changes the card itself (a top-up and a new card run their own flows). */
export type CardFix = Extract<ButtonFix, { kind: 'unfreeze' | 'raise_limit' | 'allow_category' }>;

export interface DeclineFixArgs {
  cardId: string;
  fix: CardFix;
}

/**
 * A decline's fix: the card and its controls read as they are now, the change quoted, Confirm, done. An
 * alert gone stale (the card closed since, unfrozen, the limit already as high, the category allowed)
 * says so and changes nothing.
 */
export function declineFixConversation(s: Services) {
  return async function declineFix(conversation: Convo, ctx: ConversationContext, { cardId, fix }: DeclineFixArgs) {
    const read = await call(conversation, async (account) => {
      const card = await account.getCard(cardId);
      const controls = controlsOf(account);
      return { card, controls: fix.kind === 'unfreeze' || !controls ? null : await controls.getControls(cardId) };
    });
    if ('refused' in read) return sayRefusal(ctx, read.refused);
    const { card, controls } = read.ok;
    const question = quote(ctx, card, controls, fix);
    if ('stale' in question) return void (await ctx.reply(question.stale));
    const confirmed = await confirm(conversation, ctx, s, question.text);
    if (!confirmed) return;
    // Each change reads the controls again at the moment it is made: a limit raised higher (or removed)
    // while Confirm waited is not lowered, a category blocked meanwhile stays blocked.
    const done = await call(conversation, async (account): Promise<{ already: Cents | null } | undefined> => {
      if (fix.kind === 'unfreeze') return void (await account.unfreeze(cardId));
      const controlsNow = controlsOf(account)!;
      const now = await controlsNow.getControls(cardId);
      if (fix.kind === 'raise_limit') {
        const current = limitOf(now, fix.control);
        if (current === null || current >= fix.to) return { already: current };
        return void (await controlsNow.setControls(cardId, limitInput(fix.control, fix.to)));
      }
      await controlsNow.setControls(cardId, { blockedCategories: now.blockedCategories.filter((c) => c !== fix.category) });
    });
    if ('refused' in done) return show(confirmed, { text: refusalText(ctx.t, done.refused) });
    if (done.ok !== undefined && fix.kind === 'raise_limit') {
      return show(confirmed, { text: staleRaised(ctx, card, fix, done.ok.already) });
    }
    await show(confirmed, { text: doneText(ctx, card, fix) });
  };
}

/** The question before Confirm, or why there is nothing to do (the alert is stale). */
function quote(ctx: ConversationContext, card: Card, controls: ControlsView | null, fix: CardFix): { text: string } | { stale: string } {
  const t = ctx.t;
  if (card.status !== 'active' && card.status !== 'frozen') {
    return { stale: t('fix-stale-card', { name: card.name, status: t('card-status', { status: card.status }) }) };
  }
  if (fix.kind === 'unfreeze') {
    if (card.status !== 'frozen') return { stale: t('fix-stale-unfrozen', { name: card.name }) };
    return { text: t('fix-unfreeze-confirm', { name: card.name, masked: card.maskedPan }) };
  }
  if (controls === null) return { stale: t('controls-unavailable') };
  if (fix.kind === 'raise_limit') {
    const current = limitOf(controls, fix.control);
    const name = limitName(t, fix.control);
    if (current === null || current >= fix.to) return { stale: staleRaised(ctx, card, fix, current) };
    return { text: t('fix-raise-confirm', { name, card: card.name, from: localMoney(current), to: localMoney(fix.to) }) };
  }
  const category = categoryName(t, fix.category);
  if (!controls.blockedCategories.includes(fix.category)) return { stale: t('fix-stale-allowed', { category, card: card.name }) };
  return { text: t('fix-allow-confirm', { category, card: card.name }) };
}

/** A raise with nothing to do: the limit is already as high as the fix asks, or there is none. */
function staleRaised(ctx: ConversationContext, card: Card, fix: Extract<CardFix, { kind: 'raise_limit' }>, current: Cents | null): string {
  const value = current === null ? ctx.t('limit-none') : localMoney(current);
  return ctx.t('fix-stale-raised', { name: limitName(ctx.t, fix.control), card: card.name, value });
}

function doneText(ctx: ConversationContext, card: Card, fix: CardFix): string {
  const t = ctx.t;
  if (fix.kind === 'unfreeze') return t('fix-done-unfreeze', { name: card.name });
  if (fix.kind === 'raise_limit') return t('fix-done-raise', { name: limitName(t, fix.control), card: card.name, to: localMoney(fix.to) });
  return t('fix-done-allow', { category: categoryName(t, fix.category), card: card.name });
}
