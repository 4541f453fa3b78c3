import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { useCore, withoutPostgres } from './dialects.js';
import { newCard, newCustomer } from '../helpers/core.js';
import { queriesSent } from '../helpers/queries.js';
import type { TestCore } from '../helpers/core.js';
import { hashToken } from '../../src/core/keys/secrets.js';
import type { Caller } from '../../src/core/operations/views.js';

/** The statements a Postgres operation sends, one round trip each (see `queriesSent`). */
async function roundTrips<T>(run: () => Promise<T>): Promise<{ result: T; trips: string[] }> {
  const { result, queries } = await queriesSent(run);
  return { result, trips: queries.map((query) => query.text) };
}

const short = (trips: string[]) => trips.map((s) => s.replace(/\s+/g, ' ').slice(0, 60)).join('\n');

describe('round trips of a money operation on Postgres', { skip: withoutPostgres }, () => {
  async function ready(t: TestCore) {
    const alice = await newCustomer(t, 50_000);
    const card = await newCard(t, alice);
    return { alice, card };
  }

  test('a top-up is one statement, committed on its own', async (ctx) => {
    const t = await useCore(ctx, 'postgres', { settings: { topupCooldownSeconds: 1 } });
    const { alice, card } = await ready(t);
    const first = await t.core.topup(alice.caller, card.id, { amount: 1_000 }); // the first learns the revenue account
    t.clock.advance(2_000);
    const { result, trips } = await roundTrips(() => t.core.topup(alice.caller, card.id, { amount: 1_000 }));
    assert.equal(result.newCardBalance, first.newCardBalance + 1_000);
    assert.equal(result.walletBalance, first.walletBalance - result.totalCharged);
    assert.equal(trips.length, 1, short(trips));
  });

  test("a token holder's top-up is one statement too: the token is checked by the top-up's own statement", async (ctx) => {
    const t = await useCore(ctx, 'postgres', { settings: { topupCooldownSeconds: 1 } });
    const { alice, card } = await ready(t);
    const found: Caller[] = [];
    const holder = { tokenHash: hashToken(alice.token), authenticated: (caller: Caller) => found.push(caller) };
    const first = await t.core.topup(holder, card.id, { amount: 1_000 }); // also writes the token's first use
    t.clock.advance(2_000);
    const { result, trips } = await roundTrips(() => t.core.topup(holder, card.id, { amount: 1_000 }));
    assert.equal(result.newCardBalance, first.newCardBalance + 1_000);
    assert.equal(trips.length, 1, short(trips));
    assert.deepEqual(found, [alice.caller, alice.caller]);

    await t.admin.revokeToken(alice.token);
    t.clock.advance(2_000);
    const refused = await roundTrips(() => assert.rejects(t.core.topup(holder, card.id, { amount: 1_000 }), { code: 'INVALID_TOKEN' }));
    assert.equal(refused.trips.length, 1, short(refused.trips));
    assert.equal(found.length, 2, 'a revoked token finds no caller');
    assert.equal((await t.core.getCard(alice.caller, card.id)).balance, first.newCardBalance + 1_000, 'nothing moved');
  });

  test("a token holder's wallet read is one statement: the token, its user and the wallet", async (ctx) => {
    const t = await useCore(ctx, 'postgres');
    const { alice } = await ready(t);
    const found: Caller[] = [];
    const holder = { tokenHash: hashToken(alice.token), authenticated: (caller: Caller) => found.push(caller) };
    await t.core.walletBalance(holder); // the first writes the token's first use
    const { result, trips } = await roundTrips(() => t.core.walletBalance(holder));
    assert.deepEqual(result, await t.core.walletBalance(alice.caller));
    assert.equal(trips.length, 1, short(trips));
    assert.deepEqual(found, [alice.caller, alice.caller]);

    await t.admin.revokeToken(alice.token);
    const refused = await roundTrips(() => assert.rejects(t.core.walletBalance(holder), { code: 'INVALID_TOKEN' }));
    assert.equal(refused.trips.length, 1, short(refused.trips));
    assert.equal(found.length, 2, 'a revoked token finds no caller');
  });

  test('a refused top-up is one statement too, and its attempt still counts', async (ctx) => {
    const t = await useCore(ctx, 'postgres', { settings: { topupCooldownSeconds: 1 } });
    const { alice, card } = await ready(t);
    const first = await t.core.topup(alice.caller, card.id, { amount: 1_000 });
    t.clock.advance(2_000);
    const { trips } = await roundTrips(() =>
      assert.rejects(t.core.topup(alice.caller, card.id, { amount: first.walletBalance }), { code: 'INSUFFICIENT_WALLET_BALANCE' }),
    );
    assert.equal(trips.length, 1, short(trips));
    await assert.rejects(t.core.topup(alice.caller, card.id, { amount: 1_000 }), { code: 'TOPUP_COOLDOWN' });
  });
});

