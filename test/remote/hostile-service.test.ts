import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { CardServiceError } from '../../src/core/rules/errors.js';
import { createLogger } from '../../src/infra/logger.js';
import { createRemoteCardClient, OutcomeUnknownError, ServiceUnavailableError } from '../../src/remote/client.js';
import { serviceHealth } from '../../src/remote/service-health.js';

// Issue 31, item 3: a hostile or broken card service cannot hurt the bot. Its answers are read up to a size
// and their lists up to a count, no redirect is followed, and a card id is a UUID both ways.

interface Seen {
  method: string;
  path: string;
  body: string;
}

/** A service on 127.0.0.1 whose every answer the test writes; it records what it was asked. */
class ScriptedService {
  readonly seen: Seen[] = [];
  /** What the service does with a request; by default an empty success. */
  answer: (request: Seen, response: ServerResponse) => void = (_r, response) => json(response, 200, { success: true, data: {} });
  private server?: Server;

  async listen(): Promise<this> {
    this.server = createServer((request: IncomingMessage, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const seen = { method: request.method ?? '', path: request.url ?? '', body: Buffer.concat(chunks).toString('utf8') };
        this.seen.push(seen);
        this.answer(seen, response);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}

function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

const CARD = '6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b';
const cardRecord = (id: string) => ({ id, name: 'Ads', masked_PAN: '531993******1234', balance: 10, status: 'active' });
const transaction = (i: number, cardId = CARD) => ({
  id: `tx-${i}`,
  card_id: cardId,
  side: 'Debit',
  amount: 1,
  status: 'Approved',
  merchant_name: 'Shop',
  transaction_created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
});
const pagination = (total: number) => ({ page: 1, limit: 100, total, totalPages: 1, hasNext: false, hasPrev: false });

describe('a hostile or broken card service cannot hurt the bot', () => {
  let service: ScriptedService;
  let elsewhere: ScriptedService;
  before(async () => {
    service = await new ScriptedService().listen();
    elsewhere = await new ScriptedService().listen();
  });
  after(async () => {
    await service.close();
    await elsewhere.close();
  });
  const client = (options: { timeoutMs?: number } = {}) =>
    createRemoteCardClient({ baseUrl: service.url, timeoutMs: options.timeoutMs ?? 5_000, retryDelayMs: 1, getRetries: 0 });

  test('an answer over 1 MiB is not read: declared or streamed, it is given up as unavailable', async () => {
    const me = client().as('t');
    // 3 MiB of well-formed JSON with its length declared: read whole and believed until now.
    const padding = 'x'.repeat(3 * 1024 * 1024);
    service.answer = (_r, response) => json(response, 200, { success: true, data: { balance: 12.5, padding } });
    await assert.rejects(me.walletBalance(), (error: unknown) => {
      assert.ok(error instanceof ServiceUnavailableError, String(error));
      assert.match(error.message, /over 1048576 bytes/);
      return true;
    });
    // No length declared, and no end: the reading stops past the cap, long before the request's timeout.
    let written = 0;
    let closedEarly = false;
    service.answer = (_r, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"success":true,"data":{"balance":1,"padding":"');
      const chunk = 'y'.repeat(64 * 1024);
      const pump = () => {
        while (!response.destroyed && written < 200 * 1024 * 1024) {
          written += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
      };
      response.on('close', () => {
        closedEarly = written < 200 * 1024 * 1024;
      });
      pump();
    };
    const started = performance.now();
    await assert.rejects(client({ timeoutMs: 20_000 }).as('t').walletBalance(), /over 1048576 bytes/);
    assert.ok(performance.now() - started < 5_000, 'given up at the cap, not at the timeout');
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(closedEarly, `the connection was closed after ${written} bytes`);
  });

  test("a list's items are read up to the interface's maximum: a page of transactions, an OTP list", async () => {
    const me = client().as('t');
    service.answer = (request, response) => {
      if (request.path.startsWith('/api/v1/cards/transactions'))
        return json(response, 200, {
          success: true,
          data: { data: Array.from({ length: 5_000 }, (_, i) => transaction(i)), pagination: pagination(5_000) },
        });
      json(response, 200, {
        success: true,
        data: {
          otps: Array.from({ length: 3_000 }, (_, i) => ({
            id: `otp-${i}`,
            code: String(100_000 + i),
            amount: 1,
            created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, i)).toISOString(),
          })),
        },
      });
    };
    const page = await me.listTransactions();
    assert.equal(page.data.length, 100, 'a page holds 100 transactions at most (spec 4.12)');
    const { otps } = await me.listOtps(CARD);
    assert.equal(otps.length, 100);
    // The newest codes are the ones kept: a card flooded with codes still shows its latest.
    assert.ok(otps.some((o) => o.code === String(100_000 + 2_999)));
    assert.ok(!otps.some((o) => o.code === '100000'));
  });

  test('no redirect is followed: a POST body is not sent to another host, and its answer is not believed', async () => {
    const me = client().as('t');
    elsewhere.answer = (_r, response) =>
      json(response, 200, {
        success: true,
        data: { card_id: CARD, transaction_id: randomUUID(), platform_fee_amount: 0, total_charged: 0, new_card_balance: 1_000_000 },
      });
    for (const status of [307, 308, 302]) {
      service.answer = (_r, response) => {
        response.writeHead(status, { location: `${elsewhere.url}/api/v1/cards/${CARD}/topup` });
        response.end();
      };
      await assert.rejects(me.topup(CARD, 2_500), (error: unknown) => {
        assert.ok(error instanceof ServiceUnavailableError, `HTTP ${status}: ${String(error)}`);
        assert.equal(error.status, status);
        return true;
      });
      // A GET is not followed either.
      await assert.rejects(me.walletBalance(), ServiceUnavailableError);
    }
    assert.deepEqual(elsewhere.seen, [], 'nothing reached the other host');
    assert.ok(service.seen.some((r) => r.method === 'POST' && r.body.includes('25')));
  });

  test("readiness's probe of a service that is down follows no redirect either", async () => {
    const health = serviceHealth({ baseUrl: service.url, logger: createLogger('silent'), timeoutMs: 2_000 });
    health.unavailable(new Error('down'));
    elsewhere.answer = (_r, response) => json(response, 200, { success: true, data: { status: 'healthy' } });
    service.answer = (_r, response) => {
      response.writeHead(307, { location: `${elsewhere.url}/api/v1/health` });
      response.end();
    };
    const before = elsewhere.seen.length;
    assert.equal(await health.ready(), false);
    assert.equal(elsewhere.seen.length, before);
    service.answer = (_r, response) => json(response, 401, { success: false, message: 'Unauthorized' });
    assert.equal(await health.ready(), true);
  });

  test('card ids the service gives are UUIDs, or they are not taken', async () => {
    const me = client().as('t');
    for (const bad of ['..', '../freeze', 'a:b', 'x'.repeat(300), 42]) {
      service.answer = (_r, response) => json(response, 200, { success: true, data: cardRecord(bad as string) });
      await assert.rejects(me.getCard(CARD), ServiceUnavailableError, `a card record with id ${String(bad).slice(0, 20)}`);
    }
    // In a list, the item with such an id is left out; the others stay.
    service.answer = (_r, response) =>
      json(response, 200, {
        success: true,
        data: { data: [transaction(1), transaction(2, '../freeze'), transaction(3, 'a:b'), transaction(4)], pagination: pagination(4) },
      });
    assert.deepEqual(
      (await me.listTransactions()).data.map((t) => t.id),
      ['tx-1', 'tx-4'],
    );
    service.answer = (request, response) =>
      request.path === '/api/v1/cards'
        ? json(response, 200, { success: true, data: [cardRecord(CARD), cardRecord('..'), cardRecord('1:2')] })
        : json(response, 404, { success: false, message: 'Not Found' });
    assert.deepEqual(
      (await me.listCards())?.map((c) => c.id),
      [CARD],
    );
    // The answer to a movement names a card id of another shape: whether it was done is not known.
    service.answer = (_r, response) =>
      json(response, 200, {
        success: true,
        data: { card_id: '..', transaction_id: randomUUID(), platform_fee_amount: 0, total_charged: 25, new_card_balance: 25 },
      });
    await assert.rejects(me.topup(CARD, 2_500), OutcomeUnknownError);
  });

  test('a card id the client is asked to use is a UUID, or nothing is sent', async () => {
    const me = client().as('t');
    service.answer = (_r, response) => json(response, 200, { success: true, data: { card_id: CARD, status: 'frozen' } });
    const before = service.seen.length;
    const bad = ['..', '../..', 'a:b', `${CARD}:x`, `${CARD}/freeze`, 'x'.repeat(300), '', CARD.replace(/-/g, '')];
    for (const id of bad) {
      for (const call of [
        () => me.freeze(id),
        () => me.unfreeze(id),
        () => me.close(id),
        () => me.getCard(id),
        () => me.details(id),
        () => me.topup(id, 500),
        () => me.withdraw(id, 500),
        () => me.quoteTopup(id, 500),
        () => me.listOtps(id),
        () => me.requestOtp(id),
        () => me.listTransactions({ cardId: id }),
      ]) {
        await assert.rejects(call(), (error: unknown) => {
          assert.ok(error instanceof CardServiceError, `${JSON.stringify(id.slice(0, 40))}: ${String(error)}`);
          assert.equal(error.code, 'CARD_NOT_FOUND');
          return true;
        });
      }
    }
    assert.deepEqual(service.seen.slice(before), [], 'no request was made');
    // A UUID in capitals is one too.
    assert.equal((await me.freeze(CARD.toUpperCase())).status, 'frozen');
  });
});
