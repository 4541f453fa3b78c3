import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { canonicalJson, lithicHmac } from '../../src/api/routes/lithic-asa.js';
import { createHttpServer } from '../../src/api/server.js';
import type { LithicRoutesOptions } from '../../src/api/routes/lithic.js';
import { createLogger } from '../../src/infra/logger.js';
import { createTestCore, newCard, newCustomer, type Customer, type TestCore } from '../helpers/core.js';
import { assertNoProblems, lithicValidator } from '../helpers/lithic-openapi.js';

// Lithic's ASA requests and event payloads for the route tests, built field by field from the document's schemas
// and checked against them (ajv), so they cannot drift from Lithic's; and a server with Lithic's routes on a card.

export const ASA_SECRET = 'asa-secret-for-tests';
export const WEBHOOK_SECRET = `whsec_${Buffer.from('webhook-secret-for-tests-32bytes').toString('base64')}`;

export interface AsaOptions {
  cardToken: string;
  amount: number;
  status?: 'AUTHORIZATION' | 'FINANCIAL_AUTHORIZATION' | 'CREDIT_AUTHORIZATION' | 'FINANCIAL_CREDIT_AUTHORIZATION' | 'BALANCE_INQUIRY';
  token?: string;
  eventToken?: string;
  created: Date;
  descriptor?: string;
  mcc?: string;
  country?: string;
}

/** An ASA request (`#/components/schemas/authorization`), valid against the document. */
export function asaRequest(o: AsaOptions): Record<string, unknown> {
  const usd = (amount: number) => ({ amount, currency: 'USD' });
  const request = {
    token: o.token ?? randomUUID(),
    ...(o.eventToken === undefined ? {} : { event_token: o.eventToken }),
    status: o.status ?? 'AUTHORIZATION',
    created: o.created.toISOString(),
    acquirer_fee: 0,
    amount: o.amount,
    authorization_amount: o.amount,
    merchant_amount: o.amount,
    settled_amount: 0,
    cash_amount: 0,
    cardholder_currency: 'USD',
    merchant_currency: 'USD',
    amounts: { cardholder: { ...usd(o.amount), conversion_rate: '1.000000' }, merchant: usd(o.amount), settlement: null, hold: null },
    avs: { address: '', zipcode: '', address_on_file_match: 'NOT_PRESENT' },
    card: {
      token: o.cardToken,
      last_four: '4242',
      memo: 'Ads',
      spend_limit: 0,
      spend_limit_duration: 'FOREVER',
      state: 'OPEN',
      type: 'VIRTUAL',
    },
    merchant: merchant(o),
    name_validation: null,
    service_location: null,
    transaction_initiator: 'CARDHOLDER',
  };
  assertNoProblems(lithicValidator().schema('authorization', request), 'the ASA request');
  return request;
}

function merchant(o: { descriptor?: string; mcc?: string; country?: string }) {
  return {
    acceptor_id: '333301802529120',
    acquiring_institution_id: '191231',
    city: 'NEW YORK',
    country: o.country ?? 'USA',
    descriptor: o.descriptor ?? 'COFFEE SHOP',
    mcc: o.mcc ?? '5812',
    state: 'NY',
    postal_code: '10001',
    street_address: null,
    phone_number: null,
  };
}

export interface TransactionEventOptions {
  type: string;
  amount: number;
  created: Date;
  result?: string;
  token?: string;
}

