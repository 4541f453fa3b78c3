import { getOrCreate } from '../../infra/get-or-create.js';
import { z } from 'zod';
import { CardServiceError, type ValidationIssue } from './errors.js';
import { AT_MOST_TWO_DECIMALS, formatAmount, hasAtMostTwoDecimals, toAmount, toCents, type Cents } from '../ledger/money.js';
import { amountBoundsRefusal } from './rules.js';
import type { CoreSettings } from '../settings.js';
import { CARD_TYPES, controlSchemas } from './control-schemas.js';

/** The page numbers `GET /cards/transactions` accepts; the schema, the core's guard and the OpenAPI document read them. */
export const PAGE_NUMBER = { min: 1, max: 1_000_000 } as const;
/** The smallest page size; the largest is the `pageSizeMax` setting. */
export const PAGE_SIZE_MIN = 1;

/**
 * The request schemas of the interface, shared by every edge: the HTTP layer validates with them
 * (and documents them in OpenAPI), the bot parses typed-in amounts with them. Amounts arrive as the
 * spec's decimal numbers and leave as integer cents.
 */
export function createInputSchemas(settings: CoreSettings) {
  const amount = (opts: { min: Cents; max: Cents; minText: string; maxText: string }) =>
    z
      .number({ error: (issue) => (issue.input === undefined ? 'Amount is required' : 'Amount must be a number') })
      .min(toAmount(opts.min), { error: opts.minText })
      .max(toAmount(opts.max), { error: opts.maxText })
      .refine(hasAtMostTwoDecimals, { error: `Amount must have ${AT_MOST_TWO_DECIMALS}` })
      // Not `multipleOf: 0.01`: standard validators test that in binary floating point and refuse 19.4.
      .meta({ description: `USD, ${AT_MOST_TWO_DECIMALS} (a third decimal is refused however small)` })
      .transform((value) => toCents(value) as Cents);

  const topup = z.strictObject({
    amount: amount({
      min: settings.topupMin,
      max: settings.topupMax,
      minText: `Minimum top-up amount is ${toAmount(settings.topupMin)}`,
      maxText: `Maximum top-up amount is ${toAmount(settings.topupMax)}`,
    }),
  });

  const withdraw = z.strictObject({
    amount: amount({
      min: settings.withdrawMin,
      max: settings.withdrawMax,
      minText: `Minimum withdrawal amount is ${formatAmount(settings.withdrawMin)}`,
      maxText: `Maximum withdrawal amount is ${formatAmount(settings.withdrawMax)}`,
    }),
  });

  /** A required field: "<Name> is required" when missing, `wrongType` when present but of another type. */
  const required = (name: string, wrongType: string) => ({
    error: (issue: { input?: unknown }) => (issue.input === undefined ? `${name} is required` : wrongType),
  });

  const createCard = z.strictObject({
    bin_id: z
      .string(required('BIN ID', 'BIN ID must be a string'))
      .min(1, { error: 'BIN ID is required' })
      .max(64, { error: 'BIN ID must be at most 64 characters' }),
    name: z
      .string(required('Card name', 'Card name must be a string'))
      .trim()
      .min(1, { error: 'Card name is required' })
      .max(255, { error: 'Card name must be at most 255 characters' }),
    planId: z
      .number(required('Plan ID', 'Plan ID must be an integer'))
      .int({ error: 'Plan ID must be an integer' })
      .min(1, { error: 'Plan ID must be a positive integer' })
      .max(2_147_483_647, { error: 'Plan ID is out of range' }),
    coupon_id: z
      .string({ error: 'Coupon ID must be a string' })
      .min(1, { error: 'Coupon ID must not be empty' })
      .max(64, { error: 'Coupon ID must be at most 64 characters' })
      .optional(),
    type: z
      .enum(CARD_TYPES, { error: `Card type must be one of: ${CARD_TYPES.join(', ')}` })
      .optional()
      .describe('`multi_use` (default), `single_use` (closed after its first cleared purchase), `merchant_locked` (to its first merchant)'),
  });

  const wholeNumber = (name: string, min: number, max: number) =>
    z
      .string({ error: `${name} must be given once` })
      .regex(/^\d+$/, { error: `${name} must be a whole number` })
      .transform(Number)
      .pipe(
        z
          .number()
          .min(min, { error: `${name} must be at least ${min}` })
          .max(max, { error: `${name} must be at most ${max}` }),
      )
      // Documented as the integer it stands for, as query parameters are (it arrives as text).
      .meta({ type: 'integer', minimum: min, maximum: max, pattern: undefined });

  const transactionsQuery = z.strictObject({
    page: wholeNumber('page', PAGE_NUMBER.min, PAGE_NUMBER.max)
      .optional()
      .describe(`Page number, ${PAGE_NUMBER.min} to ${PAGE_NUMBER.max}; default 1`),
    limit: wholeNumber('limit', PAGE_SIZE_MIN, settings.pageSizeMax)
      .optional()
      .describe(`Items per page, ${PAGE_SIZE_MIN} to ${settings.pageSizeMax}; default ${settings.pageSizeDefault}`),
    card_id: z.string({ error: 'card_id must be given once' }).optional(),
  });

  return { topup, withdraw, createCard, transactionsQuery, ...controlSchemas(settings) };
}

