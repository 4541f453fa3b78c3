import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startHousekeeping } from '../../src/app/housekeeping.js';
import type { CardTransactionEvent } from '../../src/core/operations/events.js';
import { adminCommands } from '../helpers/admin.js';
import { createTestCore, newCard, newCustomer, type TestCore } from '../helpers/core.js';
import { capturedLogger } from '../helpers/log.js';

describe('simulate purchase, clear and void (admin command line)', () => {
  let t: TestCore;
  before(async () => {
    t = await createTestCore();
  });
  after(async () => {
    await t.close();
  });
  const admin = adminCommands(() => t);

  async function fundedCard(amount: number) {
    const customer = await newCustomer(t, 100_000, 'Ivy');
    const card = await newCard(t, customer);
    await t.core.topup(customer.caller, card.id, { amount });
    return { customer, card };
  }

  test('--hold leaves the purchase pending; clear takes the ID it printed, for less, the rest back on the card', async () => {
    const { customer, card } = await fundedCard(5_000);
    const held = await admin(
      'simulate',
      'purchase',
      '--card',
      card.id,
      '--amount',
      '20',
      '--merchant',
      'Hotel',
      '--mcc',
      '7011',
      '--hold',
      '--json',
    );
    assert.equal(held.code, 0);
    assert.deepEqual(
      [held.json().status, held.json().decision, held.json().reason, held.json().cardBalance],
      ['Pending', 'held', null, '30.00'],
    );
    const id = held.json().transactionId as string;
    const [line] = (await t.core.listTransactions(customer.caller, { card_id: card.id })).data;
    assert.deepEqual([line?.id, line?.status], [id, 'Pending']);
    // More than 20 % over the hold: refused, the hold stays, the exit code says so.
    const over = await admin('simulate', 'clear', '--transaction', id, '--amount', '24.01', '--json');
    assert.deepEqual(
      [over.code, over.json().ok, over.json().decision, over.json().reason, over.json().cardBalance],
      [1, false, 'refused', 'over_tolerance', '30.00'],
    );
    const cleared = await admin('simulate', 'clear', '--transaction', id, '--amount', '15');
    assert.equal(cleared.code, 0);
    assert.equal(cleared.out, `Approved: transaction ${id}; card balance $35.00.`);
    assert.equal((await admin('ledger', 'check', '--json')).json().consistent, true);
  });

  test('void releases a held purchase, the line Reversed; a late clearing settles from the balance; a void then is refused', async () => {
    const { card } = await fundedCard(5_000);
    const id = (await admin('simulate', 'purchase', '--card', card.id, '--amount', '10', '--hold', '--json')).json()
      .transactionId as string;
    const voided = await admin('simulate', 'void', '--transaction', id, '--json');
    assert.deepEqual([voided.json().status, voided.json().decision, voided.json().cardBalance], ['Reversed', 'voided', '50.00']);
    const late = await admin('simulate', 'clear', '--transaction', id, '--json');
    assert.deepEqual([late.code, late.json().status, late.json().cardBalance], [0, 'Approved', '40.00']);
    const refused = await admin('simulate', 'void', '--transaction', id);
    assert.notEqual(refused.code, 0);
    assert.equal(refused.err, `Refused: Transaction ${id} is cleared: a clearing is not voided (a refund gives money back)`);
  });

  test('a declined purchase prints its reason and, in JSON, its fix', async () => {
    const { card } = await fundedCard(1_000);
    await t.database.db.updateTable('cards').set({ blocked_categories: '["gambling"]' }).where('id', '=', card.id).execute();
    const blocked = await admin('simulate', 'purchase', '--card', card.id, '--amount', '1', '--mcc', '7995');
    assert.match(blocked.out, /^Declined \(blocked_category\): transaction [0-9a-f-]+; card balance \$10\.00\.$/);
    const short = (await admin('simulate', 'purchase', '--card', card.id, '--amount', '12', '--json')).json();
    assert.deepEqual(
      [short.decision, short.reason, short.declineCode, short.fix],
      ['declined', 'insufficient_funds', 'insufficient_funds', { kind: 'topup', amount: '5.00' }],
    );
    // The country as any case: an ISO code.
    const abroad = await admin('simulate', 'purchase', '--card', card.id, '--amount', '1', '--country', 'de', '--json');
    assert.deepEqual([abroad.code, abroad.json().decision], [0, 'approved']);
  });

  test('the housekeeping releases holds past AUTHORIZATION_HOLD_DAYS, pushed Reversed', async () => {
    const { card } = await fundedCard(5_000);
    const id = (await admin('simulate', 'purchase', '--card', card.id, '--amount', '10', '--hold', '--json')).json()
      .transactionId as string;
    t.clock.advance(7 * 86_400_000);
    const { logger, text } = capturedLogger();
    await startHousekeeping(t, logger).stop();
    assert.match(text(), /released expired authorization holds/);
    const events = (await t.core.events.pending(1_000)).map((p) => p.event as CardTransactionEvent);
    assert.ok(events.some((e) => e.transactionId === id && e.status === 'Reversed'));
    assert.equal((await admin('ledger', 'check', '--json')).json().consistent, true);
  });
});