/** A `card_transaction.updated` payload (the document's webhook schema) with these events. */
export function cardTransactionUpdated(o: {
  token: string;
  cardToken: string;
  created: Date;
  events: TransactionEventOptions[];
  descriptor?: string;
}) {
  const events = o.events.map((e) => ({
    token: e.token ?? randomUUID(),
    type: e.type,
    result: e.result ?? 'APPROVED',
    created: e.created.toISOString(),
    amount: e.amount,
    amounts: {
      cardholder: { amount: e.amount, conversion_rate: '1.000000', currency: 'USD' },
      merchant: { amount: e.amount, currency: 'USD' },
      settlement: null,
    },
    detailed_results: ['APPROVED'],
    effective_polarity: e.type === 'RETURN' ? 'CREDIT' : 'DEBIT',
    rule_results: [],
    network_info: null,
  }));
  const last = o.events.at(-1)!;
  const payload = {
    event_type: 'card_transaction.updated',
    token: o.token,
    account_token: randomUUID(),
    card_token: o.cardToken,
    created: o.created.toISOString(),
    updated: last.created.toISOString(),
    acquirer_fee: 0,
    acquirer_reference_number: null,
    amount: last.amount,
    amounts: {
      cardholder: { amount: last.amount, conversion_rate: '1.000000', currency: 'USD' },
      hold: { amount: 0, currency: 'USD' },
      merchant: { amount: last.amount, currency: 'USD' },
      settlement: { amount: 0, currency: 'USD' },
    },
    authorization_amount: last.amount,
    authorization_code: '123456',
    avs: null,
    cardholder_authentication: null,
    events,
    financial_account_token: null,
    merchant: merchant({ descriptor: o.descriptor }),
    service_location: null,
    merchant_amount: last.amount,
    merchant_authorization_amount: last.amount,
    merchant_currency: 'USD',
    network: 'VISA',
    network_risk_score: null,
    result: 'APPROVED',
    pos: posOf(),
    settled_amount: 0,
    status: 'PENDING',
    token_info: null,
    tags: {},
  };
  return checked('card_transaction.updated', payload);
}

function posOf() {
  return {
    entry_mode: { card: 'NOT_PRESENT', cardholder: 'NOT_PRESENT', pan: 'ECOMMERCE', pin_entered: false },
    terminal: {
      attended: false,
      card_retention_capable: false,
      on_premise: false,
      operator: 'UNKNOWN',
      partial_approval_capable: false,
      pin_capability: 'NOT_CAPABLE',
      type: 'UNKNOWN',
      acceptor_terminal_id: null,
    },
  };
}

/** A webhook payload checked against the document's schema for its event type (the problems listed when not). */
export function checked<T>(eventType: string, payload: T): T {
  assertNoProblems(lithicValidator().webhook(eventType, payload), `the ${eventType} payload`);
  return payload;
}

/** `X-Lithic-HMAC` as Lithic computes it: over the canonical JSON. */
export const asaSignature = (body: unknown, secret = ASA_SECRET) => lithicHmac(secret, canonicalJson(body));

/** Standard Webhooks headers for a payload, signed now (the library reads the real clock). */
export function webhookHeaders(
  body: string,
  id = `msg_${randomUUID()}`,
  at = new Date(),
  secret: string | Uint8Array = WEBHOOK_SECRET,
): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret, typeof secret === 'string' ? {} : { format: 'raw' }).sign(id, at, body),
  };
}

export interface LithicApi {
  t: TestCore;
  baseUrl: string;
  alice: Customer;
  cardId: string;
  cardToken: string;
  post(path: string, body: string, headers: Record<string, string>): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/** A test core with Lithic's routes, Alice funded, and one card whose provider id is a Lithic card token. */
export async function startLithicApi(options: Partial<LithicRoutesOptions> = {}, core?: TestCore): Promise<LithicApi> {
  const t = core ?? (await createTestCore());
  const app = createHttpServer({
    core: t.core,
    db: t.database.db,
    logger: createLogger('silent'),
    clock: t.clock,
    lithic: { asaSecret: ASA_SECRET, webhookSecret: WEBHOOK_SECRET, ...options },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const alice = await newCustomer(t, 100_000, 'Alice');
  const card = await newCard(t, alice);
  await t.core.topup(alice.caller, card.id, t.core.schemas.topup.parse({ amount: 100 }));
  const cardToken = randomUUID();
  await t.database.db.updateTable('cards').set({ provider_card_id: cardToken }).where('id', '=', card.id).execute();
  return {
    t,
    baseUrl,
    alice,
    cardId: card.id,
    cardToken,
    async post(path, body, headers) {
      const response = await fetch(baseUrl + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
      const text = await response.text();
      return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
    },
    async close() {
      await app.close();
      await t.close();
    },
  };
}