export type InputSchemas = ReturnType<typeof createInputSchemas>;
export type CreateCardInput = z.output<InputSchemas['createCard']>;
export type AmountInput = z.output<InputSchemas['topup']>;
export type TransactionsQuery = z.output<InputSchemas['transactionsQuery']>;

/**
 * The issues that name a bound, and the field of the spec's item that carries it: the core fills the items
 * from it (`toValidationIssue`), the bot reads the bound back with it for its texts.
 */
export const ISSUE_BOUNDS = { too_small: 'minimum', too_big: 'maximum' } as const;
export type BoundIssueCode = keyof typeof ISSUE_BOUNDS;

/** Whether an item's code is one of `ISSUE_BOUNDS`. */
export const isBoundIssue = (code: string): code is BoundIssueCode => Object.hasOwn(ISSUE_BOUNDS, code);

/** A zod issue in the spec's item shape: code, minimum/maximum, type, inclusive, exact, message, path. */
export function toValidationIssue(issue: z.core.$ZodIssue): ValidationIssue {
  const path = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
  switch (issue.code) {
    case 'too_small':
    case 'too_big':
      return {
        code: issue.code,
        [ISSUE_BOUNDS[issue.code]]: Number('minimum' in issue ? issue.minimum : issue.maximum),
        type: issue.origin,
        inclusive: issue.inclusive ?? true,
        exact: issue.exact ?? false,
        message: issue.message,
        path,
      };
    case 'invalid_type':
      // Zod says `int` for an integer expected; the spec's items name JSON types.
      return { code: issue.code, type: issue.expected === 'int' ? 'number' : issue.expected, message: issue.message, path };
    default:
      return { code: issue.code, message: issue.message, path };
  }
}

/** The spec's items; an unknown field is one item per field, in our words rather than the library's. */
export function validationError(error: z.ZodError): CardServiceError<'VALIDATION'> {
  const issues = error.issues.flatMap((issue): ValidationIssue[] =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ code: issue.code, message: `Unknown field: ${key}`, path: [...toValidationIssue(issue).path, key] }))
      : [toValidationIssue(issue)],
  );
  return new CardServiceError('VALIDATION', { issues });
}

/** Parses `raw` with `schema`, or throws the core's validation error. */
export function parseInput<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const result = schema.safeParse(raw);
  if (!result.success) throw validationError(result.error);
  return result.data;
}

/**
 * The core re-checks what the edges parse, so a caller that skips the schemas (a script, a new edge)
 * still cannot pass a limit. In-range integers pass at once; anything else is parsed with the same
 * schemas for the spec's refusal. One set per settings object.
 */
export function inputGuards(settings: CoreSettings) {
  return getOrCreate(guardsBySettings, settings, () => createInputGuards(settings));
}

const guardsBySettings = new WeakMap<CoreSettings, ReturnType<typeof createInputGuards>>();

function createInputGuards(settings: CoreSettings) {
  const schemas = createInputSchemas(settings);
  const within = (value: number | undefined, min: number, max: number) =>
    value === undefined || (Number.isSafeInteger(value) && value >= min && value <= max);
  return {
    schemas,
    topup(amount: Cents): void {
      const refused = amountBoundsRefusal(amount, { min: settings.topupMin, max: settings.topupMax, schema: schemas.topup });
      if (refused) throw refused;
    },
    withdraw(amount: Cents): void {
      const refused = amountBoundsRefusal(amount, { min: settings.withdrawMin, max: settings.withdrawMax, schema: schemas.withdraw });
      if (refused) throw refused;
    },
    createCard(input: CreateCardInput): void {
      parseInput(schemas.createCard, input);
    },
    transactionsQuery({ page, limit, card_id }: TransactionsQuery): void {
      if (within(page, PAGE_NUMBER.min, PAGE_NUMBER.max) && within(limit, PAGE_SIZE_MIN, settings.pageSizeMax)) return;
      parseInput(schemas.transactionsQuery, {
        ...(page === undefined ? {} : { page: String(page) }),
        ...(limit === undefined ? {} : { limit: String(limit) }),
        ...(card_id === undefined ? {} : { card_id }),
      });
    },
  };
}
