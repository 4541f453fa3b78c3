import { z } from 'zod';
import { paginationSchema } from '../interface/pagination.js';
import type {
  Bin,
  Card,
  CardOtp,
  CardStatus,
  CardTransaction,
  Cents,
  CloseResult,
  Health,
  OtpList,
  Page,
  Plan,
  SensitiveCardDetails,
  StatusChange,
  TopupResult,
  Wallet,
  WithdrawResult,
} from '../interface/objects.js';

/**
 * The response shapes of a card service that speaks the interface (spec sections 2 and 4), earlier and
 * current, each parsed into the interface's object (src/interface/objects.ts). Unknown extra fields are
 * dropped by the schemas, and so are the earlier card record's `PAN`, `CVV` and `EXP`: card data leaves the
 * client only through `details`. Over 300 lines because it holds one schema per answer of the interface,
 * each reading both shapes: split, the shared readers (money, flags, ids, list bounds) would be imported back.
 */

/** A JSON amount (a number, or a numeric string some services send) as integer cents. */
const money = z
  .union([
    z.number(),
    z
      .string()
      .regex(/^-?\d+(\.\d+)?$/)
      .transform(Number),
  ])
  .transform((n): Cents => Math.round(n * 100));
const text = z.string();
const optionalText = z.string().nullish();
const flag = z.union([z.boolean(), z.literal(0), z.literal(1)]).transform(Boolean);

/**
 * A card id as the interface gives it: a UUID (spec section 2). Nothing else is taken from a service or sent
 * to one: an id is put in request paths (`..` would climb out of the card's path), in button data (where `:`
 * separates fields) and in the watcher's keys, so one of another shape is refused wherever it comes from.
 */
const CARD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `id` is shaped like a card id of the interface (a UUID). */
export const isCardId = (id: string): boolean => CARD_ID.test(id);

const cardId = z.coerce.string().regex(CARD_ID);
/** The id of a transaction or an OTP: the watcher remembers it as seen, so it is kept short. */
const itemId = z.coerce.string().min(1).max(128);

/**
 * The most items an answer's list is read for: the interface's page maximum (4.12), and as much for the
 * lists it gives no maximum (OTPs, BINs, plans); a user's own cards, a few hundred. The rest are left out.
 */
export const MAX_ITEMS = { page: 100, otps: 100, catalogue: 100, cards: 500 } as const;

/** The items of `items` that read as `schema`, the first `max` of them; the others are skipped. */
function readable<T>(items: unknown[], schema: z.ZodType<T>, max: number): T[] {
  return items.slice(0, max).flatMap((item) => {
    const parsed = schema.safeParse(item);
    return parsed.success ? [parsed.data] : [];
  });
}

/** A card's state as the interface names it; an earlier `Processing` (or any state it does not know) reads as not ready yet. */
export function cardStatusOf(raw: string): CardStatus {
  const status = raw.trim().toLowerCase();
  return status === 'active' || status === 'frozen' || status === 'closed' ? status : 'processing';
}

export const envelope = z.object({
  success: z.boolean(),
  data: z.unknown().optional(),
  message: z.string().optional(),
  error: z.union([z.string(), z.array(z.unknown())]).optional(),
  timestamp: z.string().optional(),
});
export type Envelope = z.infer<typeof envelope>;

export const health = z.object({ status: text, environment: text.optional(), timestamp: text.optional() }) satisfies z.ZodType<Health>;

const currentBin = z
  .object({
    id: z.coerce.string(),
    bin: text,
    network: text,
    threeDS: flag,
    wallet: flag,
    currency: text,
    country: text,
    initial_balance: money,
  })
  .transform(
    (b): Bin => ({
      id: b.id,
      bin: b.bin,
      network: b.network,
      threeDS: b.threeDS,
      wallet: b.wallet,
      currency: b.currency,
      country: b.country,
      initialBalance: b.initial_balance,
    }),
  );

const earlierBin = z
  .object({
    id: z.coerce.string(),
    BIN: text,
    currency: text,
    '3ds': flag.optional(),
    digital_wallet: flag.optional(),
    status: optionalText,
  })
  .transform((b): Bin => ({ id: b.id, bin: b.BIN, threeDS: b['3ds'] ?? false, wallet: b.digital_wallet ?? false, currency: b.currency }));

