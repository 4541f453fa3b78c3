import { randomUUID } from 'node:crypto';
import { assertNoProblems, lithicDocument, lithicValidator, type Schema } from './lithic-openapi.js';

// What Lithic sends us, built from its document's own schemas: a sample of the schema's required fields (its
// examples where it gives them), the test's fields laid over it, and the whole checked with ajv against the
// webhook's schema, so a payload used in a test cannot drift from Lithic's.

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** Fields laid over the sample: objects merge, anything else replaces. */
export type Overrides = { [key: string]: unknown };

/** A value `schema` allows, made of its required fields only (its examples where it has them). */
export function sampleOf(schema: Schema, depth = 0): Json {
  const document = lithicDocument() as unknown as Schema;
  if (depth > 40) throw new Error('the schema is too deep to sample');
  if (typeof schema.$ref === 'string') {
    const target = schema.$ref
      .slice(2)
      .split('/')
      .reduce<unknown>((node, key) => (node as Schema)[key.replace(/~1/g, '/').replace(/~0/g, '~')], document) as Schema;
    return sampleOf({ ...target, ...withoutRef(schema) }, depth + 1);
  }
  if ('const' in schema) return schema.const as Json;
  if (Array.isArray(schema.allOf)) {
    const parts = (schema.allOf as Schema[]).map((part) => sampleOf(part, depth + 1));
    const own = withoutKeys(schema, ['allOf']);
    if (Object.keys(own).some((key) => key === 'properties' || key === 'type')) parts.push(sampleOf(own, depth + 1));
    return parts.reduce((merged: Json, part) => merge(merged, part), {} as Json);
  }
  const choices = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
  if (choices !== undefined) {
    const choice = choices.find((c) => c.type !== 'null') ?? choices[0]!;
    return sampleOf({ ...choice, ...withoutKeys(schema, ['oneOf', 'anyOf']) }, depth + 1);
  }
  if (Array.isArray(schema.enum)) return (schema.enum as Json[]).find((v) => v !== null) ?? null;
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : schema.type === undefined ? [] : [schema.type as string];
  const type = types.find((t) => t !== 'null') ?? (types.length > 0 ? 'null' : schema.properties ? 'object' : undefined);
  if (schema.example !== undefined && type !== 'object' && type !== 'array') return schema.example as Json;
  switch (type) {
    case 'null':
      return null;
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const required = (schema.required ?? []) as string[];
      return Object.fromEntries(required.map((name) => [name, properties[name] ? sampleOf(properties[name], depth + 1) : 'x']));
    }
    case 'array': {
      const count = (schema.minItems as number | undefined) ?? 0;
      return Array.from({ length: count }, () => sampleOf((schema.items ?? {}) as Schema, depth + 1));
    }
    case 'integer':
    case 'number':
      return (schema.minimum as number | undefined) ?? 0;
    case 'boolean':
      return false;
    case 'string':
      return sampleString(schema);
    default:
      return null;
  }
}

function sampleString(schema: Schema): string {
  switch (schema.format) {
    case 'uuid':
      return randomUUID();
    case 'date-time':
      return new Date().toISOString();
    case 'date':
      return new Date().toISOString().slice(0, 10);
    case 'uri':
      return 'https://example.com/';
    case 'email':
      return 'cardholder@example.com';
  }
  return 'x'.repeat((schema.minLength as number | undefined) ?? 1);
}

function withoutRef(schema: Schema): Schema {
  return withoutKeys(schema, ['$ref']);
}
function withoutKeys(schema: Schema, keys: string[]): Schema {
  return Object.fromEntries(Object.entries(schema).filter(([key]) => !keys.includes(key)));
}

function merge(base: Json, over: unknown): Json {
  if (isObject(base) && isObject(over)) {
    const merged: Record<string, Json> = { ...base };
    for (const [key, value] of Object.entries(over)) merged[key] = key in merged ? merge(merged[key]!, value) : (value as Json);
    return merged;
  }
  return over as Json;
}
const isObject = (value: unknown): value is Record<string, Json> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The webhook's payload schema sampled, `overrides` laid over it, checked against the document (throws on a drift). */
export function webhookPayload(eventType: string, overrides: Overrides = {}): Record<string, Json> {
  const schema = lithicDocument().webhooks[eventType]?.post.requestBody?.content?.['application/json']?.schema;
  if (schema === undefined) throw new Error(`the document has no webhook ${eventType}`);
  const payload = merge(sampleOf(schema), overrides) as Record<string, Json>;
  assertNoProblems(lithicValidator().webhook(eventType, payload), `the ${eventType} payload`);
  return payload;
}

/** A component schema sampled, `overrides` laid over it, checked against the document. */
export function schemaSample(name: string, overrides: Overrides = {}): Record<string, Json> {
  const schema = lithicDocument().components.schemas[name];
  if (schema === undefined) throw new Error(`the document has no schema ${name}`);
  const value = merge(sampleOf(schema), overrides) as Record<string, Json>;
  assertNoProblems(lithicValidator().schema(name, value), `the ${name} sample`);
  return value;
}

export interface Purchase {
  /** Lithic's card token (the card's provider id). */
  cardToken: string;
  /** Cents, as the cardholder pays them. */
  amount: number;
  descriptor?: string;
  mcc?: string;
  country?: string;
  /** The transaction's token (a new one when absent). */
  token?: string;
  created?: Date;
}

/** The merchant as the document shapes it (`merchant` in the ASA request and in `card_transaction`). */
function merchantOf(purchase: Purchase): Overrides {
  return {
    acceptor_id: '174030075991',
    descriptor: purchase.descriptor ?? 'COFFEE SHOP',
    mcc: purchase.mcc ?? '5812',
    city: 'NEW YORK',
    state: 'NY',
    country: purchase.country ?? 'USA',
  };
}

