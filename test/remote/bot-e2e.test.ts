import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import type { CoreRuntime } from '../../src/app/compose.js';
import { createLogger } from '../../src/infra/logger.js';
import type { BotApiServer, ScriptedUser, StoredMessage } from '../helpers/bot-api-server.js';
import { FakeCardService } from '../helpers/fake-card-service.js';
import { assertNotLogged } from '../helpers/log.js';
import { type RemoteBot, startRemoteBot } from '../helpers/remote-bot.js';
import { eventually } from '../helpers/wait.js';

// Issue 19: the bot in front of a card service that is not ours (remote mode), over real Bot API traffic: the
// Bot API test server plays Telegram and the user, a fake service written from the spec plays the card
// service (no card listing, no quote, refusals as 400, a missing card as 403, a cooldown as 200 with
// success: false), the bot runs as `npm start` builds it with CARD_SERVICE_URL set.

describe('remote mode: the bot in front of another card service', { timeout: 240_000 }, () => {
  let bot: RemoteBot;
  let dir: string;
  let server: BotApiServer;
  let fake: FakeCardService;
  let runtime: CoreRuntime;
  const log: string[] = [];

  before(async () => {
    fake = await new FakeCardService().listen();
    bot = await startRemoteBot({
      serviceUrl: fake.url,
      logger: createLogger('trace', { write: (line: string) => void log.push(line) }),
      settings: { CARD_SERVICE_POLL_SECONDS: '1' },
      bot: { adminChatId: -9900, adminUserIds: [9900] },
    });
    ({ dir, server, runtime } = bot);
  });

  /** The WAL as it is now: what a copy of the files taken while the bot runs would hold (checkpoints empty it later). */
  const walWhileRunning: string[] = [];
  function walNow(): void {
    const wal = path.join(dir, 'bot.db-wal');
    if (existsSync(wal)) walWhileRunning.push(readFileSync(wal, 'latin1'));
  }
  afterEach(walNow);

  after(async () => {
    await bot?.stop();
    await fake?.close();
  });

  async function linked(user: ScriptedUser, token: string) {
    const step = user.send(token);
    await server.waitForCall((c) => c.method === 'deleteMessage' && c.payload.message_id === step.message.messageId, step.mark);
    return server.nextMessage(user.chatId, step.mark, 'Linked');
  }

  /**
   * A push found by polling: up to a poll and a budget's turn later, and a busy machine (the whole suite beside
   * it) may stretch both; the watcher's own latency is measured in `npm run bench -- remote-push`.
   */
  const pushed = (user: ScriptedUser, mark: number, text: string) =>
    server.waitForCall(
      (c) => c.ok && c.method === 'sendMessage' && Number(c.payload.chat_id) === user.chatId && String(c.payload.text).includes(text),
      mark,
      45_000,
      `a push to ${user.chatId} holding ${text}`,
    );

  /** Creates a card through the flow (the first BIN and the Basic plan, no coupon); returns its view. */
  async function createCard(user: ScriptedUser, menu: StoredMessage, name: string) {
    let press = user.press(menu, 'New card');
    const binPrompt = await server.nextMessage(user.chatId, press.mark, 'Pick a BIN');
    press = user.press(binPrompt, /531993|Wallet/);
    const planPrompt = await server.nextMessage(user.chatId, press.mark, 'Pick a plan');
    press = user.press(planPrompt, /Basic/);
    await server.nextMessage(user.chatId, press.mark, 'Name the card');
    const step = user.send(name);
    const couponPrompt = await server.nextMessage(user.chatId, step.mark, 'coupon');
    press = user.press(couponPrompt, 'Skip');
    const summary = await server.nextMessage(user.chatId, press.mark, 'Creation fee');
    press = user.press(summary, 'Confirm');
    const view = await server.nextEdit(user.chatId, press.mark, 'created');
    assert.match(view.text, /Balance/);
    return view;
  }

  it('links a token of no known shape, kept sealed; a wrong one is refused in the service words', async () => {
    const eve = server.user(9101);
    let step = eve.send('not-a-token-of-that-service');
    await server.nextMessage(eve.chatId, step.mark, 'Invalid or missing API token');
    const token = fake.addUser('current', 50_000);
    step = eve.send(`/link ${token}`);
    await server.nextMessage(eve.chatId, step.mark, 'Linked');
    // The service was asked with the token (its health check), and the token is kept only sealed.
    const row = await runtime.database.db
      .withTables<{ bot_chat_links: { chat_id: number; sealed_token: string | null; user_id: string } }>()
      .selectFrom('bot_chat_links')
      .select(['sealed_token', 'user_id'])
      .where('chat_id', '=', eve.chatId)
      .executeTakeFirstOrThrow();
    assert.match(row.sealed_token!, /^v3\./);
    assert.ok(!row.sealed_token!.includes(token));
    assert.match(row.user_id, /^remote:/);
  });

  it('runs the card flows against the service: wallet, create, top-up without a quote, freeze, details, transactions, close', async () => {
    const alice = server.user(9102);
    const token = fake.addUser('current', 100_000);
    const menu = await linked(alice, token);

    let press = alice.press(menu, 'Wallet');
    await server.nextEdit(alice.chatId, press.mark, 'Wallet balance: $1,000.00');
    press = alice.press(menu, 'Menu');
    await server.nextEdit(alice.chatId, press.mark, 'Main menu');

    const view = await createCard(alice, menu, 'Remote');
    let step: ReturnType<ScriptedUser['send']>;
    const [cardId] = [...fake.cards.values()].filter((c) => c.name === 'Remote').map((c) => c.id);
    assert.ok(cardId, 'the service issued the card');

    // No quote at this service: the amount is confirmed, and amount, fee and total come from the reply.
    press = alice.press(view, 'Top up');
    await server.nextMessage(alice.chatId, press.mark, 'How much to top up');
    step = alice.send('50');
    const confirm = await server.nextMessage(alice.chatId, step.mark, 'The service tells its fee only once it is done');
    press = alice.press(confirm, 'Confirm');
    await server.nextEdit(alice.chatId, press.mark, /Topped up \$50\.00 \(fee \$2\.50, total charged \$52\.50\)/);
    assert.equal(fake.cards.get(cardId)!.balance, 5_000);
    // A POST carried an Idempotency-Key (the service may ignore it), and one Confirm sent one top-up.
    const topups = fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/topup'));
    assert.equal(topups.length, 1);
    assert.ok(topups[0]!.idempotencyKey);

    // The cooldown, as this service answers it (200 with success: false), in the user's words.
    press = alice.press(view, 'Top up');
    await server.nextMessage(alice.chatId, press.mark, 'How much to top up');
    step = alice.send('20');
    const again = await server.nextMessage(alice.chatId, step.mark, 'The service tells its fee');
    press = alice.press(again, 'Confirm');
    await server.nextEdit(alice.chatId, press.mark, 'Please wait');

    // The cards the bot knows (this service lists none): the one it created.
    step = alice.send('/cards');
    const list = await server.nextMessage(alice.chatId, step.mark, 'Your cards');
    press = alice.press(list, 'Remote');
    const cardView = await server.nextEdit(alice.chatId, press.mark, 'Status: active');

    press = alice.press(cardView, 'Freeze');
    const frozen = await server.nextEdit(alice.chatId, press.mark, 'Status: frozen');
    assert.equal(fake.cards.get(cardId)!.status, 'frozen');
    press = alice.press(frozen, 'Unfreeze');
    const active = await server.nextEdit(alice.chatId, press.mark, 'Status: active');

    press = alice.press(active, 'Details');
    const details = await server.nextMessage(alice.chatId, press.mark, 'Card details');
    assert.equal(details.protectContent, true);
    assert.ok(
      details.text.includes(fake.cards.get(cardId)!.pan.replace(/(\d{4})(?=\d)/g, '$1 ')) ||
        details.text.includes(fake.cards.get(cardId)!.pan),
    );

    // A purchase at the service reaches the chat without any event: the watcher finds it.
    let mark = server.mark();
    fake.purchase(cardId, 1_234, 'Remote shop');
    await pushed(alice, mark, 'Remote shop');

    // "Waiting for a code": the card is watched closely (every second) for five minutes.
    const waiting = alice.press(active, 'Waiting for a code');
    const answer = await server.waitForCall(
      (c) => c.method === 'answerCallbackQuery' && c.payload.callback_query_id === waiting.queryId,
      waiting.mark,
    );
    assert.match(String(answer.payload.text), /Watching this card for 5 minutes/);

    // An OTP: found by polling the card's OTP list, pushed once.
    mark = server.mark();
    const otp = fake.addOtp(cardId);
    await pushed(alice, mark, otp.code);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal(
      server.calls.filter((c) => c.method === 'sendMessage' && String(c.payload.text).includes(otp.code)).length,
      1,
      'pushed once',
    );

    press = alice.press(active, 'Transactions');
    const statement = await server.nextEdit(alice.chatId, press.mark, /Remote shop/);

    // A withdrawal made elsewhere (not through this bot) is not known here: the service refuses the close after
    // Confirm, and the chat words it about closing.
    press = alice.press(statement, 'Back to card');
    const back = await server.nextEdit(alice.chatId, press.mark, 'Status: active');
    fake.cards.get(cardId)!.lastWithdrawAt = Date.now();
    press = alice.press(back, 'Close');
    let warning = await server.nextMessage(alice.chatId, press.mark, 'This cannot be undone');
    press = alice.press(warning, 'Confirm');
    await server.nextEdit(
      alice.chatId,
      press.mark,
      /^You can close this card within 15 minutes: a card can be closed 15 minutes after its last withdrawal\./,
    );
    assert.equal(fake.cards.get(cardId)!.status, 'active');

    // Closed at the service: the balance goes back to the wallet there.
    fake.cards.get(cardId)!.lastWithdrawAt = undefined;
    press = alice.press(back, 'Close');
    warning = await server.nextMessage(alice.chatId, press.mark, 'This cannot be undone');
    press = alice.press(warning, 'Confirm');
    await server.nextEdit(alice.chatId, press.mark, /Card closed\. \$37\.66 returned/);
    assert.equal(fake.cards.get(cardId)!.status, 'closed');
  });

  it("the admins' /stats counts what the bot sees: linked chats, known and watched cards, pushes", async () => {
    const admin = server.user(9900);
    const step = admin.inGroup(-9900).send('/stats');
    const stats = await server.nextMessage(-9900, step.mark, 'in front of the card service');
    assert.match(stats.text, /Linked chats: \d+ \(\d+ users\)/);
    assert.match(stats.text, /Cards the bot knows: [1-9]\d* \(1 watched for a code now\)/);
    assert.match(stats.text, /Pushes sent today: [1-9]/);
  });

  it('an earlier-shape service: a card issued Processing, then active; withdraw, a lost answer, a close in cooldown, /addcard', async () => {
    const dan = server.user(9105);
    const token = fake.addUser('earlier', 100_000);
    const menu = await linked(dan, token);
    const view = await createCard(dan, menu, 'Older');
    let press: ReturnType<ScriptedUser['press']>;
    let step: ReturnType<ScriptedUser['send']>;
    assert.match(view.text, /being issued/);
    const card = [...fake.cards.values()].find((c) => c.name === 'Older')!;
    assert.equal(card.status, 'Processing');

    // Issued at the provider: the card view shows it active, and the money moves.
    fake.activate(card.id);
    step = dan.send('/cards');
    const list = await server.nextMessage(dan.chatId, step.mark, 'Your cards');
    press = dan.press(list, 'Older');
    const cardView = await server.nextEdit(dan.chatId, press.mark, 'Status: active');
    press = dan.press(cardView, 'Top up');
    await server.nextMessage(dan.chatId, press.mark, 'How much to top up');
    step = dan.send('100');
    let confirm = await server.nextMessage(dan.chatId, step.mark, 'The service tells its fee');
    press = dan.press(confirm, 'Confirm');
    await server.nextEdit(dan.chatId, press.mark, 'Topped up $100.00');

    press = dan.press(cardView, 'Withdraw');
    await server.nextMessage(dan.chatId, press.mark, 'How much to withdraw');
    step = dan.send('30');
    confirm = await server.nextMessage(dan.chatId, step.mark, 'Withdraw $30.00');
    press = dan.press(confirm, 'Confirm');
    await server.nextEdit(dan.chatId, press.mark, 'Withdrew $30.00');
    assert.equal(card.balance, 7_000);

    // A movement whose answer is lost: not sent again; the user is told the outcome is not known, and the card and the wallet read again.
    fake.hang = (method, pathname) => method === 'POST' && pathname.endsWith('/topup');
    try {
      press = dan.press(cardView, 'Top up');
      await server.nextMessage(dan.chatId, press.mark, 'How much to top up');
      step = dan.send('10');
      confirm = await server.nextMessage(dan.chatId, step.mark, 'The service tells its fee');
      const sentBefore = fake.requests.length;
      press = dan.press(confirm, 'Confirm');
      const unknown = await server.nextEdit(dan.chatId, press.mark, 'did not answer in time, so whether it was done is not known yet');
      const topups = fake.requests.slice(sentBefore).filter((r) => r.method === 'POST' && r.path.endsWith('/topup'));
      assert.equal(topups.length, 1, 'one Confirm, one request: a lost POST is not sent again');
      // The card and the wallet read again: shown as the service now says them (the lost top-up was not carried out).
      assert.match(unknown.text, /Now at the card service: “Older” holds \$70\.00; wallet \$921\.00\./);
      // The card read again and its view redrawn (Telegram answers "not modified" when nothing changed).
      await server.waitForCall((c) => c.method === 'editMessageText' && String(c.payload.text).includes('Balance: $70.00'), press.mark);
    } finally {
      fake.hang = undefined;
    }

    // The bot made the withdrawal, so it knows the cooldown that closures share with withdrawals (4.7, 4.11): Close
    // says the wait before Confirm, in words about closing, and sends nothing.
    const closesBefore = fake.requests.filter((r) => r.path.endsWith('/close')).length;
    press = dan.press(cardView, 'Close');
    await server.nextMessage(
      dan.chatId,
      press.mark,
      /^You can close this card (in \d.*|within 15 minutes): a card can be closed 15 minutes after its last withdrawal\. Nothing was done\./,
    );
    assert.equal(fake.requests.filter((r) => r.path.endsWith('/close')).length, closesBefore, 'no close sent');
    assert.equal(card.status, 'active');
    // Withdraw says its wait up front too.
    press = dan.press(cardView, 'Withdraw');
    await server.nextMessage(dan.chatId, press.mark, /^Please wait 15 minutes between withdrawals \(the next one in \d/);

    // A card the bot does not know (made elsewhere): added by its id; someone else's is refused.
    const other = [...fake.cards.values()].find((c) => c.name === 'Remote')!;
    step = dan.send(`/addcard ${other.id}`);
    await server.nextMessage(dan.chatId, step.mark, /not found|access denied/i);
    step = dan.send(`/addcard ${card.id}`);
    await server.nextMessage(dan.chatId, step.mark, 'Status: active');
  });

  it('says so when the service is down, stays up, and works again when it is back; one log line each', async () => {
    const bob = server.user(9103);
    const menu = await linked(bob, fake.addUser('earlier', 20_000));
    const logged = log.join('').length;
    fake.down = true;
    let press = bob.press(menu, 'Wallet');
    await server.nextMessage(bob.chatId, press.mark, 'The card service is not answering');
    assert.equal(await bot.remote.cardServiceReady(), false);
    fake.down = false;
    press = bob.press(menu, 'Wallet');
    await server.nextEdit(bob.chatId, press.mark, 'Wallet balance: $200.00');
    assert.equal(await bot.remote.cardServiceReady(), true);
    const since = () => log.join('').slice(logged);
    await eventually('the outage logged once and its end once', () => since().includes('the card service answers again'));
    assert.equal(since().split('the card service is not answering').length - 1, 1);
  });

  it('a token the service stops taking ends the link; the chat is told', async () => {
    const carol = server.user(9104);
    const token = fake.addUser('current', 10_000);
    const menu = await linked(carol, token);
    fake.revoke(token);
    const press = carol.press(menu, 'Wallet');
    await server.nextMessage(carol.chatId, press.mark, 'Invalid or missing API token');
    await eventually('the link ended', async () => {
      const rows = await runtime.database.db
        .withTables<{ bot_chat_links: { chat_id: number } }>()
        .selectFrom('bot_chat_links')
        .select('chat_id')
        .where('chat_id', '=', carol.chatId)
        .execute();
      return rows.length === 0;
    });
  });

  it('money in is not offered: no "Add money" in the menu or the command list, and /deposit says why', async () => {
    const frank = server.user(9106);
    const menu = await linked(frank, fake.addUser('current', 1_000));
    const labels = menu.replyMarkup?.inline_keyboard.flat().map((b) => b.text) ?? [];
    assert.ok(
      labels.some((l) => l.includes('Top up')),
      labels.join(', '),
    );
    assert.ok(!labels.some((l) => l.includes('Add money')), labels.join(', '));
    const commandLists = server.calls.filter((c) => c.method === 'setMyCommands');
    assert.ok(commandLists.length > 0, 'the bot registers its commands at start');
    for (const call of commandLists) assert.ok(!JSON.stringify(call.payload).includes('"deposit"'), 'no /deposit in the command list');
    for (const text of ['/deposit', '/deposit 50']) {
      const step = frank.send(text);
      await server.nextMessage(frank.chatId, step.mark, 'Adding money to the wallet is not offered here: your card service does it.');
    }
    const help = frank.send('/help');
    const helpText = (await server.nextMessage(frank.chatId, help.mark, /\/cancel/)).text ?? '';
    assert.doesNotMatch(helpText, /\/deposit/);
    assert.match(helpText, /\/details — a card's details\n\/addcard ID — [^\n]+\n\/cancel/);
  });

  it('a service without the OTP-e-mail request (4.14): the button says so once, then is left out', async () => {
    const gina = server.user(9107);
    const menu = await linked(gina, fake.addUser('current', 50_000));
    const view = await createCard(gina, menu, 'Mailless');
    fake.otpRequest = false;
    try {
      let press = gina.press(view, 'OTPs');
      const none = await server.nextEdit(gina.chatId, press.mark, 'No OTPs');
      press = gina.press(none, 'Request from e-mail');
      const said = await server.nextMessage(gina.chatId, press.mark, /e-mail|Not Found/);
      assert.match(said.text, /does not offer asking for a code by e-mail/);
      press = gina.press(none, 'Back to card');
      const back = await server.nextEdit(gina.chatId, press.mark, 'Status: active');
      press = gina.press(back, 'OTPs');
      const again = await server.nextEdit(gina.chatId, press.mark, 'No OTPs');
      const labels = again.replyMarkup?.inline_keyboard.flat().map((b) => b.text) ?? [];
      assert.ok(!labels.some((l) => l.includes('Request from e-mail')), labels.join(', '));
      assert.ok(labels.some((l) => l.includes('Waiting for a code')));
    } finally {
      fake.otpRequest = true;
    }
  });

  it('no token, card number or CVV reaches the log, the database file or its WAL (read after every test too)', () => {
    walNow();
    const tokens = [...fake.users.keys()];
    const cards = [...fake.cards.values()];
    assertNotLogged(log.join('\n'), [...tokens, ...cards.flatMap((c) => [c.pan, c.cvv])]);
    assert.ok(log.length > 20, 'the log was written at trace');
    const files = [path.join(dir, 'bot.db'), path.join(dir, 'bot.db-wal')].filter(existsSync).map((f) => readFileSync(f, 'latin1'));
    const places: [string, string][] = [
      ...files.map((f, i): [string, string] => [`database file ${i}`, f]),
      ...walWhileRunning.map((w, i): [string, string] => [`WAL snapshot ${i}`, w]),
    ];
    assert.ok(walWhileRunning.length > 1, 'the WAL was read while the bot ran');
    // The scan sees text in the files: the cards' masked numbers are there in clear.
    assert.ok(
      cards.some((c) => places.some(([, text]) => text.includes(c.pan.slice(-4)))),
      'the last digits of a card are readable in the files',
    );
    const hits: string[] = [];
    for (const [where, text] of places) {
      for (const t of tokens) if (text.includes(t)) hits.push(`a token in ${where}`);
      for (const { pan, cvv } of cards) {
        if (text.includes(pan) || text.includes(pan.replace(/(\d{4})(?=\d)/g, '$1 '))) hits.push(`a PAN in ${where}`);
        // A bare 3-digit number turns up by chance in any file: a CVV is looked for as it would be written.
        if (new RegExp(`cvv\\W{0,4}${cvv}\\b`, 'i').test(text)) hits.push(`a CVV in ${where}`);
      }
    }
    assert.deepEqual(hits, []);
  });
});
