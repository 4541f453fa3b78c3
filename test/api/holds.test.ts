import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { newCard, newCustomer, type Customer } from '../helpers/core.js';
import { type HeldOperation, holdNextCall } from '../helpers/holds.js';
import { type ApiResponse, assertFailure, assertSuccess, startTestApi, type TestApi } from '../helpers/http.js';
import { coreOn, type Dialect, dialects } from '../core/dialects.js';

// Item 10 of the second trust round, read over HTTP: while the provider is asked, the card (4.5) and its
// statement (4.12) show the hold as a `Pending` line the balance agrees with.

interface Line {
  id: string;
  status: string;
  side: string;
  type: string;
  amount: number;
}

const cents = (dollars: number) => Math.round(dollars * 100);

/**
 * A served core of the dialect and a customer with a card holding $50.00. `during(operation, request)`
 * holds the provider's next call of `operation` (`holdNextCall`) and sends `request`, whose reply is
 * `answer`. When the test ends, a call still held is refused and its reply awaited: the server waits for
 * a connection busy at its close for the whole keep-alive timeout.
 */
async function servedCard(ctx: TestContext, dialect: Dialect) {
  const api = await startTestApi({ core: await coreOn(dialect) });
  const held: { release(refusal?: string): void; answer: Promise<ApiResponse> }[] = [];
  ctx.after(async () => {
    for (const call of held) call.release('test ended');
    await Promise.allSettled(held.map((call) => call.answer));
    await api.close();
  });
  const alice = await newCustomer(api.t, 100_000);
  const card = await newCard(api.t, alice);
  await api.t.core.topup(alice.caller, card.id, { amount: 5_000 });
  const during = (operation: HeldOperation, request: () => Promise<ApiResponse>) => {
    const call = { ...holdNextCall(api.t, operation), answer: request() };
    held.push(call);
    return call;
  };
  return { api, alice, cardId: card.id, during };
}

/** The card and its statement as a client reads them, and the balance's agreement with the statement. */
async function readCard(api: TestApi, alice: Customer, cardId: string) {
  const card = assertSuccess(await api.call('GET', `/api/v1/cards/${cardId}`, { token: alice.token }));
  const page = assertSuccess(await api.call('GET', `/api/v1/cards/transactions?card_id=${cardId}&limit=100`, { token: alice.token }));
  const lines = page.data as Line[];
  const sum = lines.filter((l) => l.status !== 'Declined').reduce((s, l) => s + (l.side === 'Credit' ? 1 : -1) * cents(l.amount), 0);
  assert.equal(cents(card.balance), sum, 'the balance is what the Approved and Pending lines sum to');
  assert.equal(page.pagination.total, lines.length);
  return { card, lines };
}

for (const dialect of dialects()) {
  describe(`a hold read over HTTP (${dialect})`, () => {
    test('a withdrawal held at the provider: GET the card and its transactions shows a Pending line and the lowered balance; settled, the line is Approved', async (ctx) => {
      const { api, alice, cardId, during } = await servedCard(ctx, dialect);
      const before = await readCard(api, alice, cardId);
      const call = during('withdraw', () =>
        api.call('POST', `/api/v1/cards/${cardId}/withdraw`, { token: alice.token, body: { amount: 10 } }),
      );
      await call.reached;

      const held = await readCard(api, alice, cardId);
      assert.equal(held.card.balance, 40);
      assert.equal(held.lines.length, before.lines.length + 1);
      const line = held.lines[0]!;
      assert.deepEqual([line.status, line.side, line.type, line.amount], ['Pending', 'Debit', 'withdrawal', 10]);
      const wallet = assertSuccess(await api.call('GET', '/api/v1/wallet/balance', { token: alice.token }));

      call.release();
      const done = assertSuccess(await call.answer);
      assert.equal(done.transaction_id, line.id);
      const settled = await readCard(api, alice, cardId);
      assert.equal(settled.card.balance, 40);
      assert.equal(settled.lines.length, held.lines.length, 'no line added: the pending one settled');
      assert.deepEqual([settled.lines[0]!.id, settled.lines[0]!.status, settled.lines[0]!.amount], [line.id, 'Approved', 10]);
      const after = assertSuccess(await api.call('GET', '/api/v1/wallet/balance', { token: alice.token }));
      assert.equal(cents(after.balance), cents(wallet.balance) + 1_000);
    });

    test('a withdrawal the provider refuses: its Pending line is removed over HTTP and the balance is back', async (ctx) => {
      const { api, alice, cardId, during } = await servedCard(ctx, dialect);
      const before = await readCard(api, alice, cardId);
      const call = during('withdraw', () =>
        api.call('POST', `/api/v1/cards/${cardId}/withdraw`, { token: alice.token, body: { amount: 10 } }),
      );
      await call.reached;
      assert.equal((await readCard(api, alice, cardId)).lines[0]!.status, 'Pending');

      call.release('declined upstream');
      assertFailure(await call.answer, 502, 'Failed to withdraw from card: declined upstream');
      const after = await readCard(api, alice, cardId);
      assert.equal(after.card.balance, 50);
      assert.deepEqual(after.lines, before.lines);
    });

    test('a closure held at the provider: the card reads $0 beside a Pending line for its balance; settled, the line is Approved and the card closed', async (ctx) => {
      const { api, alice, cardId, during } = await servedCard(ctx, dialect);
      const before = await readCard(api, alice, cardId);
      const call = during('terminate', () => api.call('PATCH', `/api/v1/cards/${cardId}/close`, { token: alice.token }));
      await call.reached;

      const held = await readCard(api, alice, cardId);
      assert.deepEqual([held.card.status, held.card.balance], ['active', 0]);
      assert.equal(held.lines.length, before.lines.length + 1);
      const line = held.lines[0]!;
      assert.deepEqual([line.status, line.side, line.type, line.amount], ['Pending', 'Debit', 'card_close', 50]);

      call.release();
      const closed = assertSuccess(await call.answer);
      assert.deepEqual([closed.transaction_id, closed.balance_withdrawn], [line.id, 50]);
      const settled = await readCard(api, alice, cardId);
      assert.deepEqual([settled.card.status, settled.card.balance], ['closed', 0]);
      assert.deepEqual([settled.lines[0]!.id, settled.lines[0]!.status, settled.lines[0]!.amount], [line.id, 'Approved', 50]);
      assert.equal(settled.lines.length, held.lines.length);
    });

    test('a closure the provider refuses: its Pending line is removed over HTTP and the card keeps its balance', async (ctx) => {
      const { api, alice, cardId, during } = await servedCard(ctx, dialect);
      const before = await readCard(api, alice, cardId);
      const call = during('terminate', () => api.call('PATCH', `/api/v1/cards/${cardId}/close`, { token: alice.token }));
      await call.reached;
      assert.equal((await readCard(api, alice, cardId)).lines[0]!.status, 'Pending');

      call.release('busy');
      assertFailure(await call.answer, 502, 'Failed to close card: busy');
      const after = await readCard(api, alice, cardId);
      assert.deepEqual([after.card.status, after.card.balance], ['active', 50]);
      assert.deepEqual(after.lines, before.lines);
    });
  });
}
