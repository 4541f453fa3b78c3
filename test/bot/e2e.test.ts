import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startCore, type CoreRuntime } from '../../src/app/compose.js';
import { systemClock } from '../../src/infra/clock.js';
import { createLogger } from '../../src/infra/logger.js';
import type { RunningBot } from '../../src/bot/runtime/running-bot.js';
import { startBot } from '../../src/bot/runtime/start-polling.js';
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
      cipher: runtime.cipher,
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
    assert.deepEqual(
      commands?.payload.commands.map((c: { command: string }) => c.command),
      ['start', 'menu', 'cards', 'topup', 'freeze', 'details', 'deposit', 'cancel', 'help', 'unlink'],
    );

    let step = alice.send('/start');
    await server.nextMessage(alice.chatId, step.mark, 'API token');
    step = alice.send('/menu');
    await server.nextMessage(alice.chatId, step.mark, 'not linked yet');

    // In a group: one line, nothing else.
    step = alice.inGroup(-5001).send('/start');
    const refusal = await server.nextMessage(-5001, step.mark, 'I only work in a private chat with you.');
    assert.equal(refusal.text, 'I only work in a private chat with you.');

    // A wrong token: deleted at once all the same, refused in the service's words.
    step = alice.send('vc_wrongwrongwrongwrongwrongwrongwrongwrongwro');
    await server.waitForCall((c) => c.method === 'deleteMessage' && c.payload.message_id === step.message.messageId, step.mark);
    await server.nextMessage(alice.chatId, step.mark, 'Invalid or missing API token. Check the token');

    // Linking: the token message is deleted at once, then the main menu arrives.
    step = alice.send(token);
    const deleted = await server.waitForCall(
      (c) => c.method === 'deleteMessage' && c.payload.message_id === step.message.messageId,
      step.mark,
    );
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
    // The summary becomes the new card's view, in place.
    const view = await server.nextEdit(alice.chatId, press.mark, 'created');
    assert.equal(view.messageId, summary.messageId);
    assert.match(view.text, /Ads[\s\S]*Balance/);

    // Top-up: the limits in the prompt, the quote with the fee, confirm, the view refreshed in place.
    press = alice.press(view, 'Top up');
    const ask = await server.nextMessage(alice.chatId, press.mark, 'How much to top up');
    assert.match(ask.text, /From \$5\.00 to \$970\.44/);
    step = alice.send('1');
    const tooSmall = await server.nextMessage(alice.chatId, step.mark);
    assert.match(tooSmall.text, /Minimum amount is \$5\.00/);
    step = alice.send('50');
    const quote = await server.nextMessage(alice.chatId, step.mark, 'Platform fee');
    assert.match(quote.text, /Total charged/);
    press = alice.press(quote, 'Confirm');
    // The result takes the confirmation's place.
    const done = await server.nextEdit(alice.chatId, press.mark, 'Topped up');
    assert.equal(done.messageId, quote.messageId);
    assert.match(done.text, /fee \$\d+\.\d\d, total charged \$\d+\.\d\d\)/);
    assert.equal(done.replyMarkup, undefined);
    const refreshed = await server.nextEdit(alice.chatId, press.mark, 'Balance: $50.00');
    assert.equal(refreshed.messageId, view.messageId);

    // A second top-up at once is refused by the cooldown, in the service's words, before any amount is asked.
    press = alice.press(refreshed, 'Top up');
    const cooldown = await server.nextMessage(alice.chatId, press.mark, 'Please wait');
    // The time left, counted on the real clock: "2 min" only while under a second has passed since the top-up.
    assert.match(cooldown.text, /Please wait (1 min \d{1,2} s|2 min) before topping up this card again\. Try again after that\./);

    // Freeze, then unfreeze: only the button that applies is shown.
    press = alice.press(refreshed, 'Freeze');
    let frozen = await server.nextEdit(alice.chatId, press.mark, 'Status: frozen');
    const labels = (m: StoredMessage) =>
      m
        .replyMarkup!.inline_keyboard.flat()
        .map((b) => b.text)
        .join(' | ');
    const buttons = (m: StoredMessage) => m.replyMarkup!.inline_keyboard.flat().map((b) => b.text);
    assert.ok(buttons(frozen).includes('🔥 Unfreeze'));
    assert.ok(!buttons(frozen).includes('🧊 Freeze'));

    // A purchase on the frozen card is declined and pushed with its fix (Unfreeze) and a button that opens the card (nothing to freeze).
    const cards = await runtime.core.listCards(await runtime.core.authenticate(token));
    const card = cards[0]!;
    let mark = server.mark();
    await runtime.admin.simulatePurchase(card.id, 1_000, 'Coffee');
    const declined = await server.nextMessage(alice.chatId, mark, 'Declined');
    assert.match(declined.text, /Declined \$10\.00 at Coffee .*: the card is frozen\./);
    assert.deepEqual(buttons(declined), ['🔥 Unfreeze', '💳 Open the card']);
    press = alice.press(declined, 'Open the card');
    const opened = await server.nextMessage(alice.chatId, press.mark, 'Status: frozen');
    assert.ok(buttons(opened).includes('🔥 Unfreeze'));

    press = alice.press(frozen, 'Unfreeze');
    frozen = await server.nextEdit(alice.chatId, press.mark, 'Status: active');
    assert.ok(buttons(frozen).includes('🧊 Freeze'));
    assert.ok(!buttons(frozen).includes('🔥 Unfreeze'));

    // Details: protected, values as spoilers, deleted after the TTL.
    press = alice.press(frozen, 'Details');
    const details = await server.nextMessage(alice.chatId, press.mark, 'Card details');
    assert.equal(details.protectContent, true);
    assert.equal(details.entities?.filter((e) => e.type === 'spoiler').length, 3);
    const detailsGone = await server.waitForCall(
      (c) => c.method === 'deleteMessage' && c.payload.message_id === details.messageId,
      press.mark,
    );
    // Deleted after the TTL (1 s here), not before, and not long after.
    assert.ok(detailsGone.at - details.sentAt! >= 900, `deleted after ${detailsGone.at - details.sentAt!} ms`);
    assert.ok(detailsGone.at - details.sentAt! < 4_000, `deleted after ${detailsGone.at - details.sentAt!} ms`);

    // A simulated OTP is pushed at once, and deletes itself.
    mark = server.mark();
    const otp = await runtime.admin.simulateOtp(card.id, 2_500, 'Shop');
    const pushed = await server.nextMessage(alice.chatId, mark, otp.code);
    const otpGone = await server.waitForCall((c) => c.method === 'deleteMessage' && c.payload.message_id === pushed.messageId, mark);
    assert.ok(otpGone.at - pushed.sentAt! >= 900);

    // Approved purchases are pushed too, each with a Freeze button that works from the alert.
    mark = server.mark();
    for (let i = 0; i < 5; i++) await runtime.admin.simulatePurchase(card.id, 100, `Shop ${i}`);
    const approved = await server.nextMessage(alice.chatId, mark, 'at Shop 4');
    assert.match(approved.text, /Debit \$1\.00 at Shop 4 on “Ads”/);
    press = alice.press(approved, 'Freeze');
    const frozenFromAlert = await server.nextMessage(alice.chatId, press.mark, 'Status: frozen');
    assert.equal(server.message(alice.chatId, approved.messageId)!.replyMarkup, undefined);
    press = alice.press(frozenFromAlert, 'Unfreeze');
    await server.nextEdit(alice.chatId, press.mark, 'Status: active');

    // Transactions, paged with next/previous: the card's own, then every card's from the main menu.
    press = alice.press(frozen, 'Transactions');
    const page1 = await server.nextEdit(alice.chatId, press.mark, 'page 1 of 2');
    assert.match(page1.text, /Shop 4/);
    press = alice.press(page1, 'Next');
    const page2 = await server.nextEdit(alice.chatId, press.mark, 'page 2 of 2');
    assert.ok(buttons(page2).includes('◀️ Previous'));
    assert.ok(!buttons(page2).includes('Next ▶️'));
    press = alice.press(page2, 'Previous');
    await server.nextEdit(alice.chatId, press.mark, 'page 1 of 2');
    press = alice.press(menu, 'Transactions');
    const everyCard = await server.nextEdit(alice.chatId, press.mark, 'Transactions, page 1 of');
    assert.equal(everyCard.messageId, menu.messageId, 'drawn in the menu, which a button brings back');
    assert.match(everyCard.text, /Shop 4/);
    press = alice.press(everyCard, 'Menu');
    assert.ok(buttons(await server.nextEdit(alice.chatId, press.mark, 'Main menu')).includes('📜 Transactions'));

    // Back to the card through /cards, then withdraw.
    step = alice.send('/cards');
    const list = await server.nextMessage(alice.chatId, step.mark, 'Your cards');
    press = alice.press(list, 'Ads');
    const cardView = await server.nextEdit(alice.chatId, press.mark, 'Status: active');
    press = alice.press(cardView, 'Withdraw');
    await server.nextMessage(alice.chatId, press.mark, 'How much to withdraw');
    step = alice.send('0.5');
    await server.nextMessage(alice.chatId, step.mark, 'Minimum amount is $1.00');
    step = alice.send('5');
    const withdrawConfirm = await server.nextMessage(alice.chatId, step.mark, 'Withdraw $5.00');
    press = alice.press(withdrawConfirm, 'Confirm');
    await server.nextEdit(alice.chatId, press.mark, 'Withdrew $5.00');

    // Close: the irreversible warning, confirm, the balance back in the wallet.
    // (Closing returns the balance like a withdrawal, so right after one the core refuses it: said before any Confirm.)
    press = alice.press(cardView, 'Close card');
    const wait = await server.nextMessage(alice.chatId, press.mark, 'You can close this card');
    assert.match(
      wait.text,
      /^You can close this card (within 15 minutes|in 14 min \d+ s): a card can be closed 15 minutes after its last withdrawal\./,
    );
    assert.equal(wait.replyMarkup, undefined, 'no Confirm for a close the core would refuse');

    const caller = await runtime.core.authenticate(token);
    await runtime.core.createCard(caller, { bin_id: card.binId, planId: card.planId, name: 'Spare' });
    step = alice.send('/cards');
    const list2 = await server.nextMessage(alice.chatId, step.mark, 'Your cards');
    press = alice.press(list2, 'Spare');
    const spareView = await server.nextEdit(alice.chatId, press.mark, 'Spare');
    press = alice.press(spareView, 'Close card');
    const warning = await server.nextMessage(alice.chatId, press.mark, 'cannot be undone');
    press = alice.press(warning, 'Confirm');
    await server.nextEdit(alice.chatId, press.mark, 'Card closed');
    const closedView = await server.nextEdit(alice.chatId, press.mark, 'Status: closed');
    assert.doesNotMatch(labels(closedView), /Top up|Withdraw|Freeze|Details/);

    // A card with nothing on it has nothing to withdraw: no amount is asked.
    const third = await runtime.core.createCard(caller, { bin_id: card.binId, planId: card.planId, name: 'Third' });
    const tapWithdraw = alice.pressData(closedView, `c:withdraw:${third.id}`);
    await server.nextMessage(alice.chatId, tapWithdraw.mark, '“Third” has nothing to withdraw: its balance is $0.00');

    // /topup with an amount, and the card to pick: two cards are open.
    step = alice.send('/topup 30');
    const pickList = await server.nextMessage(alice.chatId, step.mark, 'Pick a card');
    press = alice.press(pickList, 'Third');
    await server.nextMessage(alice.chatId, press.mark, 'How much to top up');

    // Another user's card id in a button is not found, like a missing one.
    const bob = await runtime.admin.createUser({ name: 'Bob', deposit: 10_000 });
    const bobsCard = await runtime.core.createCard(await runtime.core.authenticate(bob.token), {
      bin_id: card.binId,
      planId: card.planId,
      name: 'Bobs',
    });
    const tapForeign = alice.pressData(closedView, `c:view:${bobsCard.id}`);
    await server.nextMessage(alice.chatId, tapForeign.mark, 'Card not found or access denied');

    // Every call the bot made was accepted, and every button press was answered exactly once.
    assert.deepEqual(
      server.calls.filter((c) => !c.ok).map((c) => `${c.method}: ${c.error}`),
      [],
    );
    assert.deepEqual(server.unansweredQueries(), []);
    void userId;
  });

  it("refuses a card the wallet cannot pay for, in the service's words", async () => {
    const { token } = await runtime.admin.createUser({ name: 'Carol', deposit: 100 });
    const carol = server.user(1003);
    let step = carol.send(token);
    const menu = await server.nextMessage(carol.chatId, step.mark, 'Linked');
    let press = carol.press(menu, 'New card');
    press = carol.press(await server.nextMessage(carol.chatId, press.mark, 'Pick a BIN'), /Online/);
    press = carol.press(await server.nextMessage(carol.chatId, press.mark, 'Pick a plan'), /Basic/);
    await server.nextMessage(carol.chatId, press.mark, 'Name the card');
    step = carol.send('Groceries');
    press = carol.press(await server.nextMessage(carol.chatId, step.mark, 'coupon'), 'Skip');
    const summary = await server.nextMessage(carol.chatId, press.mark, 'Creation fee: $5.00');
    assert.match(summary.text, /Wallet now: \$1\.00, after the fee: -\$4\.00/);
    press = carol.press(summary, 'Confirm');
    await server.nextEdit(
      carol.chatId,
      press.mark,
      'Insufficient balance. Required: $5.00. Nothing was done. Ask your administrator to fund the wallet',
    );
    assert.deepEqual(await runtime.core.listCards(await runtime.core.authenticate(token)), []);
  });

  it('tokens never linger where they were pasted: caption, /start, edit, forward and a group without rights, over real traffic', async () => {
    const dave = server.user(1004);
    const eve = await runtime.admin.createUser({ name: 'Eve', deposit: 0 });
    const { token } = await runtime.admin.createUser({ name: 'Dave', deposit: 0 });
    const gone = (step: { mark: number; message: StoredMessage }) =>
      server.waitForCall(
        (c) =>
          c.ok &&
          c.method === 'deleteMessage' &&
          c.payload.message_id === step.message.messageId &&
          c.payload.chat_id === step.message.chatId,
        step.mark,
      );

    // A photo caption in private: deleted, then linked.
    let step = dave.sendPhoto(`token ${token}`);
    await gone(step);
    await server.nextMessage(dave.chatId, step.mark, 'Linked');

    // /start TOKEN, as a deep link brings it: deleted, linked again.
    step = dave.send(`/start ${token}`);
    await gone(step);
    await server.nextMessage(dave.chatId, step.mark, 'Linked');

    // An edit that adds a token: deleted.
    step = dave.send('hello');
    await server.nextMessage(dave.chatId, step.mark, 'did not get that');
    step = dave.edit(step.message, `hello ${token}`);
    await gone(step);

    // A forward: deleted, nothing linked, and the bot says the original is elsewhere.
    step = dave.forward(eve.token);
    await gone(step);
    await server.nextMessage(dave.chatId, step.mark, 'still in the chat it was forwarded from');

    // In a group where the bot may not delete: the reply still says to revoke the token.
    server.refuse((method, p) =>
      method === 'deleteMessage' && Number(p.chat_id) === -5002
        ? { code: 400, description: "Bad Request: message can't be deleted" }
        : undefined,
    );
    try {
      step = dave.inGroup(-5002).send(`my token: ${token}`);
      const warning = await server.nextMessage(-5002, step.mark, 'revoke it');
      assert.match(warning.text, /could not delete/);
      assert.equal(
        server.calls.find((c) => c.method === 'sendMessage' && c.index >= step.mark)?.payload.reply_parameters?.message_id,
        step.message.messageId,
      );
    } finally {
      server.refuse();
    }
  });

  it("self-deleting messages keep their promise or say they can't: a refused deletion is answered under the message", async () => {
    const { token } = await runtime.admin.createUser({ name: 'Frank', deposit: 50_000 });
    const frank = server.user(1005, { languageCode: 'ru' });
    const caller = await runtime.core.authenticate(token);
    await runtime.core.createCard(caller, {
      bin_id: (await runtime.core.listBins())[0]!.id,
      planId: (await runtime.core.listPlans())[0]!.id,
      name: 'Kept',
    });
    let step = frank.send(token);
    await server.nextMessage(frank.chatId, step.mark, 'Чат привязан');
    step = frank.send('/cards');
    const list = await server.nextMessage(frank.chatId, step.mark);
    let press = frank.press(list, 'Kept');
    const view = await server.nextEdit(frank.chatId, press.mark, 'Kept');
    server.refuse((method, p) =>
      method === 'deleteMessage' && Number(p.chat_id) === frank.chatId
        ? { code: 400, description: "Bad Request: message can't be deleted" }
        : undefined,
    );
    try {
      press = frank.press(view, /👁/);
      const details = await server.nextMessage(frank.chatId, press.mark, 'CVV');
      const notice = await server.nextMessage(frank.chatId, press.mark, 'Не получилось удалить');
      const sent = server.calls.find((c) => c.method === 'sendMessage' && c.payload.text === notice.text)!;
      assert.deepEqual(sent.payload.reply_parameters, { message_id: details.messageId, allow_sending_without_reply: true });
      // Said once: the refused deletion is not tried (nor announced) again.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const inFrank = server.calls.filter((c) => Number(c.payload.chat_id) === frank.chatId);
      assert.equal(inFrank.filter((c) => c.method === 'deleteMessage' && c.payload.message_id === details.messageId).length, 1);
      assert.equal(
        inFrank.filter((c) => c.method === 'sendMessage' && c.payload.reply_parameters?.message_id === details.messageId).length,
        1,
      );
    } finally {
      server.refuse();
    }
  });

  it('business-connection updates are ignored, and not even asked for', async () => {
    const { token } = await runtime.admin.createUser({ name: 'Gina', deposit: 0 });
    assert.ok(Array.isArray(server.lastPoll?.allowed_updates), 'polling names the updates it wants');
    assert.ok(!server.lastPoll!.allowed_updates.some((u: string) => u.includes('business')));
    const mark = server.mark();
    const message = {
      message_id: 1,
      date: server.now(),
      chat: { id: 1006, type: 'private', first_name: 'Gina' },
      from: { id: 1006, is_bot: false, first_name: 'Gina' },
      business_connection_id: 'b1',
    };
    server.pushUpdate({
      business_connection: {
        id: 'b1',
        user: { id: 5555, is_bot: false, first_name: 'Owner' },
        user_chat_id: 5555,
        date: server.now(),
        can_reply: true,
        is_enabled: true,
      },
    });
    server.pushUpdate({ business_message: { ...message, text: `/link ${token}` } });
    server.pushUpdate({ edited_business_message: { ...message, text: token, edit_date: server.now() } });
    server.pushUpdate({ deleted_business_messages: { business_connection_id: 'b1', chat: message.chat, message_ids: [1] } });
    // A marker after them: once it is answered, the business updates were handled (by doing nothing).
    const step = server.user(1006).send('/start');
    await server.nextMessage(1006, step.mark, 'API token');
    const toGina = server.calls.slice(mark).filter((c) => Number(c.payload.chat_id) === 1006);
    assert.deepEqual(
      toGina.map((c) => c.method),
      ['sendMessage'],
    );
    assert.match(toGina[0]!.payload.text, /API token/);
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
    assert.ok(!server.message(bob.chatId, details.messageId)!.deleted, 'not deleted before the restart');
    const restartMark = server.mark();
    await start(5);
    const deletion = await server.waitForCall(
      (c) => c.method === 'deleteMessage' && c.payload.message_id === details.messageId,
      restartMark,
    );
    assert.equal(deletion.ok, true);
    // On time by the stored due time: 5 s after sending, not at the restart.
    assert.ok(deletion.at - details.sentAt! >= 4_900, `deleted after ${deletion.at - details.sentAt!} ms`);
    assert.ok(server.message(bob.chatId, details.messageId)!.deleted);
  });
});
