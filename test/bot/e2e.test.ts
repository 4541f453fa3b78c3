import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startCore, type CoreRuntime } from '../../src/compose.js';
import { systemClock } from '../../src/core/clock.js';
import { createLogger } from '../../src/logger.js';
import { startBot, type RunningBot } from '../../src/bot/index.js';
import { BotApiServer, type StoredMessage } from '../helpers/bot-api-server.js';
import { TEST_CARD_DATA_KEY } from '../helpers/core.js';

const BOT_TOKEN = '123456:TEST-token';

describe('the bot over real Bot API traffic', () => {
  let dir: string;
  let server: BotApiServer;
  let apiRoot: string;
  let runtime: CoreRuntime;
  let running: RunningBot | undefined;
  const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');

  const start = async (sensitiveTtlSeconds = 1) => {
    running = await startBot({
      core: runtime.core,
      db: runtime.database.db,
      clock: systemClock,
      logger,
      config: { token: BOT_TOKEN, apiRoot, sensitiveTtlSeconds, otpTtlSeconds: 1, pollIntervalMs: 100, rateLimit: false },
    });
  };

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'bot-e2e-'));
    server = new BotApiServer();
    apiRoot = await server.start();
    runtime = await startCore({ databaseUrl: path.join(dir, 'cards.db'), cardDataKey: TEST_CARD_DATA_KEY, clock: systemClock });
    await start();
  });

  after(async () => {
    await running?.stop();
    await server.stop();
    await runtime.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('walks a cardholder from linking to closing a card, with every push and refusal on the way', async () => {
    const { userId, token } = await runtime.admin.createUser({ name: 'Alice', deposit: 100_000 });
    const alice = server.user(1001);

    const commands = server.calls.find((c) => c.method === 'setMyCommands' && c.payload.language_code === undefined);
    assert.deepEqual(commands?.payload.commands.map((c: { command: string }) => c.command), ['start', 'menu', 'cards', 'cancel', 'help', 'unlink']);

    let step = alice.send('/start');
    await server.nextMessage(alice.chatId, step.mark, 'API token');
    step = alice.send('/menu');
    await server.nextMessage(alice.chatId, step.mark, 'not linked yet');

    // Linking: the token message is deleted at once, then the main menu arrives.
    step = alice.send(token);
    const deleted = await server.waitForCall((c) => c.method === 'deleteMessage' && c.payload.message_id === step.message.messageId, step.mark);
    assert.equal(deleted.ok, true);
    const menu = await server.nextMessage(alice.chatId, step.mark, 'Linked');
    assert.ok(server.message(alice.chatId, step.message.messageId)!.deleted);

    // Create a card through the conversation.
    let press = alice.press(menu, 'New card');
    const binPrompt = await server.nextMessage(alice.chatId, press.mark, 'Pick a BIN');
    press = alice.press(binPrompt, /Online/);
    const planPrompt = await server.nextMessage(alice.chatId, press.mark, 'Pick a plan');
    assert.match(planPrompt.replyMarkup!.inline_keyboard[0]![0]!.text, /limit .* fee/);
    press = alice.press(planPrompt, /./);
    await server.nextMessage(alice.chatId, press.mark, 'Name the card');
    step = alice.send('Ads');
    const couponPrompt = await server.nextMessage(alice.chatId, step.mark, 'coupon');
    press = alice.press(couponPrompt, 'Skip');
    const summary = await server.nextMessage(alice.chatId, press.mark, 'Creation fee');
    assert.match(summary.text, /after the fee/);
    press = alice.press(summary, 'Confirm');
    await server.nextMessage(alice.chatId, press.mark, 'created');
    const view = await server.nextMessage(alice.chatId, press.mark, 'Balance');
    assert.match(view.text, /Ads/);

    // Top-up: the limits in the prompt, the quote with the fee, confirm, the view refreshed in place.
    press = alice.press(view, 'Top up');
    const ask = await server.nextMessage(alice.chatId, press.mark, 'How much to top up');
    assert.match(ask.text, /From 5\.00 to 10000\.00/);
    step = alice.send('1');
    const tooSmall = await server.nextMessage(alice.chatId, step.mark);
    assert.match(tooSmall.text, /Minimum top-up amount is 5/);
    step = alice.send('50');
    const quote = await server.nextMessage(alice.chatId, step.mark, 'Platform fee');
    assert.match(quote.text, /Total charged/);
    press = alice.press(quote, 'Confirm');
    const done = await server.nextMessage(alice.chatId, press.mark, 'Topped up');
    assert.match(done.text, /fee \d+\.\d\d USD/);
    const refreshed = await server.nextEdit(alice.chatId, press.mark, 'Balance: 50.00');
    assert.equal(refreshed.messageId, view.messageId);

    // A second top-up at once is refused by the cooldown, in the service's words.
    press = alice.press(refreshed, 'Top up');
    await server.nextMessage(alice.chatId, press.mark, 'How much');
    step = alice.send('10');
    const secondQuote = await server.nextMessage(alice.chatId, step.mark, 'Platform fee');
    press = alice.press(secondQuote, 'Confirm');
    const cooldown = await server.nextMessage(alice.chatId, press.mark, 'Please wait');
    assert.match(cooldown.text, /before topping up this card again\. Try again after that\./);

    // Freeze, then unfreeze: only the button that applies is shown.
    press = alice.press(refreshed, 'Freeze');
    let frozen = await server.nextEdit(alice.chatId, press.mark, 'Status: frozen');
    const labels = (m: StoredMessage) => m.replyMarkup!.inline_keyboard.flat().map((b) => b.text).join(' ');
    assert.match(labels(frozen), /Unfreeze/);
    assert.doesNotMatch(labels(frozen), /Freeze\b(?!.*Unfreeze)/);

    // A purchase on the frozen card is declined and pushed with a Freeze button.
    const cards = await runtime.core.listCards(await runtime.core.authenticate(token));
    const card = cards[0]!;
    let mark = server.mark();
    await runtime.admin.simulatePurchase(card.id, 1_000, 'Coffee');
    const declined = await server.nextMessage(alice.chatId, mark, 'Declined');
    assert.match(declined.text, /Coffee/);
    assert.match(labels(declined), /Freeze/);

    press = alice.press(frozen, 'Unfreeze');
    frozen = await server.nextEdit(alice.chatId, press.mark, 'Status: active');

    // Details: protected, values as spoilers, deleted after the TTL.
    press = alice.press(frozen, 'Details');
    const details = await server.nextMessage(alice.chatId, press.mark, 'Card details');
    assert.equal(details.protectContent, true);
    assert.equal(details.entities?.filter((e) => e.type === 'spoiler').length, 3);
    await server.waitForCall((c) => c.method === 'deleteMessage' && c.payload.message_id === details.messageId, press.mark);

    // A simulated OTP is pushed at once, and deletes itself.
    mark = server.mark();
    const otp = await runtime.admin.simulateOtp(card.id, 2_500, 'Shop');
    const pushed = await server.nextMessage(alice.chatId, mark, otp.code);
    await server.waitForCall((c) => c.method === 'deleteMessage' && c.payload.message_id === pushed.messageId, mark);
    assert.ok(userId);

    // Transactions, paged with next/previous.
    for (let i = 0; i < 5; i++) await runtime.admin.simulatePurchase(card.id, 100, `Shop ${i}`);
    press = alice.press(frozen, 'Transactions');
    const page1 = await server.nextEdit(alice.chatId, press.mark, 'page 1 of 2');
    press = alice.press(page1, 'Next');
    const page2 = await server.nextEdit(alice.chatId, press.mark, 'page 2 of 2');
    assert.match(labels(page2), /Previous/);

    // Back to the card through /cards, then withdraw.
    step = alice.send('/cards');
    const list = await server.nextMessage(alice.chatId, step.mark, 'Your cards');
    press = alice.press(list, 'Ads');
    const cardView = await server.nextEdit(alice.chatId, press.mark, 'Status: active');
    press = alice.press(cardView, 'Withdraw');
    await server.nextMessage(alice.chatId, press.mark, 'How much to withdraw');
    step = alice.send('5');
    const withdrawConfirm = await server.nextMessage(alice.chatId, step.mark, 'Withdraw 5.00 USD');
    press = alice.press(withdrawConfirm, 'Confirm');
    await server.nextMessage(alice.chatId, press.mark, 'Withdrew 5.00 USD');

    // Close: the irreversible warning, confirm, the balance back in the wallet.
    // (Closing returns the balance like a withdrawal, so right after one the core refuses it.)
    press = alice.press(cardView, 'Close card');
    let warning = await server.nextMessage(alice.chatId, press.mark, 'cannot be undone');
    press = alice.press(warning, 'Confirm');
    await server.nextMessage(alice.chatId, press.mark, 'Please wait 15 minutes between withdrawals');

    const caller = await runtime.core.authenticate(token);
    await runtime.core.createCard(caller, { bin_id: card.binId, planId: card.planId, name: 'Spare' });
    step = alice.send('/cards');
    const list2 = await server.nextMessage(alice.chatId, step.mark, 'Your cards');
    press = alice.press(list2, 'Spare');
    const spareView = await server.nextEdit(alice.chatId, press.mark, 'Spare');
    press = alice.press(spareView, 'Close card');
    warning = await server.nextMessage(alice.chatId, press.mark, 'cannot be undone');
    press = alice.press(warning, 'Confirm');
    await server.nextMessage(alice.chatId, press.mark, 'Card closed');
    const closedView = await server.nextEdit(alice.chatId, press.mark, 'Status: closed');
    assert.doesNotMatch(labels(closedView), /Top up|Withdraw|Freeze|Details/);
  });

  it('deletes sensitive details on time even when the bot restarts before they fall due', async () => {
    const { token } = await runtime.admin.createUser({ name: 'Bob', deposit: 50_000 });
    const bob = server.user(1002);
    const { bin, plan } = await (async () => ({ bin: (await runtime.core.listBins())[0]!, plan: (await runtime.core.listPlans())[0]! }))();
    await runtime.core.createCard(await runtime.core.authenticate(token), { bin_id: bin.id, planId: plan.id, name: 'Travel' });
    await running!.stop();
    await start(5);

    let step = bob.send(`/link ${token}`);
    await server.nextMessage(bob.chatId, step.mark, 'Linked');
    step = bob.send('/cards');
    const list = await server.nextMessage(bob.chatId, step.mark, 'Your cards');
    let press = bob.press(list, 'Travel');
    const view = await server.nextEdit(bob.chatId, press.mark, 'Travel');
    press = bob.press(view, 'Details');
    const details = await server.nextMessage(bob.chatId, press.mark, 'Card details');

    await running!.stop();
    const restartMark = server.mark();
    await start(5);
    const deletion = await server.waitForCall((c) => c.method === 'deleteMessage' && c.payload.message_id === details.messageId, restartMark);
    assert.equal(deletion.ok, true);
    assert.ok(server.message(bob.chatId, details.messageId)!.deleted);
  });
});
