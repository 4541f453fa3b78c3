import type { AutoTopupEvent } from '../card-service/from-core.js';
import { localMoney, type T } from './format.js';

/**
 * The chat's word on an auto top-up: what it added and the balance then, or why it could not run and what
 * fixes that (money into the wallet; a card at its plan's limit; a wait, when it ran a moment ago).
 */
export function autoTopupPushText(t: T, event: AutoTopupEvent): string {
  const params = {
    amount: localMoney(event.amount),
    name: event.cardName,
    masked: event.maskedPan,
    balance: localMoney(event.cardBalance),
    wallet: localMoney(event.walletBalance),
  };
  if (event.outcome === 'done') return t('auto-topup-done', params);
  return t('auto-topup-failed', { ...params, reason: event.reason ?? 'other' });
}
