import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { adminCommands } from '../helpers/admin.js';
import { newCard, newCustomer } from '../helpers/core.js';
import { dialects, useCore } from '../core/dialects.js';

for (const dialect of dialects()) {
  describe(`the admin command line shows and sets a card's controls (${dialect})`, () => {
    test('cards show prints the type, limits, blocked categories, spending and auto top-up, in text and JSON', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const admin = adminCommands(() => t);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      await t.core.setAutoTopup(alice.caller, card.id, { enabled: true, minBalance: 500, topupAmount: 2_000 });

      const shown = await admin('cards', 'show', '--card', card.id);
      assert.equal(shown.code, 0, shown.err);
      assert.match(shown.out, /^Type: multi_use$/m);
      assert.match(shown.out, /^Limits: per purchase off, daily off, monthly off$/m);
      assert.match(shown.out, /^Blocked categories: none$/m);
      assert.match(shown.out, /^Spent: today \$0\.00, this month \$0\.00 \(UTC\)$/m);
      assert.match(shown.out, /^Auto top-up: on, \$20\.00 when below \$5\.00 \(last triggered never\)$/m);
      const json = (await admin('cards', 'show', '--card', card.id, '--json')).json().card;
      assert.deepEqual(
        [json.type, json.controls, json.spentToday, json.spentThisMonth, json.autoTopup],
        [
          'multi_use',
          { perPurchaseLimit: null, dailyLimit: null, monthlyLimit: null, blockedCategories: [] },
          '0.00',
          '0.00',
          { enabled: true, minBalance: '5.00', topupAmount: '20.00', lastTriggered: null },
        ],
      );
    });

    test("cards controls sets limits and blocks categories for the card's holder; off removes a limit; --allow unblocks", async (ctx) => {
      const t = await useCore(ctx, dialect);
      const admin = adminCommands(() => t);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);

      const set = await admin(
        'cards',
        'controls',
        '--card',
        card.id,
        '--per-purchase',
        '25.50',
        '--daily',
        '100',
        '--block',
        'gambling,crypto',
      );
      assert.equal(set.code, 0, set.err);
      assert.match(set.out, /^Limits: per purchase \$25\.50, daily \$100\.00, monthly off$/m);
      assert.match(set.out, /^Blocked categories: gambling, crypto$/m);
      assert.deepEqual(await t.core.getControls(alice.caller, card.id), {
        perPurchaseLimit: 2_550,
        dailyLimit: 10_000,
        monthlyLimit: null,
        blockedCategories: ['gambling', 'crypto'],
        spentToday: 0,
        spentThisMonth: 0,
      });

      const changed = await admin(
        'cards',
        'controls',
        '--card',
        card.id,
        '--daily',
        'off',
        '--monthly',
        '500',
        '--allow',
        'gambling',
        '--json',
      );
      assert.deepEqual(changed.json().card.controls, {
        perPurchaseLimit: '25.50',
        dailyLimit: null,
        monthlyLimit: '500.00',
        blockedCategories: ['crypto'],
      });
    });

    test("cards auto-topup turns a card's auto top-up on with its amounts, and off; refuses what the API refuses", async (ctx) => {
      const t = await useCore(ctx, dialect);
      const admin = adminCommands(() => t);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);

      const on = await admin('cards', 'auto-topup', '--card', card.id, '--on', '--min-balance', '10', '--amount', '25');
      assert.equal(on.code, 0, on.err);
      assert.match(on.out, /^Auto top-up: on, \$25\.00 when below \$10\.00/m);
      const off = await admin('cards', 'auto-topup', '--card', card.id, '--off', '--json');
      assert.deepEqual(off.json().card.autoTopup, { enabled: false, minBalance: '10.00', topupAmount: '25.00', lastTriggered: null });

      const both = await admin('cards', 'auto-topup', '--card', card.id, '--on', '--off');
      assert.deepEqual([both.code, both.err], [1, 'Refused: Give one of --on or --off']);
      const other = await newCard(t, alice);
      const noAmount = await admin('cards', 'auto-topup', '--card', other.id, '--on');
      assert.equal(noAmount.code, 1);
      assert.match(noAmount.err, /Top-up amount is required to turn auto top-up on/);
      assert.equal((await t.core.getCard(alice.caller, other.id)).autoTopup.enabled, false);
    });

    test('cards controls refuses an unknown category, a bad amount, no change at all, an unknown card, a closed card', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const admin = adminCommands(() => t);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);

      const unknown = await admin('cards', 'controls', '--card', card.id, '--block', 'casino');
      assert.equal(unknown.code, 1);
      assert.match(unknown.err, /--block: unknown category casino\. Allowed: gambling, crypto/);
      const badAmount = await admin('cards', 'controls', '--card', card.id, '--daily', 'ten');
      assert.match(badAmount.err, /--daily must be an amount like 25 or 25\.50/);
      const zero = await admin('cards', 'controls', '--card', card.id, '--daily', '0');
      assert.match(zero.err, /Daily limit must be positive/);
      const nothing = await admin('cards', 'controls', '--card', card.id);
      assert.match(nothing.err, /Give at least one of --per-purchase/);
      const missing = randomUUID();
      assert.match((await admin('cards', 'show', '--card', missing)).err, new RegExp(`No card with id ${missing}`));
      await t.core.close(alice.caller, card.id);
      const closed = await admin('cards', 'controls', '--card', card.id, '--daily', '10');
      assert.equal(closed.code, 1);
      assert.match(closed.err, /Card is closed/);
      assert.equal((await t.core.getControls(alice.caller, card.id)).dailyLimit, null);
    });
  });
}
