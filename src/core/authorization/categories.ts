/**
 * The merchant-category groups a cardholder may block (`blocked_categories`), each by the ISO 18245 merchant
 * category codes (MCC) it covers: a closed range `[from, to]`, inclusive. Fixed and documented (docs/authorization.md):
 * a card's controls name groups, never codes, so the list can grow without touching a card.
 */
export const CATEGORY_GROUPS = {
  /** Betting, lotteries, casino chips, horse and dog racing. */
  gambling: [
    [7800, 7802],
    [7995, 7995],
    [9406, 9406],
  ],
  /** Crypto exchanges and other quasi-cash (non-financial institutions selling currency or crypto). */
  crypto: [
    [6051, 6051],
    [6211, 6211],
  ],
  /** Adult content and services, dating and escort. */
  adult: [
    [5967, 5967],
    [7273, 7273],
  ],
  /** Cash at ATMs and over the counter. */
  cash_and_atm: [[6010, 6011]],
  /** Wire transfers, money orders, stored-value loads and account funding. */
  money_transfer: [
    [4829, 4829],
    [6012, 6012],
    [6538, 6540],
  ],
  /** Airlines, car rental, hotels, cruises, railways, travel agencies. */
  travel: [
    [3000, 3999],
    [4011, 4011],
    [4111, 4112],
    [4411, 4411],
    [4511, 4511],
    [4722, 4722],
    [7011, 7011],
    [7512, 7512],
  ],
  /** Digital goods: books, music, films, games, apps. */
  digital_goods: [[5815, 5818]],
  /** Subscriptions: continuity merchants, cable and streaming. */
  subscriptions: [
    [4899, 4899],
    [5968, 5968],
  ],
} as const satisfies Record<string, ReadonlyArray<readonly [number, number]>>;

export type CategoryGroup = keyof typeof CATEGORY_GROUPS;
export const CATEGORY_GROUP_NAMES = Object.keys(CATEGORY_GROUPS) as CategoryGroup[];

export function isCategoryGroup(name: string): name is CategoryGroup {
  return Object.hasOwn(CATEGORY_GROUPS, name);
}

/** The group an MCC (four digits) belongs to, or null when none of the list's. */
export function categoryOf(mcc: string): CategoryGroup | null {
  if (!/^\d{4}$/.test(mcc)) return null;
  const code = Number(mcc);
  for (const name of CATEGORY_GROUP_NAMES) {
    if (CATEGORY_GROUPS[name].some(([from, to]) => code >= from && code <= to)) return name;
  }
  return null;
}
