import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { COMMANDS } from '../../src/admin/commands.js';
import { saveLink } from '../../src/bot/store/chat-links.js';
import { botTables } from '../../src/bot/store/tables.js';
import { GROUPS, runAdmin } from '../../src/admin/run.js';
import { adminCommands } from '../helpers/admin.js';
import { createTestCore, newCard, newCustomer, type TestCore } from '../helpers/core.js';

describe('admin command line', () => {
  let t: TestCore;
  before(async () => {
    t = await createTestCore();
  });
  after(async () => {
    await t.close();
  });

  const admin = adminCommands(() => t);

  test('users create prints a token once that authenticates, with the deposit in the wallet', async () => {
    const result = await admin('users', 'create', '--name', 'Carol', '--deposit', '125.50', '--json');
    assert.equal(result.code, 0);
    const { token, userId, walletBalance } = result.json();
    assert.equal(walletBalance, '125.50');
    const caller = await t.core.authenticate(token);
    assert.equal(caller.userId, userId);
    assert.equal((await t.core.walletBalance(caller)).balance, 12_550);
  });

  test('users list shows wallet balance and card count', async () => {
    const alice = await newCustomer(t, 50_000, 'ListMe');
    await newCard(t, alice);
    const users = (await admin('users', 'list', '--json')).json().users as { id: string; walletBalance: string; cardCount: number }[];
    const row = users.find((u) => u.id === alice.userId);
    assert.deepEqual({ walletBalance: row?.walletBalance, cardCount: row?.cardCount }, { walletBalance: '495.00', cardCount: 1 });
  });

  test('tokens issue gives a second working token; tokens revoke ends one', async () => {
    const bob = await newCustomer(t, 0, 'Bob');
    const issued = await admin('tokens', 'issue', '--user', bob.userId, '--json');
    const second = issued.json().token as string;
    assert.equal((await t.core.authenticate(second)).userId, bob.userId);
    assert.equal((await admin('tokens', 'revoke', '--token', second)).code, 0);
    await assert.rejects(t.core.authenticate(second), /Invalid or missing API token/);
    assert.equal((await t.core.authenticate(bob.token)).userId, bob.userId);
  });

  test('wallet deposit funds the wallet through the ledger', async () => {
    const dan = await newCustomer(t, 0, 'Dan');
    const result = await admin('wallet', 'deposit', '--user', dan.userId, '--amount', '20', '--json');
    assert.equal(result.json().walletBalance, '20.00');
    assert.equal((await admin('ledger', 'check', '--json')).json().consistent, true);
    const journal = await t.database.db
      .selectFrom('journals')
      .innerJoin('entries', 'entries.journal_id', 'journals.id')
      .select(['journals.kind', 'entries.amount'])
      .where('entries.account_id', '=', dan.caller.walletAccountId)
      .execute();
    assert.deepEqual(
      journal.map((j) => [j.kind, Number(j.amount)]),
      [['deposit', 2_000]],
    );
  });

  test('with --json every outcome is one JSON object on standard output: refusals and usage errors too', async () => {
    const erin = await newCustomer(t, 1_000, 'Erin2');
    const refused = await admin('wallet', 'deposit', '--user', erin.userId, '--amount=-5', '--json');
    assert.equal(refused.code, 1);
    assert.deepEqual(refused.json(), { ok: false, error: '--amount must be an amount like 25 or 25.50' });
    assert.equal(refused.err, '');
    const usage = await admin('users', 'create', '--nme', 'x', '--json');
    assert.equal(usage.code, 2);
    assert.equal(usage.json().ok, false);
    assert.match(usage.json().usage, /users create/);
    const unknown = await admin('frobnicate', '--json');
    assert.equal(unknown.code, 2);
    assert.equal(unknown.json().error, "unknown command 'frobnicate'");
  });

  test('a bad amount is refused with exit code 1 and changes nothing', async () => {
    const erin = await newCustomer(t, 1_000, 'Erin');
    for (const bad of ['-5', '1.234', 'ten', '0']) {
      const result = await admin('wallet', 'deposit', '--user', erin.userId, `--amount=${bad}`);
      assert.equal(result.code, 1, bad);
      assert.match(result.err, /Refused: /);
    }
    assert.equal((await t.core.walletBalance(erin.caller)).balance, 1_000);
  });

  test('an unknown command or option is a usage error with exit code 2', async () => {
    assert.equal((await admin('frobnicate')).code, 2);
    const result = await admin('users', 'create', '--name', 'x', '--nme', 'y');
    assert.equal(result.code, 2);
    assert.match(result.err, /unknown option '--nme'/);
    assert.match(result.err, /Usage: cards-admin users create --name NAME \[--deposit AMOUNT\]/);
  });

  test('help and the version are answers on standard output with exit code 0; each command has its own help', async () => {
    for (const argv of [['--help'], ['-h'], ['help']]) {
      const help = await admin(...argv);
      assert.equal(help.code, 0, argv.join(' '));
      assert.match(help.out, /^Usage: cards-admin \[options\] \[command\]/);
      // One line per group saying what it is for.
      assert.match(help.out, /\n {2}users +Cardholders: create one/);
      assert.match(help.out, /\n {2}keys +The card-data key: /);
      assert.doesNotMatch(help.out, /\w+ commands\n/, 'no group described only by its name');
      assert.equal(help.err, '');
    }
    // Each word but the last is a group (`provider lithic status`: the groups `provider` and `provider lithic`).
    const groups = new Set(
      Object.keys(COMMANDS).flatMap((name) => {
        const words = name.split(' ');
        return words.slice(0, -1).map((_, i) => words.slice(0, i + 1).join(' '));
      }),
    );
    assert.deepEqual(new Set(Object.keys(GROUPS)), groups, 'every group has its line, and only groups');
    const version = await admin('--version');
    assert.deepEqual([version.code, version.out], [0, '0.1.0']);
    const own = await admin('users', 'create', '--help');
    assert.equal(own.code, 0);
    assert.match(own.out, /^Usage: cards-admin users create \[options\]\n\nCreate a user with a wallet/);
    assert.match(own.out, /--name <NAME>/);
    assert.doesNotMatch(own.out, /simulate/, 'only this command, not all of them');
    const group = await admin('simulate', '--help');
    assert.match(group.out, /otp-email \[options\] +Sandbox: an OTP e-mail lands in the mailbox/);
  });

  test('--version --json and --help --json print one JSON object each, with exit code 0', async () => {
    const version = await admin('--version', '--json');
    assert.equal(version.code, 0);
    assert.deepEqual(version.json(), { ok: true, version: '0.1.0' });
    for (const argv of [
      ['--help', '--json'],
      ['-h', '--json'],
      ['help', '--json'],
    ]) {
      const help = await admin(...argv);
      assert.equal(help.code, 0, argv.join(' '));
      const json = help.json();
      assert.equal(json.ok, true);
      assert.match(json.help, /^Usage: cards-admin \[options\] \[command\]/);
      assert.equal(json.groups.users, GROUPS.users);
      assert.equal(json.commands.length, Object.keys(COMMANDS).length);
      assert.deepEqual(
        json.commands.find((c: { command: string }) => c.command === 'backup'),
        {
          command: 'backup',
          usage: 'cards-admin backup --to FILE [--force]',
          description: COMMANDS.backup!.description,
        },
      );
    }
    const group = (await admin('keys', '--help', '--json')).json();
    assert.deepEqual(
      group.commands.map((c: { command: string }) => c.command),
      ['keys status', 'keys rotate'],
    );
    assert.match(group.help, /^Usage: cards-admin keys/);
    const alone = await admin('keys', '--json');
    assert.equal(alone.code, 2);
    assert.equal(alone.json().ok, false);
    assert.equal(alone.json().commands.length, 2);
  });

  test("every command's help describes every one of its options", async () => {
    for (const [name, command] of Object.entries(COMMANDS)) {
      const help = await admin(...name.split(' '), '--help');
      assert.equal(help.code, 0, name);
      const options = help.out.split('\nOptions:\n')[1] ?? '';
      for (const option of Object.keys(command.options)) {
        // `--name <NAME>` then two spaces or more and its description, on the same line.
        const line = new RegExp(`^ +--${option}(?: <[^>]+>)? {2,}\\S`, 'm');
        assert.match(options, line, `${name}: --${option} has no description in\n${help.out}`);
      }
    }
  });

  test('a mistyped command is answered with what was meant; a missing option or argument is a usage error (2)', async () => {
    const typo = await admin('users', 'creat', '--name', 'x');
    assert.equal(typo.code, 2);
    assert.match(typo.err, /unknown command 'creat'\n\(Did you mean create\?\)/);
    const group = await admin('usrs', 'list');
    assert.match(group.err, /Did you mean users\?/);
    const missing = await admin('wallet', 'deposit', '--user', 'u1');
    assert.equal(missing.code, 2);
    assert.match(missing.err, /required option '--amount <AMOUNT>' not specified/);
    const bare = await admin('bins', 'enable');
    assert.equal(bare.code, 2);
    assert.match(bare.err, /missing required argument 'BIN_ID'/);
    const nothing = await admin();
    assert.equal(nothing.code, 2);
    assert.match(nothing.err, /^Usage: cards-admin/);
  });

  test('in remote mode the commands about users, cards and money refuse (2) and say what is left', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (s: string) => out.push(s), err: (s: string) => err.push(s) };
    const open = async () => ({ ...t, close: async () => {} });
    assert.equal(await runAdmin(['users', 'create', '--name', 'X'], open, io, { remote: true }), 2);
    assert.match(err.join('\n'), /users create works on the embedded core only: CARD_SERVICE_URL is set/);
    assert.match(err.join('\n'), /links list, links remove, keys status/);
    assert.equal(await runAdmin(['links', 'list', '--json'], open, io, { remote: true }), 0);
    assert.equal(JSON.parse(out.at(-1)!).ok, true);
  });

  test("in remote mode a live link's token is the card service's, not one of ours that is gone", async () => {
    const out: string[] = [];
    const io = { out: (s: string) => out.push(s), err: () => {} };
    const open = async () => ({ ...t, close: async () => {} });
    await saveLink(
      botTables(t.database.db),
      { chatId: 5151, userId: 'remote:abc', tokenHash: 'their-hash', sealedToken: 'sealed' },
      new Date(),
    );
    assert.equal(await runAdmin(['links', 'list'], open, io, { remote: true }), 0);
    const line = out
      .at(-1)!
      .split('\n')
      .find((l) => l.includes('chat 5151'));
    assert.match(line ?? '', /token of the card service/);
    assert.doesNotMatch(out.at(-1)!, /\(gone\)/);
  });

  test('a negative chat id is taken as the option value it is (group chats)', async () => {
    // Read as the chat's id (not as an unknown option): the chat is looked up, and is not linked.
    const removed = await admin('links', 'remove', '--chat', '-1001234567890', '--json');
    assert.deepEqual([removed.code, removed.json()], [1, { ok: false, error: 'Chat -1001234567890 is not linked' }]);
  });

  test('bins add refuses what cardholders would then see: an unknown network, currency or country, a BIN listed already', async () => {
    const add = (...extra: string[]) => admin('bins', 'add', '--bin', '777001', ...extra, '--json');
    const refusals: [string[], string][] = [
      [['--network', 'mastercard'], 'The network must be one of visa, master (did you mean master?)'],
      [['--network', 'amexx'], 'The network must be one of visa, master'],
      [['--network', 'visa', '--currency', 'XYZ'], 'XYZ is not an ISO 4217 currency code'],
      [['--network', 'visa', '--country', 'ZZ'], 'ZZ is not an ISO 3166-1 alpha-2 country code'],
      [['--network', 'visa', '--country', 'USA'], 'USA is not an ISO 3166-1 alpha-2 country code'],
    ];
    for (const [extra, error] of refusals) {
      const refused = await add(...extra);
      assert.deepEqual([refused.code, refused.json()], [1, { ok: false, error }], extra.join(' '));
    }
    assert.ok(!(await t.admin.listBins()).some((b) => b.bin === '777001'), 'nothing was added');
    const added = await add('--network', 'Master', '--currency', 'eur', '--country', 'de');
    assert.equal(added.code, 0, added.out);
    assert.deepEqual(
      (({ network, currency, country }) => ({ network, currency, country }))(added.json().bin),
      { network: 'master', currency: 'EUR', country: 'DE' },
      'stored in their canonical case',
    );
    const again = await add('--network', 'visa');
    assert.equal(again.code, 1);
    assert.match(again.json().error, /^BIN 777001 is listed already \(/);
    assert.equal((await t.admin.listBins()).filter((b) => b.bin === '777001').length, 1);
  });

  test('bins disable hides a BIN from the list and from card creation; bins enable brings it back', async () => {
    const added = (await admin('bins', 'add', '--bin', '999999', '--network', 'visa', '--wallet', '--json')).json().bin as { id: string };
    assert.ok((await t.core.listBins()).some((b) => b.id === added.id));
    assert.equal((await admin('bins', 'disable', added.id)).code, 0);
    assert.ok(!(await t.core.listBins()).some((b) => b.id === added.id));
    assert.equal((await admin('bins', 'enable', added.id)).code, 0);
    assert.ok((await t.core.listBins()).some((b) => b.id === added.id));
    assert.equal((await admin('bins', 'add', '--bin', '12345', '--network', 'visa')).code, 1);
  });

  test('plans add and plans deactivate change what card creation offers', async () => {
    const plan = (await admin('plans', 'add', '--name', 'Gold', '--limit', '7500', '--fee', '9.99', '--json')).json().plan as {
      id: number;
    };
    assert.ok((await t.core.listPlans()).some((p) => p.id === plan.id && p.creationFee === 999 && p.limit === 750_000));
    assert.equal((await admin('plans', 'deactivate', String(plan.id))).code, 0);
    assert.ok(!(await t.core.listPlans()).some((p) => p.id === plan.id));
  });

  test('fees set changes the quoted platform fee', async () => {
    const frank = await newCustomer(t, 100_000, 'Frank');
    const card = await newCard(t, frank, 'Fees', 'Online');
    assert.equal((await admin('fees', 'set', '--category', 'Online', '--percent', '1.5', '--fixed', '0.10')).code, 0);
    const quote = await t.core.quoteTopup(frank.caller, card.id, { amount: 10_000 });
    assert.equal(quote.platformFee, 160);
    const fees = (await admin('fees', 'list', '--json')).json().fees as { category: string; percent: string }[];
    assert.equal(fees.find((f) => f.category === 'Online')?.percent, '1.50');
    assert.equal((await admin('fees', 'set', '--category', 'Gift', '--percent', '1', '--fixed', '0')).code, 1);
  });

  test('coupons create, list and deactivate', async () => {
    assert.equal((await admin('coupons', 'create', '--code', 'HALF', '--percent', '50', '--max-redemptions', '3')).code, 0);
    assert.equal((await admin('coupons', 'create', '--code', 'HALF', '--percent', '50')).code, 1);
    assert.equal((await admin('coupons', 'create', '--code', 'BOTH', '--percent', '5', '--amount', '1')).code, 1);
    const listed = (await admin('coupons', 'list', '--json')).json().coupons as { code: string; maxRedemptions: number }[];
    assert.equal(listed.find((c) => c.code === 'HALF')?.maxRedemptions, 3);
    assert.equal((await admin('coupons', 'deactivate', 'HALF')).code, 0);
    assert.equal(
      ((await admin('coupons', 'list', '--json')).json().coupons as { code: string; active: boolean }[]).find((c) => c.code === 'HALF')
        ?.active,
      false,
    );
  });

  test('simulate purchase is approved on an active card and declined with card_frozen on a frozen one', async () => {
    const gina = await newCustomer(t, 100_000, 'Gina');
    const card = await newCard(t, gina);
    await t.core.topup(gina.caller, card.id, { amount: 5_000 });
    const approved = (await admin('simulate', 'purchase', '--card', card.id, '--amount', '12.34', '--merchant', 'Shop', '--json')).json();
    assert.deepEqual([approved.status, approved.cardBalance], ['Approved', '37.66']);
    await t.core.freeze(gina.caller, card.id);
    const declined = (await admin('simulate', 'purchase', '--card', card.id, '--amount', '1', '--json')).json();
    assert.deepEqual([declined.status, declined.declineCode], ['Declined', 'card_frozen']);
    // A refund is owed whatever the card's state: a frozen card gets it.
    const refund = (await admin('simulate', 'refund', '--card', card.id, '--amount', '2.34', '--json')).json();
    assert.deepEqual([refund.status, refund.cardBalance], ['Approved', '40.00']);
  });

  test('simulate otp and otp-email reach the card', async () => {
    const hal = await newCustomer(t, 100_000, 'Hal');
    const card = await newCard(t, hal);
    const otp = (await admin('simulate', 'otp', '--card', card.id, '--amount', '9.99', '--json')).json();
    assert.equal((await t.core.listOtps(hal.caller, card.id)).otps[0]?.code, otp.code);
    const mail = (await admin('simulate', 'otp-email', '--card', card.id, '--json')).json();
    assert.equal((await t.core.requestOtp(hal.caller, card.id)).cardInfo.otpCode, mail.code);
  });

  test('ledger check reports a consistent ledger with exit code 0', async () => {
    const result = await admin('ledger', 'check');
    assert.equal(result.code, 0);
    assert.match(result.out, /Ledger is consistent/);
  });

  test('tokens list shows id, prefix, created, last used and revoked, never a token', async () => {
    const kim = await newCustomer(t, 0, 'Kim');
    t.clock.advance(1_000);
    const spare = (await admin('tokens', 'issue', '--user', kim.userId, '--json')).json().token as string;
    t.clock.advance(120_000);
    await t.core.authenticate(kim.token);
    await admin('tokens', 'revoke', '--token', spare);
    const listed = await admin('tokens', 'list', '--user', kim.userId, '--json');
    const tokens = listed.json().tokens as Record<string, string | null>[];
    assert.deepEqual(
      tokens.map((row) => [row.prefix, row.lastUsedAt !== null, row.revokedAt !== null]),
      [
        [kim.token.slice(0, 7), true, false],
        [spare.slice(0, 7), false, true],
      ],
    );
    assert.deepEqual(Object.keys(tokens[0]!).sort(), ['createdAt', 'id', 'lastUsedAt', 'prefix', 'revokedAt', 'userId']);
    const human = await admin('tokens', 'list', '--user', kim.userId);
    assert.match(human.out, /REVOKED/);
    for (const out of [listed.out, human.out]) assert.ok(!out.includes(kim.token) && !out.includes(spare), 'no plaintext token');
  });

  test('tokens revoke --id needs no plaintext; --user needs --all; one way at a time', async () => {
    const lee = await newCustomer(t, 0, 'Lee');
    const [token] = (await admin('tokens', 'list', '--user', lee.userId, '--json')).json().tokens as { id: string }[];
    assert.equal((await admin('tokens', 'revoke', '--user', lee.userId)).code, 1);
    assert.equal((await admin('tokens', 'revoke', '--id', token!.id, '--user', lee.userId, '--all')).code, 1);
    await t.core.authenticate(lee.token);
    const revoked = await admin('tokens', 'revoke', '--id', token!.id, '--json');
    assert.deepEqual(revoked.json(), { ok: true, revoked: 1, unlinkedChats: [] });
    await assert.rejects(t.core.authenticate(lee.token), /Invalid or missing API token/);
    assert.equal((await admin('tokens', 'revoke', '--id', token!.id)).code, 1);
  });

  test('users show and cards list give an operator the card ids, states and balances simulate needs', async () => {
    const max = await newCustomer(t, 50_000, 'Max');
    const card = await newCard(t, max, 'Travel');
    await t.core.freeze(max.caller, card.id);
    const shown = (await admin('users', 'show', max.userId, '--json')).json().user;
    assert.equal(shown.wallet.balance, '495.00');
    assert.deepEqual(
      shown.cards.map((c: Record<string, unknown>) => [c.id, c.name, c.status, c.balance]),
      [[card.id, 'Travel', 'frozen', '0.00']],
    );
    assert.equal(shown.tokens.length, 1);
    assert.deepEqual(shown.chats, []);
    const listed = (await admin('cards', 'list', '--user', max.userId, '--json')).json().cards;
    assert.deepEqual(
      listed.map((c: Record<string, unknown>) => c.id),
      [card.id],
    );
    assert.ok((await admin('cards', 'list', '--json')).json().cards.length >= 1);
    assert.match((await admin('users', 'show', max.userId)).out, new RegExp(`${card.id}.*Travel.*frozen`));
    assert.equal((await admin('users', 'show', 'nobody')).code, 1);
  });

  test('purge deletes OTP codes past their retention', async () => {
    const otto = await newCustomer(t, 10_000, 'Otto');
    const card = await newCard(t, otto);
    await t.admin.simulateOtp(card.id);
    t.clock.advance(25 * 3_600_000);
    const purged = (await admin('purge', '--json')).json().purged;
    assert.ok(purged.otps >= 1);
    assert.deepEqual((await t.core.listOtps(otto.caller, card.id)).otps, []);
  });

  test('ledger check exits non-zero when a cached balance differs from the entries', async () => {
    const ivy = await newCustomer(t, 1_000, 'Ivy');
    await t.database.db.updateTable('accounts').set({ balance: 999_999 }).where('id', '=', ivy.caller.walletAccountId).execute();
    const result = await admin('ledger', 'check', '--json');
    assert.equal(result.code, 1);
    assert.equal(result.json().consistent, false);
    await t.database.db.updateTable('accounts').set({ balance: 1_000 }).where('id', '=', ivy.caller.walletAccountId).execute();
  });
});