describe('round trips of the operations that call the provider, on Postgres', { skip: withoutPostgres }, () => {
  test('a withdrawal, a creation and a closure are two statements each, one each side of the provider call', async (ctx) => {
    const t = await useCore(ctx, 'postgres', { settings: { topupCooldownSeconds: 1 } });
    const alice = await newCustomer(t, 50_000);
    const card = await newCard(t, alice);
    await t.core.topup(alice.caller, card.id, { amount: 1_000 });
    const bin = (await t.core.listBins()).find((b) => !b.wallet)!;
    const plan = (await t.core.listPlans())[0]!;
    await t.core.createCard(alice.caller, { bin_id: bin.id, planId: plan.id, name: 'Warm-up' });
    await t.core.withdraw(alice.caller, card.id, { amount: 100 }); // the first learns the in-flight account
    t.clock.advance(3_600_000);
    const withdraw = await roundTrips(() => t.core.withdraw(alice.caller, card.id, { amount: 500 }));
    t.clock.advance(3_600_000);
    const create = await roundTrips(() => t.core.createCard(alice.caller, { bin_id: bin.id, planId: plan.id, name: 'Travel' }));
    const close = await roundTrips(() => t.core.close(alice.caller, card.id));
    assert.equal(withdraw.trips.length, 2, short(withdraw.trips));
    assert.equal(withdraw.result.amountWithdrawn, 500);
    assert.equal(create.trips.length, 2, short(create.trips));
    assert.equal(create.result.status, 'active');
    assert.equal(close.trips.length, 2, short(close.trips));
    assert.equal(close.result.balanceWithdrawn, 1_000 - 100 - 500);
  });

  test('a refused creation is one statement, and does nothing', async (ctx) => {
    const t = await useCore(ctx, 'postgres');
    const alice = await newCustomer(t, 50_000);
    const bin = (await t.core.listBins()).find((b) => !b.wallet)!;
    const plan = (await t.core.listPlans())[0]!;
    await t.core.createCard(alice.caller, { bin_id: bin.id, planId: plan.id, name: 'Warm-up' }); // the first learns the system accounts
    const { trips } = await roundTrips(() =>
      assert.rejects(t.core.createCard(alice.caller, { bin_id: bin.id, planId: plan.id, name: 'Gift', coupon_id: 'NONE' }), {
        code: 'INVALID_COUPON',
        message: 'Invalid coupon: coupon not found',
      }),
    );
    assert.equal(trips.length, 1, short(trips));
    assert.equal((await t.core.listCards(alice.caller)).length, 1);
  });

  test('a refused closure is one statement', async (ctx) => {
    const t = await useCore(ctx, 'postgres');
    const alice = await newCustomer(t, 50_000);
    const card = await newCard(t, alice);
    await t.core.close(alice.caller, card.id); // the first learns the in-flight account
    const { trips } = await roundTrips(() => assert.rejects(t.core.close(alice.caller, card.id), { code: 'ALREADY_CLOSED' }));
    assert.equal(trips.length, 1, short(trips));
  });
});