/** Spec 2.4: either shape; an earlier BIN whose status is not `Active` is not offered, and an item in neither is skipped. */
export const binList = z.array(z.unknown()).transform((items) =>
  items.slice(0, MAX_ITEMS.catalogue).flatMap((item) => {
    const current = currentBin.safeParse(item);
    if (current.success) return [current.data];
    const earlier = earlierBin.safeParse(item);
    if (!earlier.success) return [];
    const status = (item as { status?: unknown }).status;
    return typeof status === 'string' && status.toLowerCase() !== 'active' ? [] : [earlier.data];
  }),
);

const plan = z
  .object({ id: z.coerce.number().int(), name: text, description: text.nullish(), limit: money, creation_fee: money })
  .transform((p): Plan => ({ id: p.id, name: p.name, description: p.description ?? '', limit: p.limit, creationFee: p.creation_fee }));

/** Spec 4.3: the first `MAX_ITEMS.catalogue` plans, each of which must read. */
export const planList = z
  .array(z.unknown())
  .transform((items) => items.slice(0, MAX_ITEMS.catalogue))
  .pipe(z.array(plan));

/** Spec 2.3, the card-detail record in either shape (capitalised `Active`, `Processing`); card data dropped. */
export const card = z
  .object({
    id: cardId,
    name: text,
    masked_PAN: text.optional(),
    masked_pan: text.optional(),
    balance: money,
    deposit: money.optional(),
    status: text,
    category: text.optional(),
    currency: text.optional(),
    currency_short_name: text.optional(),
    bin_id: z.coerce.string().optional(),
    '3ds': flag.optional(),
    created_at: text.optional(),
    updated_at: text.optional(),
  })
  .transform(
    (c): Card => ({
      id: c.id,
      name: c.name,
      maskedPan: c.masked_PAN ?? c.masked_pan ?? '',
      balance: c.balance,
      ...(c.deposit === undefined ? {} : { deposit: c.deposit }),
      status: cardStatusOf(c.status),
      category: c.category ?? 'Online',
      currency: c.currency ?? c.currency_short_name ?? 'USD',
      ...(c.bin_id === undefined ? {} : { binId: c.bin_id }),
      ...(c['3ds'] === undefined ? {} : { threeDS: c['3ds'] }),
      ...(c.created_at === undefined ? {} : { createdAt: c.created_at }),
      ...(c.updated_at === undefined ? {} : { updatedAt: c.updated_at }),
    }),
  );

/** The extension `GET /api/v1/cards`: an array, or an object holding one. */
export const cardList = z
  .union([z.array(z.unknown()), z.object({ cards: z.array(z.unknown()) }), z.object({ data: z.array(z.unknown()) })])
  .transform((list) => {
    const items = Array.isArray(list) ? list : 'cards' in list ? list.cards : list.data;
    return readable(items, card, MAX_ITEMS.cards);
  });

/**
 * The creation result: no whole card in the current shape (the client asks for the card after it). The
 * billing address is kept as one line, as the earlier shape gives it; the current shape's object is joined.
 */
export interface CreatedCard extends Pick<Card, 'id' | 'status' | 'category' | 'balance'> {
  address?: string;
}

/** Spec 2.3, the creation result: current (`active`, address object) or earlier (full record, `Processing`, address string). */
export const createdCard = z
  .object({
    id: cardId,
    status: text,
    category: text.optional(),
    balance: money.optional(),
    address: z
      .union([
        text,
        z.object({ line1: text, line2: text.nullish(), city: text, state: text.optional(), postalCode: text.optional(), country: text }),
      ])
      .nullish(),
  })
  .transform(
    (c): CreatedCard => ({
      id: c.id,
      status: cardStatusOf(c.status),
      category: c.category ?? 'Online',
      balance: c.balance ?? 0,
      ...(c.address == null
        ? {}
        : {
            address:
              typeof c.address === 'string'
                ? c.address
                : [c.address.line1, c.address.line2, c.address.city, c.address.state, c.address.postalCode, c.address.country]
                    .filter((part) => part !== undefined && part !== null && part !== '')
                    .join(', '),
          }),
    }),
  );

