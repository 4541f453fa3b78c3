import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { canonicalJson, lithicHmac } from '../../src/api/routes/lithic-asa.js';
import type { LithicRoutesOptions } from '../../src/api/routes/lithic.js';
import { createHttpServer } from '../../src/api/server.js';
import { createLogger } from '../../src/infra/logger.js';
import { type Customer, createTestCore, newCard, newCustomer, type TestCore } from './core.js';

// Lithic's routes served over a test core for the route tests (test/api/lithic-*.test.ts), and Lithic's two
// signatures: `X-Lithic-HMAC` on an ASA request, Standard Webhooks on an event. The payloads themselves come from
// the document's schemas (./lithic-payloads.ts).

export const ASA_SECRET = 'asa-secret-for-tests';
export const WEBHOOK_SECRET = `whsec_${Buffer.from('webhook-secret-for-tests-32bytes').toString('base64')}`;

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

/** The balance of the card `startLithicApi` issued, read from its account. */
export async function cardBalanceOf(api: LithicApi): Promise<number> {
  const row = await api.t.database.db
    .selectFrom('cards')
    .innerJoin('accounts', 'accounts.id', 'cards.account_id')
    .select('accounts.balance')
    .where('cards.id', '=', api.cardId)
    .executeTakeFirstOrThrow();
  return Number(row.balance);
}