test('backup writes a consistent copy of a SQLite file database', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cards-backup-'));
  const t = await createTestCore({ url: path.join(dir, 'cards.db') });
  try {
    await newCustomer(t, 4_200, 'Backed');
    const target = path.join(dir, 'copy.db');
    const code = await runAdmin(['backup', '--to', target], async () => t, { out: () => {}, err: () => {} });
    assert.equal(code, 0);
    assert.ok(statSync(target).size > 0);
    const copy = await createTestCore({ url: target });
    assert.equal((await copy.admin.listUsers()).find((u) => u.name === 'Backed')?.walletBalance, 4_200);
    await copy.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

describe('admin command line: BIN and plan pairs no card can be created from', () => {
  let t: TestCore;
  before(async () => {
    t = await createTestCore();
  });
  after(async () => {
    await t.close();
  });

  const admin = adminCommands(() => t);

  test("bins add warns of each active plan whose limit is below the BIN's initial balance, and still adds it", async () => {
    const human = await admin('bins', 'add', '--bin', '400100', '--network', 'visa', '--initial-balance', '2000');
    assert.equal(human.code, 0);
    assert.match(human.out, /BIN 400100 added/);
    assert.equal(human.err.split('\n').length, 1, human.err);
    assert.match(human.err, /^Warning: BIN 400100 starts a card with \$2000\.00, above the limit of plan \d+ \(Basic, \$1000\.00\)/);
    const json = await admin('bins', 'add', '--bin', '400101', '--network', 'visa', '--initial-balance', '6000', '--json');
    assert.equal(json.code, 0);
    assert.equal(json.json().ok, true);
    assert.equal(json.json().warnings.length, 2, 'Basic and Standard');
    assert.ok((await t.core.listBins()).some((b) => b.bin === '400101'));
    const fits = await admin('bins', 'add', '--bin', '400102', '--network', 'visa', '--initial-balance', '1000', '--json');
    assert.deepEqual(fits.json().warnings, []);
    assert.equal(fits.err, '');
  });

  test("plans add warns of each enabled BIN whose initial balance is above the new plan's limit, and still adds it", async () => {
    const json = await admin('plans', 'add', '--name', 'Tiny', '--limit', '4', '--fee', '1', '--json');
    assert.equal(json.code, 0);
    const { plan, warnings } = json.json();
    assert.ok((await t.core.listPlans()).some((p) => p.id === plan.id));
    const promo = (await t.core.listBins()).filter((b) => b.initialBalance > 400);
    assert.ok(promo.length > 0);
    assert.equal(warnings.length, promo.length);
    assert.match(warnings.join('\n'), /Plan \d+ \(Tiny\) has a limit of \$4\.00, below the initial balance of BIN 414720 \(.+, \$5\.00\)/);
    assert.match(json.err, /^Warning: Plan \d+ \(Tiny\)/);
    const roomy = await admin('plans', 'add', '--name', 'Roomy', '--limit', '100000', '--fee', '1');
    assert.equal(roomy.code, 0);
    assert.equal(roomy.err, '');
  });
});