const amounts = (amount: number) => ({
  cardholder: { amount, conversion_rate: '1.000000', currency: 'USD' },
  hold: { amount, currency: 'USD' },
  merchant: { amount, currency: 'USD' },
  settlement: null,
});

/** Lithic's Auth Stream Access request (`card_authorization.approval_request`) for a purchase. */
export function asaRequest(purchase: Purchase, overrides: Overrides = {}): Record<string, Json> {
  return webhookPayload('card_authorization.approval_request', {
    token: purchase.token ?? randomUUID(),
    status: 'AUTHORIZATION',
    created: (purchase.created ?? new Date()).toISOString(),
    amount: purchase.amount,
    authorization_amount: purchase.amount,
    merchant_amount: purchase.amount,
    settled_amount: 0,
    cardholder_currency: 'USD',
    merchant_currency: 'USD',
    amounts: amounts(purchase.amount),
    card: { token: purchase.cardToken },
    merchant: merchantOf(purchase),
    ...overrides,
  });
}

/** One event of a card transaction, as `card_transaction.events[]` carries it. */
export interface TransactionEvent {
  type: 'AUTHORIZATION' | 'CLEARING' | 'AUTHORIZATION_REVERSAL' | 'RETURN' | 'AUTHORIZATION_ADVICE' | 'FINANCIAL_AUTHORIZATION';
  amount: number;
  result?: string;
  created?: Date;
  token?: string;
}

/** `card_transaction.updated` for a purchase that went through `events` (the last one is the update). */
export function cardTransactionUpdated(
  purchase: Purchase & { token: string; status: string; settled?: number },
  events: TransactionEvent[],
  overrides: Overrides = {},
): Record<string, Json> {
  const created = (purchase.created ?? new Date()).toISOString();
  return webhookPayload('card_transaction.updated', {
    token: purchase.token,
    card_token: purchase.cardToken,
    status: purchase.status,
    result: 'APPROVED',
    amount: purchase.amount,
    authorization_amount: purchase.amount,
    merchant_amount: purchase.amount,
    merchant_authorization_amount: purchase.amount,
    merchant_currency: 'USD',
    settled_amount: purchase.settled ?? 0,
    amounts: { ...amounts(purchase.amount), settlement: { amount: purchase.settled ?? 0, currency: 'USD' } },
    merchant: merchantOf(purchase),
    created,
    updated: (events.at(-1)?.created ?? new Date()).toISOString(),
    events: events.map((event) =>
      schemaSample('transaction_event', {
        token: event.token ?? randomUUID(),
        type: event.type,
        amount: event.amount,
        result: event.result ?? 'APPROVED',
        created: (event.created ?? new Date()).toISOString(),
        amounts: {
          cardholder: { amount: event.amount, conversion_rate: '1.000000', currency: 'USD' },
          merchant: { amount: event.amount, currency: 'USD' },
          settlement: event.type === 'CLEARING' ? { amount: event.amount, currency: 'USD' } : null,
        },
      }),
    ),
    ...overrides,
  });
}

/** `three_ds_authentication.challenge`: Lithic asks us to challenge the cardholder out of band. */
export function threeDsChallenge(
  challenge: { cardToken: string; token?: string; amount: number; merchant: string; expiry: Date },
  overrides: Overrides = {},
): Record<string, Json> {
  return webhookPayload('three_ds_authentication.challenge', {
    authentication_object: {
      token: challenge.token ?? randomUUID(),
      card_token: challenge.cardToken,
      merchant: { name: challenge.merchant },
      transaction: {
        amount: challenge.amount,
        cardholder_amount: challenge.amount,
        currency: 'USD',
        currency_exponent: 2,
        date_time: new Date().toISOString(),
        type: 'GOODS_SERVICE_PURCHASE',
      },
    },
    challenge: { expiry_time: challenge.expiry.toISOString() },
    ...overrides,
  });
}

/**
 * `tokenization.two_factor_authentication_code` (or its older twin `digital_wallet.…`, which Lithic still sends):
 * the code a digital wallet asks the cardholder for.
 */
export function tokenizationCode(
  code: { cardToken: string; authenticationCode: string; tokenizationToken?: string },
  overrides: Overrides = {},
  eventType:
    | 'tokenization.two_factor_authentication_code'
    | 'digital_wallet.tokenization_two_factor_authentication_code' = 'tokenization.two_factor_authentication_code',
): Record<string, Json> {
  return webhookPayload(eventType, {
    card_token: code.cardToken,
    authentication_code: code.authenticationCode,
    ...(code.tokenizationToken === undefined ? {} : { tokenization_token: code.tokenizationToken }),
    ...overrides,
  });
}

/**
 * The JSON body of an operation's documented response sampled, `overrides` laid over it, checked against the
 * document (what the fake Lithic answers).
 */
export function responseSample(method: string, concretePath: string, status: number, overrides: Overrides = {}): Record<string, Json> {
  const validator = lithicValidator();
  const template = validator.template(method, concretePath);
  if (template === undefined) throw new Error(`the document has no ${method} ${concretePath}`);
  const document = lithicDocument();
  let response = document.paths[template]![method.toLowerCase()]!.responses?.[String(status)] as Schema | undefined;
  if (typeof response?.$ref === 'string') response = document.components.responses[response.$ref.split('/').pop()!];
  const schema = (response?.content as Record<string, { schema?: Schema }> | undefined)?.['application/json']?.schema;
  if (schema === undefined) throw new Error(`${method} ${template} documents no JSON body for ${status}`);
  const body = merge(sampleOf(schema), overrides) as Record<string, Json>;
  assertNoProblems(validator.response(method, concretePath, status, body), `the answer to ${method} ${template}`);
  return body;
}