/** Spec 4.6, current (`platform_fee_amount`, `new_card_balance`) or earlier (`platform_fee`, `new_balance`). */
export const topup = z
  .object({
    card_id: cardId,
    transaction_id: z.coerce.string(),
    total_charged: money,
    platform_fee_amount: money.optional(),
    platform_fee: money.optional(),
    new_card_balance: money.optional(),
    new_balance: money.optional(),
    wallet_balance: money.optional(),
  })
  .refine((t) => (t.platform_fee_amount ?? t.platform_fee) !== undefined && (t.new_card_balance ?? t.new_balance) !== undefined)
  .transform(
    (t): TopupResult => ({
      cardId: t.card_id,
      transactionId: t.transaction_id,
      platformFee: (t.platform_fee_amount ?? t.platform_fee)!,
      totalCharged: t.total_charged,
      newCardBalance: (t.new_card_balance ?? t.new_balance)!,
      ...(t.wallet_balance === undefined ? {} : { walletBalance: t.wallet_balance }),
    }),
  );

/** Spec 4.7, current (`new_card_balance`) or earlier (`new_balance`). */
export const withdrawal = z
  .object({
    card_id: cardId,
    transaction_id: z.coerce.string(),
    amount_withdrawn: money,
    new_card_balance: money.optional(),
    new_balance: money.optional(),
    wallet_balance: money.optional(),
  })
  .refine((w) => (w.new_card_balance ?? w.new_balance) !== undefined)
  .transform(
    (w): WithdrawResult => ({
      cardId: w.card_id,
      transactionId: w.transaction_id,
      amountWithdrawn: w.amount_withdrawn,
      newCardBalance: (w.new_card_balance ?? w.new_balance)!,
      ...(w.wallet_balance === undefined ? {} : { walletBalance: w.wallet_balance }),
    }),
  );

/** Spec 4.8 and 4.9. */
export const statusChange = z
  .object({ card_id: cardId, status: text })
  .transform((s): StatusChange => ({ cardId: s.card_id, status: cardStatusOf(s.status) }));

/** Spec 4.10: the only way card data leaves the client. */
export const sensitiveDetails = z
  .object({ id: cardId, PAN: text, CVV: text, EXP: text, masked_PAN: text.optional(), name: text.optional() })
  .transform(
    (d): SensitiveCardDetails => ({ id: d.id, pan: d.PAN, cvv: d.CVV, exp: d.EXP, maskedPan: d.masked_PAN ?? '', name: d.name ?? '' }),
  );

/** Spec 4.11. */
export const closed = z
  .object({
    card_id: cardId,
    balance_withdrawn: money,
    transaction_id: z.coerce.string().nullish(),
    new_wallet_balance: money.optional(),
  })
  .transform(
    (c): CloseResult => ({
      cardId: c.card_id,
      balanceWithdrawn: c.balance_withdrawn,
      transactionId: c.transaction_id ?? null,
      ...(c.new_wallet_balance === undefined ? {} : { newWalletBalance: c.new_wallet_balance }),
    }),
  );

/**
 * A transaction's side on its card as the bot shows it, read the same way for the statement and the pushes:
 * the spec says `Debit` or `Credit`; any case is taken, and a side that does not say credit is a debit (money
 * leaving the card, as purchases do).
 */
export function sideOf(raw: string | null | undefined): CardTransaction['side'] {
  return /credit/i.test(raw ?? '') ? 'Credit' : 'Debit';
}

const transaction = z
  .object({
    id: itemId,
    card_id: cardId,
    card_name: optionalText,
    status: optionalText,
    side: optionalText,
    amount: money,
    currency: optionalText,
    type: optionalText,
    masked_pan: optionalText,
    merchant_name: optionalText,
    decline_code: optionalText,
    transaction_created_at: optionalText,
    created_at: optionalText,
  })
  .transform(
    (t): CardTransaction => ({
      id: t.id,
      cardId: t.card_id,
      cardName: t.card_name ?? '',
      status: t.status ?? '',
      side: sideOf(t.side),
      amount: t.amount,
      currency: t.currency ?? 'USD',
      type: t.type ?? '',
      maskedPan: t.masked_pan ?? '',
      merchantName: t.merchant_name ?? '',
      declineCode: t.decline_code ?? null,
      createdAt: t.transaction_created_at ?? t.created_at ?? '',
    }),
  );

