import { InlineKeyboard } from 'grammy';
import type { CardTransactionEvent, DeclineFix } from '../card-service/from-core.js';
import { fixButtonData, type ButtonFix } from './controls-callbacks.js';
import { localMoney, merchantText, type T } from './format.js';
import { alertKeyboard } from './keyboards.js';
import { categoryName, limitName } from './limits-screens.js';
import type { Screen } from './screens.js';

/**
 * A declined purchase's alert: why, in plain words, and what fixes it, with the button that starts the fix
 * (each behind the usual quote and Confirm). A merchant-locked card names its merchant and has no button;
 * reasons that would help a fraudster (and unknown ones) say no more than the reason.
 */
export function declineAlert(t: T, event: CardTransactionEvent): Screen {
  const params = {
    amount: localMoney(event.amount, event.currency),
    merchant: merchantText(t, event.merchantName),
    name: event.cardName,
    masked: event.maskedPan,
    reason: t('decline-reason', { code: event.declineCode ?? 'other' }),
  };
  const fix = event.fix ?? null;
  const button = fix && fix.kind !== 'locked_to' ? fixButtonData(event.cardId, fix) : undefined;
  // A fix no press could carry out (an amount past what a button or the controls take) is not offered.
  const offered = fix && (fix.kind === 'locked_to' || button !== undefined) ? fix : null;
  const lines = [t('tx-push-declined', params)];
  if (offered) lines.push(fixHint(t, offered));
  const keyboard = new InlineKeyboard();
  if (offered && offered.kind !== 'locked_to' && button) keyboard.text(fixButtonLabel(t, offered), button).row();
  keyboard.append(alertKeyboard(t, event.cardId, { declineCode: event.declineCode, type: event.type }));
  return { text: lines.join('\n'), keyboard };
}

function fixHint(t: T, fix: DeclineFix): string {
  switch (fix.kind) {
    case 'topup':
      return t('decline-fix-topup', { amount: localMoney(fix.amount) });
    case 'unfreeze':
      return t('decline-fix-unfreeze');
    case 'raise_limit':
      return t('decline-fix-raise', { name: limitName(t, fix.control), amount: localMoney(fix.to) });
    case 'allow_category':
      return t('decline-fix-allow', { category: categoryName(t, fix.category) });
    case 'new_card_like':
      return t('decline-fix-new-card');
    case 'locked_to':
      return t('decline-fix-locked', { merchant: fix.merchant });
  }
}

export function fixButtonLabel(t: T, fix: ButtonFix): string {
  switch (fix.kind) {
    case 'topup':
      return t('btn-fix-topup', { amount: localMoney(fix.amount) });
    case 'unfreeze':
      return t('btn-fix-unfreeze');
    case 'raise_limit':
      return t('btn-fix-raise', { amount: localMoney(fix.to) });
    case 'allow_category':
      return t('btn-fix-allow', { category: categoryName(t, fix.category) });
    case 'new_card_like':
      return t('btn-fix-new-card');
  }
}
