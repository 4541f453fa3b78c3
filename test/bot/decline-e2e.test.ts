import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CoreRuntime } from '../../src/app/compose.js';
import type { BotApiServer, StoredMessage } from '../helpers/bot-api-server.js';
import { type E2eBot, startE2eBot } from '../helpers/e2e-bot.js';
import { catalogue, newCard, newCustomer } from '../helpers/core.js';

const buttons = (m: StoredMessage) => m.replyMarkup?.inline_keyboard.flat().map((b) => b.text) ?? [];

/**
 * Declines that explain themselves, with a one-tap fix (issue 33, section 4): purchases made through the
 * sandbox's authorization engine, their alerts pushed to the chat, each fix behind a quote and Confirm.
 */
describe('decline alerts and their fixes, over real Bot API traffic', () => {
  let e2e: E2eBot | undefined;
  let server: BotApiServer;
  let runtime: CoreRuntime;

  before(async () => {
    ({ server, runtime } = e2e = await startE2eBot('bot-declines'));
  });

  after(() => e2e?.stop());

  /** A linked chat with one card, "Ads", topped up with `balance` cents (none: an empty card). */
  async function linked(chatId: number, { balance = 0, languageCode = 'en' } = {}) {
    const customer = await newCustomer(runtime);
    const card = await newCard(runtime, customer, 'Ads');
    if (balance > 0) await runtime.core.topup(customer.caller, card.id, { amount: balance });
    const user = server.user(chatId, { languageCode });
    await server.nextMessage(chatId, user.send(customer.token).mark);
    return { customer, card, user };
  }

  it('over the per-purchase limit: the reason, "Raise the limit to $N", Confirm raises it; the alert pressed again changes nothing', async () => {
    const { customer, card, user } = await linked(5201, { balance: 10_000 });
    await runtime.core.setControls(customer.caller, card.id, { perPurchaseLimit: 2_000 });
    const mark = server.mark();
    const declined = await runtime.admin.simulatePurchase(card.id, 3_500, 'STEAM');
    assert.equal(declined.declineCode, 'per_purchase_limit');
    const alert = await server.nextMessage(5201, mark, 'Declined');
    assert.match(alert.text, /Declined \$35\.00 at STEAM on “Ads” .*: over the card's per-purchase limit\./);
    assert.match(alert.text, /raise it to \$35\.00/);
    assert.deepEqual(buttons(alert), ['⬆️ Raise the limit to $35.00', '🧊 Freeze']);

    const question = await server.nextMessage(5201, user.press(alert, 'Raise the limit').mark, 'Raise the Per purchase limit');
    assert.match(question.text, /from \$20\.00 to \$35\.00\?/);
    await server.nextEdit(5201, user.press(question, 'Confirm').mark, 'Per purchase limit of “Ads”: $35.00');
    assert.equal((await runtime.core.getControls(customer.caller, card.id)).perPurchaseLimit, 3_500);
    assert.equal((await runtime.admin.simulatePurchase(card.id, 3_500, 'STEAM')).status, 'Approved');

    // Stale: already as high; nothing asked, nothing changed.
    await server.nextMessage(5201, user.press(alert, 'Raise the limit').mark, 'is already $35.00: nothing was changed');
    assert.equal((await runtime.core.getControls(customer.caller, card.id)).perPurchaseLimit, 3_500);
  });

  it('"Raise the limit" never lowers it: raised higher while Confirm waited, Confirm says so and changes nothing', async () => {
    const { customer, card, user } = await linked(5210, { balance: 10_000 });
    await runtime.core.setControls(customer.caller, card.id, { dailyLimit: 2_000 });
    const mark = server.mark();
    await runtime.admin.simulatePurchase(card.id, 3_500, 'STEAM');
    const alert = await server.nextMessage(5210, mark, 'Declined');
    const question = await server.nextMessage(5210, user.press(alert, 'Raise the limit').mark, 'from $20.00 to $35.00?');
    await runtime.core.setControls(customer.caller, card.id, { dailyLimit: 5_000 });
    await server.nextEdit(5210, user.press(question, 'Confirm').mark, 'is already $50.00: nothing was changed');
    assert.equal((await runtime.core.getControls(customer.caller, card.id)).dailyLimit, 5_000);
  });

  it('over a limit by more than a limit may be: the reason alone, no "Raise the limit" it could not set', async () => {
    const { customer, card } = await linked(5212, { balance: 10_000 });
    await runtime.core.setControls(customer.caller, card.id, { perPurchaseLimit: 2_000 });
    const mark = server.mark();
    const declined = await runtime.admin.simulatePurchase(card.id, 200_000_000, 'Yacht');
    assert.equal(declined.declineCode, 'per_purchase_limit');
    const alert = await server.nextMessage(5212, mark, 'Declined');
    assert.match(alert.text, /at Yacht on “Ads” .*: over the card's per-purchase limit\.$/);
    assert.deepEqual(buttons(alert), ['🧊 Freeze']);
  });

  it('a held purchase is pushed as held, and its void as released with the balance back', async () => {
    const { card } = await linked(5209, { balance: 5_000 });
    let mark = server.mark();
    const held = await runtime.admin.simulatePurchase(card.id, 1_250, 'Hotel', { hold: true });
    const pending = await server.nextMessage(5209, mark, 'Held');
    assert.match(pending.text, /⏳ Held \$12\.50 at Hotel on “Ads” .* until the merchant settles\. Balance \$37\.50\./);
    mark = server.mark();
    await runtime.admin.simulateVoid(held.transactionId);
    const released = await server.nextMessage(5209, mark, 'Released');
    assert.match(released.text, /↩️ Released \$12\.50 held for Hotel on “Ads” .* Balance \$50\.00\./);
  });

  it('not enough money: "Top up $N" opens the top-up with the shortfall preset, at its quote and Confirm', async () => {
    // An empty card: its first top-up (a top-up before it would start the cooldown the fix then meets).
    const { customer, card, user } = await linked(5202);
    const mark = server.mark();
    const declined = await runtime.admin.simulatePurchase(card.id, 2_500, 'Bakery');
    assert.equal(declined.declineCode, 'insufficient_funds');
    const fix = declined.fix;
    assert.ok(fix?.kind === 'topup');
    const dollars = `$${(fix.amount / 100).toFixed(2)}`;
    const alert = await server.nextMessage(5202, mark, 'Declined');
    assert.match(alert.text, /not enough money on the card/);
    assert.ok(buttons(alert).includes(`➕ Top up ${dollars}`), buttons(alert).join(', '));
    const quote = await server.nextMessage(5202, user.press(alert, 'Top up').mark, 'Platform fee');
    assert.ok(quote.text.includes(dollars), quote.text);
    await server.nextEdit(5202, user.press(quote, 'Confirm').mark, `Topped up ${dollars}`);
    assert.equal(fix.amount, 2_500, 'the shortfall');
    assert.equal((await runtime.core.getCard(customer.caller, card.id)).balance, fix.amount);
  });

  it('a blocked category: "Allow Gambling" after Confirm allows it', async () => {
    const { customer, card, user } = await linked(5203, { balance: 5_000 });
    await runtime.core.setControls(customer.caller, card.id, { blockedCategories: ['gambling', 'crypto'] });
    const mark = server.mark();
    await runtime.admin.simulatePurchase(card.id, 1_000, 'Lucky Casino', { mcc: '7995' });
    const alert = await server.nextMessage(5203, mark, 'Declined');
    assert.match(alert.text, /this kind of merchant is blocked on the card/);
    const question = await server.nextMessage(5203, user.press(alert, '✅ Allow Gambling').mark, 'Allow Gambling on “Ads”?');
    await server.nextEdit(5203, user.press(question, 'Confirm').mark, 'Gambling allowed on “Ads”');
    assert.deepEqual((await runtime.core.getControls(customer.caller, card.id)).blockedCategories, ['crypto']);
  });

  it('a frozen card: "Unfreeze" after Confirm; pressed on a card closed since, it says so and changes nothing', async () => {
    const { customer, card, user } = await linked(5204, { balance: 5_000 });
    await runtime.core.freeze(customer.caller, card.id);
    let mark = server.mark();
    await runtime.admin.simulatePurchase(card.id, 1_000, 'Coffee');
    const alert = await server.nextMessage(5204, mark, 'Declined');
    assert.match(alert.text, /the card is frozen/);
    assert.deepEqual(buttons(alert), ['🔥 Unfreeze', '💳 Open the card']);
    const question = await server.nextMessage(5204, user.press(alert, 'Unfreeze').mark, 'Unfreeze “Ads”');
    await server.nextEdit(5204, user.press(question, 'Confirm').mark, '“Ads” unfrozen');
    assert.equal((await runtime.core.getCard(customer.caller, card.id)).status, 'active');

    await runtime.core.freeze(customer.caller, card.id);
    mark = server.mark();
    await runtime.admin.simulatePurchase(card.id, 1_000, 'Coffee');
    const second = await server.nextMessage(5204, mark, 'Declined');
    await runtime.core.close(customer.caller, card.id);
    await server.nextMessage(5204, user.press(second, 'Unfreeze').mark, '“Ads” is closed now: nothing was changed');
    assert.equal((await runtime.core.getCard(customer.caller, card.id)).status, 'closed');
  });

  it('a single-use card already used: "New card like this" creates one of the same BIN and plan, single-use, after Confirm', async () => {
    const { customer, card, user } = await linked(5206);
    const { bin, plan } = await catalogue(runtime);
    const once = await runtime.core.createCard(customer.caller, { bin_id: bin.id, planId: plan.id, name: 'Once', type: 'single_use' });
    await runtime.core.topup(customer.caller, once.id, { amount: 5_000 });
    await runtime.admin.simulatePurchase(once.id, 1_000, 'Shop', { hold: true });
    const mark = server.mark();
    assert.equal((await runtime.admin.simulatePurchase(once.id, 1_000, 'Shop')).declineCode, 'single_use_used');
    const alert = await server.nextMessage(5206, mark, 'Declined');
    assert.match(alert.text, /this single-use card was already used\.\nA single-use card pays once/);
    const tap = user.press(alert, 'New card like this');
    await server.nextMessage(5206, tap.mark, `A new card like “Once”: BIN ${bin.bin}, plan ${plan.name}, single-use.`);
    await server.nextMessage(5206, tap.mark, 'Name the card');
    const named = user.send('Twice');
    const coupon = await server.nextMessage(5206, named.mark, 'coupon code');
    const summary = await server.nextMessage(5206, user.press(coupon, 'Skip').mark, 'Twice');
    await server.nextEdit(5206, user.press(summary, 'Confirm').mark, 'Card “Twice” created');
    const made = (await runtime.core.listCards(customer.caller)).find((c) => c.name === 'Twice')!;
    assert.deepEqual([made.binId, made.planId, made.type], [bin.id, plan.id, 'single_use']);
    assert.notEqual(made.id, card.id);
  });

  it('"New card like this" when the used card’s plan is no longer offered: BIN and plan chosen, still single-use', async () => {
    const { customer, user } = await linked(5211);
    const { bin } = await catalogue(runtime);
    const retired = await runtime.admin.addPlan({ name: 'Retired', description: 'Gone', limit: 100_000, creationFee: 0 });
    const once = await runtime.core.createCard(customer.caller, { bin_id: bin.id, planId: retired.id, name: 'Once', type: 'single_use' });
    await runtime.core.topup(customer.caller, once.id, { amount: 5_000 });
    await runtime.admin.simulatePurchase(once.id, 1_000, 'Shop', { hold: true });
    await runtime.admin.deactivatePlan(retired.id);
    const mark = server.mark();
    await runtime.admin.simulatePurchase(once.id, 1_000, 'Shop');
    const alert = await server.nextMessage(5211, mark, 'Declined');
    const bins = await server.nextMessage(5211, user.press(alert, 'New card like this').mark, 'BIN');
    const plans = await server.nextMessage(5211, user.press(bins, bin.bin).mark, 'Pick a plan');
    const { plans: offered } = await catalogue(runtime);
    assert.ok(!offered.some((p) => p.id === retired.id));
    await server.nextMessage(5211, user.press(plans, offered[0]!.name).mark, 'Name the card');
    const coupon = await server.nextMessage(5211, user.send('Again').mark, 'coupon code');
    const summary = await server.nextMessage(5211, user.press(coupon, 'Skip').mark, 'Again');
    await server.nextEdit(5211, user.press(summary, 'Confirm').mark, 'Card “Again” created');
    const made = (await runtime.core.listCards(customer.caller)).find((c) => c.name === 'Again')!;
    assert.deepEqual([made.binId, made.planId, made.type], [bin.id, offered[0]!.id, 'single_use']);
  });

  it('a merchant-locked card at another merchant: the merchant it is locked to named, no fix button', async () => {
    const { customer } = await linked(5207);
    const { bin, plan } = await catalogue(runtime);
    const locked = await runtime.core.createCard(customer.caller, {
      bin_id: bin.id,
      planId: plan.id,
      name: 'Ads',
      type: 'merchant_locked',
    });
    await runtime.core.topup(customer.caller, locked.id, { amount: 5_000 });
    await runtime.admin.simulatePurchase(locked.id, 1_000, 'Google Ads');
    const mark = server.mark();
    await runtime.admin.simulatePurchase(locked.id, 1_000, 'Other Shop');
    const alert = await server.nextMessage(5207, mark, 'Declined');
    assert.match(alert.text, /This card is locked to Google Ads and pays nowhere else\./);
    assert.deepEqual(buttons(alert), ['🧊 Freeze']);
  });

  it('in Russian: the reason and the fix button', async () => {
    const { customer, card } = await linked(5205, { balance: 10_000, languageCode: 'ru' });
    await runtime.core.setControls(customer.caller, card.id, { dailyLimit: 2_000 });
    const mark = server.mark();
    await runtime.admin.simulatePurchase(card.id, 3_000, 'STEAM');
    const alert = await server.nextMessage(5205, mark, 'Отклонено');
    assert.match(alert.text, /превышен дневной лимит карты/);
    assert.match(alert.text, /поднимите его до 30,00/);
    assert.ok(
      buttons(alert).some((b) => b.startsWith('⬆️ Поднять лимит до 30,00')),
      buttons(alert).join(', '),
    );
  });
});