/**
 * Spec 4.12: a page of transactions and its pagination. At most a page's maximum of items is read; one that
 * does not read (a card id that is no UUID, say) is left out rather than costing the whole page.
 */
export const transactionPage = z.object({
  data: z.array(z.unknown()).transform((items) => readable(items, transaction, MAX_ITEMS.page)),
  pagination: paginationSchema,
}) satisfies z.ZodType<Page<CardTransaction>>;
export type TransactionPage = z.infer<typeof transactionPage>;

const otp = z
  .object({
    id: itemId,
    code: z.coerce.string().max(64),
    amount: money.optional(),
    currency: optionalText,
    masked_pan: optionalText,
    card_name: optionalText,
    created_at: optionalText,
  })
  .transform(
    (o): CardOtp => ({
      id: o.id,
      code: o.code,
      amount: o.amount ?? 0,
      currency: o.currency ?? 'USD',
      maskedPan: o.masked_pan ?? '',
      cardName: o.card_name ?? '',
      createdAt: o.created_at ?? '',
    }),
  );

/** The newest `max` of `otps` (by their time), in the order the service gave them. */
function newest(otps: CardOtp[], max: number): CardOtp[] {
  if (otps.length <= max) return otps;
  const kept = new Set(
    otps
      .map((o, index) => ({ o, index }))
      .sort((a, b) => b.o.createdAt.localeCompare(a.o.createdAt) || b.index - a.index)
      .slice(0, max)
      .map(({ o }) => o),
  );
  return otps.filter((o) => kept.has(o));
}

/**
 * Spec 4.13. The newest `MAX_ITEMS.otps` codes are read (a code that does not read, or too long for one, is
 * left out): a card flooded with codes costs a bounded poll, and its latest code still arrives.
 */
export const otpList = z.object({
  otps: z.array(z.unknown()).transform((items) => newest(readable(items, otp, items.length), MAX_ITEMS.otps)),
  cardInfo: z.object({ id: z.union([z.number(), z.string()]), nickname: optionalText }).optional(),
}) satisfies z.ZodType<OtpList>;

/** Spec 4.14. */
export const requestedOtp = z
  .object({ message: optionalText, cardInfo: z.object({ otp_code: z.coerce.string() }).partial().optional() })
  .transform((r) => ({ message: r.message ?? '', code: r.cardInfo?.otp_code }));

/** Spec 4.15. */
export const wallet = z
  .object({ balance: money, updated_at: optionalText })
  .transform((w): Wallet => ({ balance: w.balance, updatedAt: w.updated_at ?? '' }));

/**
 * The extension top-up quote (ours): the fee before confirming and, from a service that says them, the
 * figures around it and the refusal the top-up would meet now (as its text; the client reads it into a code).
 */
export const topupQuote = z
  .object({
    platform_fee_amount: money,
    total_charged: money,
    amount: money.optional(),
    category: optionalText,
    wallet_balance: money.optional(),
    deposit_available: money.optional(),
    max_amount: money.optional(),
    topup_cooldown_seconds: z.number().int().min(0).optional(),
    refusal: optionalText,
  })
  .transform((q) => ({
    platformFee: q.platform_fee_amount,
    totalCharged: q.total_charged,
    ...(q.amount === undefined ? {} : { amount: q.amount }),
    ...(q.category ? { category: q.category } : {}),
    ...(q.wallet_balance === undefined ? {} : { walletBalance: q.wallet_balance }),
    ...(q.deposit_available === undefined ? {} : { depositAvailable: q.deposit_available }),
    ...(q.max_amount === undefined ? {} : { maxAmount: q.max_amount }),
    ...(q.topup_cooldown_seconds === undefined ? {} : { cooldownSeconds: q.topup_cooldown_seconds }),
    ...(q.refusal ? { refusalText: q.refusal } : {}),
  }));
