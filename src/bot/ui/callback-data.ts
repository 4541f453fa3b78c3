/**
 * Typed callback data for the plain inline keyboards (card views, lists, pages, pushed alerts).
 * Every button names the card it acts on; the core decides whether the caller may.
 */
export type CardAction =
  | 'view'
  | 'freeze'
  | 'alertfreeze'
  | 'alertview'
  | 'unfreeze'
  | 'details'
  | 'otps'
  | 'reqotp'
  | 'watch'
  | 'topup'
  | 'withdraw'
  | 'close';

export type CallbackData =
  | { kind: 'card'; action: CardAction; cardId: string }
  | { kind: 'cards' }
  | { kind: 'tx'; page: number; cardId?: string };

const CARD_ACTIONS = new Set<string>([
  'view',
  'freeze',
  'alertfreeze',
  'alertview',
  'unfreeze',
  'details',
  'otps',
  'reqotp',
  'watch',
  'topup',
  'withdraw',
  'close',
]);

export function encodeCallback(data: CallbackData): string {
  switch (data.kind) {
    case 'card':
      return `c:${data.action}:${data.cardId}`;
    case 'cards':
      return 'l';
    case 'tx':
      return `t:${data.page}:${data.cardId ?? '*'}`;
  }
}

export function decodeCallback(raw: string): CallbackData | undefined {
  const [head, a, b] = raw.split(':');
  if (head === 'l' && a === undefined) return { kind: 'cards' };
  if (head === 'c' && a && CARD_ACTIONS.has(a) && b) return { kind: 'card', action: a as CardAction, cardId: b };
  if (head === 't' && a && /^\d{1,6}$/.test(a) && b) return { kind: 'tx', page: Number(a), cardId: b === '*' ? undefined : b };
  return undefined;
}

/** Callback data of the button that draws the main menu again in the pressed message. */
export const MAIN_MENU_BUTTON = 'm';

/** Callback data of a conversation's own buttons: `v:<nonce>:<choice>`. Stale ones are refused outside it. */
export const CONVERSATION_BUTTON = /^v:/;
export const conversationButton = (nonce: string, choice: string) => `v:${nonce}:${choice}`;
export function parseConversationButton(raw: string): { nonce: string; choice: string } | undefined {
  const match = /^v:([\w-]+):(.+)$/.exec(raw);
  return match ? { nonce: match[1]!, choice: match[2]! } : undefined;
}
