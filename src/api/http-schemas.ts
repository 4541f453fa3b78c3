import { z } from 'zod';
import { paginationSchema } from '../interface/pagination.js';
import { AT_MOST_TWO_DECIMALS } from '../core/ledger/money.js';
import { CATEGORY_GROUP_NAMES } from '../core/authorization/categories.js';
import { CARD_TYPES } from '../core/rules/control-schemas.js';

/**
 * Path parameters, header and response shapes of the HTTP interface. Request bodies and the
 * transactions query are the core's own schemas (`core.schemas`); these only add what is HTTP's.
 * The response schemas document the API (OpenAPI) and type-check the presenters; they are not
 * re-validated per response.
 */

/** `{id}`: checked by the route (empty → `Card ID is required`, not a UUID → not found). */
export const cardIdParams = z.strictObject({ id: z.string().describe('Card id (UUID)') });

/** Endpoints without a body accept none, or an empty object. */
export const noBody = z.strictObject({}, { error: 'This endpoint takes no request body' }).nullish();

const money = z.number().describe(`USD, ${AT_MOST_TWO_DECIMALS}`);
const isoTime = z.string().describe('ISO 8601, UTC');

const validationIssue = z.object({
  code: z.string(),
  minimum: z.number().optional(),
  maximum: z.number().optional(),
  type: z.string().optional(),
  inclusive: z.boolean().optional(),
  exact: z.boolean().optional(),
  message: z.string(),
  path: z.array(z.union([z.string(), z.number()])),
});

export const errorEnvelope = z
  .object({
    success: z.literal(false),
    message: z.string().optional(),
    error: z.union([z.string(), z.array(validationIssue)]).optional(),
    timestamp: isoTime,
  })
  .describe('An error: text in `message` (in `error` for the OTP endpoints); validation items in `error`');

export function envelope<T extends z.ZodType>(data: T) {
  return z.object({ success: z.literal(true), data, message: z.string(), timestamp: isoTime });
}

export const health = z.object({ status: z.string(), environment: z.string(), timestamp: isoTime });

export const bin = z.object({
  id: z.string(),
  bin: z.string(),
  network: z.string(),
  threeDS: z.boolean(),
  wallet: z.boolean(),
  currency: z.string(),
  country: z.string(),
  initial_balance: money,
});

export const plan = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  limit: money,
  creation_fee: money,
  created_at: isoTime,
});

/** Extension: a card's spending controls; null is none. */
export const controls = z.object({
  per_purchase_limit: money.nullable(),
  daily_limit: money.nullable(),
  monthly_limit: money.nullable(),
  blocked_categories: z.array(z.enum(CATEGORY_GROUP_NAMES)).describe('merchant-category groups refused (docs/authorization.md)'),
});

/** Extension: `GET`/`PUT /cards/{id}/controls`: the controls and what they bound (UTC day and month). */
export const controlsView = controls.extend({ spent_today: money, spent_this_month: money });

/** The interface's earlier `auto_topup`. */
export const autoTopup = z.object({
  enabled: z.boolean(),
  min_balance: money,
  topup_amount: money,
  last_triggered: isoTime.nullable(),
});

export const card = z.object({
  id: z.string(),
  created_at: isoTime,
  updated_at: isoTime,
  category: z.string(),
  masked_PAN: z.string(),
  name: z.string(),
  balance: money,
  deposit: money,
  status: z.string().describe('`active`, `frozen`, `closed`; `Processing` while the card is being issued (its creation fee held)'),
  currency: z.string(),
  currency_short_name: z.string(),
  bin_id: z.string(),
  '3ds': z.boolean(),
  // Ours (issue 33): the card's type, controls, spending and auto top-up.
  type: z.enum(CARD_TYPES),
  controls,
  spent_today: money.describe('held and cleared purchases of this UTC day'),
  spent_this_month: money.describe('held and cleared purchases of this UTC month'),
  auto_topup: autoTopup,
});

export const createdCard = z.object({
  id: z.string(),
  category: z.string(),
  status: z.string(),
  balance: money,
  address: z.object({
    city: z.string(),
    line1: z.string(),
    line2: z.string().nullable(),
    state: z.string(),
    country: z.string(),
    postalCode: z.string(),
  }),
});

export const sensitiveDetails = z.object({
  id: z.string(),
  PAN: z.string(),
  CVV: z.string(),
  EXP: z.string(),
  masked_PAN: z.string(),
  name: z.string(),
});

export const topupResult = z.object({
  card_id: z.string(),
  transaction_id: z.string(),
  invoice_id: z.number(),
  wallet_balance: money,
  total_charged: money,
  platform_fee_amount: money,
  new_card_balance: money,
});

export const topupQuote = z.object({
  card_id: z.string(),
  category: z.string(),
  amount: money,
  platform_fee_amount: money,
  total_charged: money,
  wallet_balance: money,
  deposit_available: money,
  /** Seconds until the card's top-up cooldown has passed; 0 when none. */
  topup_cooldown_seconds: z.number().int().min(0),
  /** The largest top-up that the plan's limit and the wallet allow now (fee included), at most the top-up maximum. */
  max_amount: money.describe('the largest top-up the plan limit and the wallet allow now, fee included'),
  /** The refusal the top-up would meet now, in the operation's own words; absent when it would pass. */
  refusal: z
    .string()
    .optional()
    .describe(
      "the refusal the top-up would meet now, word for word as the top-up would answer it (the spec's section 7); absent when it would pass",
    ),
});

export const withdrawResult = z.object({
  card_id: z.string(),
  transaction_id: z.string(),
  invoice_id: z.number(),
  wallet_balance: money,
  new_card_balance: money,
  amount_withdrawn: money,
});

export const statusChange = z.object({ card_id: z.string(), status: z.string() });

export const closeResult = z.object({
  card_id: z.string(),
  balance_withdrawn: money,
  transaction_id: z.string().nullable(),
  invoice_id: z.number().nullable(),
  new_wallet_balance: money,
});

export const transactionPage = z.object({
  data: z.array(
    z.object({
      id: z.string(),
      card_id: z.string(),
      card_name: z.string(),
      status: z
        .string()
        .describe(
          '`Approved`, `Declined`; `Pending`: a held purchase (approved, not yet cleared) or a withdrawal or closure waiting on the provider (its amount held); `Reversed`: a hold voided or expired (its amount released)',
        ),
      side: z.string(),
      amount: money,
      currency: z.string(),
      type: z.string(),
      masked_pan: z.string(),
      merchant_name: z.string(),
      original_amount: money,
      original_currency: z.string(),
      decline_code: z.string().nullable(),
      transaction_created_at: isoTime,
      transaction_updated_at: isoTime,
    }),
  ),
  pagination: paginationSchema,
});

export const otpList = z.object({
  otps: z.array(
    z.object({
      id: z.string(),
      code: z.string(),
      amount: money,
      currency: z.string(),
      masked_pan: z.string(),
      card_name: z.string(),
      created_at: isoTime,
    }),
  ),
  cardInfo: z.object({ id: z.number().int(), nickname: z.string() }),
});

export const requestedOtp = z.object({
  message: z.string(),
  cardInfo: z.object({ id: z.string(), providerCardId: z.string(), name: z.string(), otp_code: z.string() }),
});

export const wallet = z.object({ balance: money, updated_at: isoTime });
