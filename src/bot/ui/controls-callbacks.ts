import {
  CATEGORY_GROUP_NAMES,
  CONTROL_AMOUNT_MAX,
  type CategoryGroup,
  type DeclineFix,
  type LimitControl,
} from '../card-service/from-core.js';

/**
 * Callback data of the spending-control screens and the decline alerts' fixes, kept short (Telegram takes
 * 64 bytes; a card id is 36): limits `k:<card>[:<p|d|m>[:<cents|off>]]` and `k:<card>:c:<category>`, auto
 * top-up `a:<card>[:on|off|b|n[:<cents>]]`, a fix `f:<card>:<fix>[:<value>]`.
 */
export type ControlsCallback =
  | { kind: 'limits'; cardId: string }
  | { kind: 'limit-presets'; cardId: string; control: LimitControl }
  | { kind: 'limit-set'; cardId: string; control: LimitControl; to: number | null }
  | { kind: 'category'; cardId: string; category: CategoryGroup }
  | { kind: 'auto-topup'; cardId: string }
  | { kind: 'auto-topup-switch'; cardId: string; enabled: boolean }
  | { kind: 'auto-topup-presets'; cardId: string; field: AutoTopupField }
  | { kind: 'auto-topup-set'; cardId: string; field: AutoTopupField; to: number }
  | { kind: 'fix'; cardId: string; fix: ButtonFix };

export type AutoTopupField = 'minBalance' | 'topupAmount';

/** The fixes that have a button (a merchant lock has none: it only names the merchant). */
export type ButtonFix = Exclude<DeclineFix, { kind: 'locked_to' }>;

const CONTROL_CODES: Record<LimitControl, string> = { per_purchase_limit: 'p', daily_limit: 'd', monthly_limit: 'm' };
const CONTROL_OF = new Map(Object.entries(CONTROL_CODES).map(([control, code]) => [code, control as LimitControl]));
const FIELD_CODES: Record<AutoTopupField, string> = { minBalance: 'b', topupAmount: 'n' };
const FIELD_OF = new Map(Object.entries(FIELD_CODES).map(([field, code]) => [code, field as AutoTopupField]));
const CARD_ID = /^[\w-]{1,40}$/;
const CENTS = /^\d{1,9}$/;
/** The most cents the data above carries (`CENTS`). */
const CENTS_MAX = 999_999_999;

export function encodeControls(data: ControlsCallback): string {
  const { cardId } = data;
  switch (data.kind) {
    case 'limits':
      return `k:${cardId}`;
    case 'limit-presets':
      return `k:${cardId}:${CONTROL_CODES[data.control]}`;
    case 'limit-set':
      return `k:${cardId}:${CONTROL_CODES[data.control]}:${data.to ?? 'off'}`;
    case 'category':
      return `k:${cardId}:c:${data.category}`;
    case 'auto-topup':
      return `a:${cardId}`;
    case 'auto-topup-switch':
      return `a:${cardId}:${data.enabled ? 'on' : 'off'}`;
    case 'auto-topup-presets':
      return `a:${cardId}:${FIELD_CODES[data.field]}`;
    case 'auto-topup-set':
      return `a:${cardId}:${FIELD_CODES[data.field]}:${data.to}`;
    case 'fix':
      return `f:${cardId}:${fixCode(data.fix)}`;
  }
}

/**
 * The data of a decline fix's button, or undefined where a press could not work: an amount past what the
 * data carries, or a limit past what the controls accept (the alert then only says why).
 */
export function fixButtonData(cardId: string, fix: ButtonFix): string | undefined {
  if (fix.kind === 'topup' && fix.amount > CENTS_MAX) return undefined;
  if (fix.kind === 'raise_limit' && fix.to > CONTROL_AMOUNT_MAX) return undefined;
  return encodeControls({ kind: 'fix', cardId, fix });
}

function fixCode(fix: ButtonFix): string {
  switch (fix.kind) {
    case 'topup':
      return `t:${fix.amount}`;
    case 'unfreeze':
      return 'u';
    case 'raise_limit':
      return `r${CONTROL_CODES[fix.control]}:${fix.to}`;
    case 'allow_category':
      return `a:${fix.category}`;
    case 'new_card_like':
      return 'n';
  }
}

/** The data of a button these screens drew; undefined for anything else (passed on). */
export function decodeControls(raw: string): ControlsCallback | undefined {
  const [head, cardId, a, b, extra] = raw.split(':');
  if (!cardId || !CARD_ID.test(cardId) || extra !== undefined) return undefined;
  if (head === 'k') return decodeLimits(cardId, a, b);
  if (head === 'a') return decodeAutoTopup(cardId, a, b);
  if (head === 'f' && a !== undefined) {
    const fix = decodeFix(a, b);
    return fix && { kind: 'fix', cardId, fix };
  }
  return undefined;
}

function decodeLimits(cardId: string, a?: string, b?: string): ControlsCallback | undefined {
  if (a === undefined) return { kind: 'limits', cardId };
  if (a === 'c') return b !== undefined && isCategory(b) ? { kind: 'category', cardId, category: b } : undefined;
  const control = CONTROL_OF.get(a);
  if (control === undefined) return undefined;
  if (b === undefined) return { kind: 'limit-presets', cardId, control };
  if (b === 'off') return { kind: 'limit-set', cardId, control, to: null };
  return CENTS.test(b) ? { kind: 'limit-set', cardId, control, to: Number(b) } : undefined;
}

function decodeAutoTopup(cardId: string, a?: string, b?: string): ControlsCallback | undefined {
  if (a === undefined) return { kind: 'auto-topup', cardId };
  if ((a === 'on' || a === 'off') && b === undefined) return { kind: 'auto-topup-switch', cardId, enabled: a === 'on' };
  const field = a === undefined ? undefined : FIELD_OF.get(a);
  if (field === undefined) return undefined;
  if (b === undefined) return { kind: 'auto-topup-presets', cardId, field };
  return CENTS.test(b) ? { kind: 'auto-topup-set', cardId, field, to: Number(b) } : undefined;
}

function decodeFix(a: string, b?: string): ButtonFix | undefined {
  if (a === 'u' && b === undefined) return { kind: 'unfreeze' };
  if (a === 'n' && b === undefined) return { kind: 'new_card_like' };
  if (a === 't' && b !== undefined && CENTS.test(b)) return { kind: 'topup', amount: Number(b) };
  if (a === 'a' && b !== undefined && isCategory(b)) return { kind: 'allow_category', category: b };
  const control = a.startsWith('r') ? CONTROL_OF.get(a.slice(1)) : undefined;
  if (control !== undefined && b !== undefined && CENTS.test(b)) return { kind: 'raise_limit', control, to: Number(b) };
  return undefined;
}

const isCategory = (name: string): name is CategoryGroup => (CATEGORY_GROUP_NAMES as readonly string[]).includes(name);

/** The prefixes of the data above, for `composer.callbackQuery`. */
export const CONTROLS_CALLBACK = /^[kaf]:/;
