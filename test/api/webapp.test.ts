import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { createHttpServer } from '../../src/api/server.js';
import { botTables } from '../../src/bot/store/tables.js';
import { deleteLink, saveLink } from '../../src/bot/store/chat-links.js';
import { issueWebAppNonce, WEBAPP_NONCE_TTL_SECONDS } from '../../src/bot/webapp-nonces.js';
import { hashToken } from '../../src/core/keys/secrets.js';
import type { CardService } from '../../src/core/service.js';
import { createLogger } from '../../src/infra/logger.js';
import { dialects, useCore } from '../core/dialects.js';
import type { TestCore } from '../helpers/core.js';
import { newCard, newCustomer } from '../helpers/core.js';
import { signInitData } from '../helpers/init-data.js';
import { assertNotLogged } from '../helpers/log.js';
import { embeddedWebApp } from '../helpers/webapp.js';

const BOT_TOKEN = '123456:WEBAPP-test-token';
const ALICE = 1001;
const MALLORY = 2002;
const UNIFORM = 'Card details are not available';

interface Setup {
  t: TestCore;
  baseUrl: string;
  logs: string[];
  /** A card of Alice's, her chat linked with her token. */
  cardId: string;
  token: string;
  /** A nonce drawn for Alice's card in her chat, now. */
  nonce(cardId?: string): Promise<string>;
  /** Alice's init data signed now (or at `at`). */
  initData(user?: number, at?: Date, botToken?: string): string;
  post(body: unknown): Promise<{ status: number; headers: Headers; body: any; text: string }>;
}

async function setUp(context: TestContext, dialect: 'sqlite' | 'postgres', core?: Partial<CardService>): Promise<Setup> {
  const t = await useCore(context, dialect);
  const logs: string[] = [];
  const served = core ? Object.assign(Object.create(t.core) as CardService, core) : t.core;
  const app = createHttpServer({
    core: served,
    db: t.database.db,
    clock: t.clock,
    logger: createLogger('trace', { write: (line: string) => void logs.push(line) }),
    webApp: {
      url: 'https://cards.example/webapp',
      botToken: BOT_TOKEN,
      showSeconds: 60,
      bot: embeddedWebApp({ core: served, db: t.database.db, clock: t.clock }),
    },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  context.after(() => app.close());
  const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const alice = await newCustomer(t);
  const card = await newCard(t, alice);
  await saveLink(botTables(t.database.db), { chatId: ALICE, userId: alice.userId, tokenHash: hashToken(alice.token) }, t.clock.now());
  return {
    t,
    baseUrl,
    logs,
    cardId: card.id,
    token: alice.token,
    nonce: (cardId = card.id) =>
      issueWebAppNonce(t.database.db, { cardId, telegramUserId: ALICE, chatId: ALICE, tokenHash: hashToken(alice.token) }, t.clock.now()),
    initData: (user = ALICE, at = t.clock.now(), botToken = BOT_TOKEN) => signInitData(botToken, { id: user }, at),
    async post(body) {
      const response = await fetch(`${baseUrl}/webapp/card-details`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: JSON.parse(text), text };
    },
  };
}

const refusedChecks = (logs: string[]) =>
  logs
    .map((line) => JSON.parse(line))
    .filter((entry) => entry.msg === 'Mini App card details refused')
    .map((entry) => entry.check);

for (const dialect of dialects()) {
  describe(`card details in the Mini App (${dialect})`, () => {
    it('the page is served with a strict policy, kept nowhere and loading nothing from elsewhere', async (context) => {
      const s = await setUp(context, dialect);
      const response = await fetch(`${s.baseUrl}/webapp?nonce=abc`);
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type')!, /^text\/html/);
      const csp = response.headers.get('content-security-policy')!;
      assert.match(csp, /default-src 'none'/);
      assert.match(csp, /script-src 'sha256-[\w+/=]+'(;|$)/);
      assert.match(csp, /style-src 'sha256-[\w+/=]+'(;|$)/);
      assert.match(csp, /connect-src 'self'/);
      assert.match(csp, /frame-ancestors https:\/\/web\.telegram\.org(;|$)/);
      assert.equal(response.headers.get('cache-control'), 'no-store');
      assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
      const html = await response.text();
      assert.doesNotMatch(html, /\b(src|href)=/, 'no script, style or image from anywhere');
      assert.match(html, /\/webapp\/card-details/);
    });

    it("valid init data and a fresh nonce get the card's number, CVV and expiry: the core's own details", async (context) => {
      const s = await setUp(context, dialect);
      const reply = await s.post({ initData: s.initData(), nonce: await s.nonce() });
      assert.equal(reply.status, 200, reply.text);
      const expected = await s.t.core.getSensitiveDetails(await s.t.core.authenticate(s.token), s.cardId);
      assert.deepEqual(reply.body.data, {
        name: expected.name,
        number: expected.pan,
        cvv: expected.cvv,
        expiry: expected.exp,
        showSeconds: 60,
      });
      assert.equal(reply.headers.get('cache-control'), 'no-store');
      assert.equal(reply.headers.get('referrer-policy'), 'no-referrer');
      assert.equal(reply.headers.get('x-content-type-options'), 'nosniff');
    });

    it('a nonce works once: a replay gets the same refusal as anything else', async (context) => {
      const s = await setUp(context, dialect);
      const body = { initData: s.initData(), nonce: await s.nonce() };
      assert.equal((await s.post(body)).status, 200);
      const replay = await s.post(body);
      assert.equal(replay.status, 403);
      assert.equal(replay.body.message, UNIFORM);
      assert.deepEqual(refusedChecks(s.logs), ['nonce']);
    });

    it('of two requests racing with one nonce, exactly one gets the details', async (context) => {
      const s = await setUp(context, dialect);
      const body = { initData: s.initData(), nonce: await s.nonce() };
      const replies = await Promise.all([s.post(body), s.post(body), s.post(body)]);
      assert.deepEqual(replies.map((r) => r.status).sort(), [200, 403, 403]);
    });

    it('init data not signed with our bot token is refused, and leaves the nonce to its user', async (context) => {
      const s = await setUp(context, dialect);
      const nonce = await s.nonce();
      const forged = await s.post({ initData: s.initData(ALICE, s.t.clock.now(), '654321:another-bot'), nonce });
      assert.equal(forged.status, 403);
      assert.equal(forged.body.message, UNIFORM);
      const tampered = s.initData().replace('Alice', 'Alicf');
      assert.equal((await s.post({ initData: tampered, nonce })).status, 403);
      assert.equal((await s.post({ initData: s.initData(), nonce })).status, 200);
      assert.deepEqual(refusedChecks(s.logs), ['signature', 'signature']);
    });

    it('init data signed more than 5 minutes ago is refused', async (context) => {
      const s = await setUp(context, dialect);
      const nonce = await s.nonce();
      const old = new Date(s.t.clock.now().getTime() - 301_000);
      assert.equal((await s.post({ initData: s.initData(ALICE, old), nonce })).status, 403);
      const fromTheFuture = new Date(s.t.clock.now().getTime() + 3_600_000);
      assert.equal((await s.post({ initData: s.initData(ALICE, fromTheFuture), nonce })).status, 403);
      assert.equal((await s.post({ initData: s.initData(ALICE, new Date(s.t.clock.now().getTime() - 299_000)), nonce })).status, 200);
      assert.deepEqual(refusedChecks(s.logs), ['age', 'age']);
    });

    it("another user's init data gets nothing, and leaves the nonce to the user it was drawn for", async (context) => {
      const s = await setUp(context, dialect);
      const nonce = await s.nonce();
      assert.equal((await s.post({ initData: s.initData(MALLORY), nonce })).status, 403);
      assert.equal((await s.post({ initData: s.initData(), nonce })).status, 200);
      assert.deepEqual(refusedChecks(s.logs), ['nonce']);
    });

    it(`a nonce is refused once ${WEBAPP_NONCE_TTL_SECONDS} s have passed since its button was drawn`, async (context) => {
      const s = await setUp(context, dialect);
      const nonce = await s.nonce();
      s.t.clock.advance(WEBAPP_NONCE_TTL_SECONDS * 1000);
      assert.equal((await s.post({ initData: s.initData(), nonce })).status, 403);
      assert.deepEqual(refusedChecks(s.logs), ['nonce']);
    });

    it('a chat unlinked, or linked again with another token, since the button was drawn gets nothing', async (context) => {
      const s = await setUp(context, dialect);
      const db = botTables(s.t.database.db);
      const drawnBeforeUnlink = await s.nonce();
      await deleteLink(db, ALICE);
      assert.equal((await s.post({ initData: s.initData(), nonce: drawnBeforeUnlink })).status, 403);
      const { userId } = await s.t.core.authenticate(s.token);
      const otherToken = await s.t.admin.issueToken(userId);
      const drawnBeforeRelink = await s.nonce();
      await saveLink(db, { chatId: ALICE, userId, tokenHash: hashToken(otherToken) }, s.t.clock.now());
      assert.equal((await s.post({ initData: s.initData(), nonce: drawnBeforeRelink })).status, 403);
      assert.deepEqual(refusedChecks(s.logs), ['link', 'link']);
    });

    it("a revoked token, or a card that is not the link's user's, gets nothing", async (context) => {
      const s = await setUp(context, dialect);
      const bob = await newCustomer(s.t, 100_000, 'Bob');
      const bobsCard = await newCard(s.t, bob);
      assert.equal((await s.post({ initData: s.initData(), nonce: await s.nonce(bobsCard.id) })).status, 403);
      const nonce = await s.nonce();
      // Revoked behind the bot's back: the link row stays (as if the revocation missed it), the token does not work.
      await s.t.database.db.updateTable('api_tokens').set({ revoked_at: s.t.clock.now().toISOString() }).execute();
      assert.equal((await s.post({ initData: s.initData(), nonce })).status, 403);
      assert.deepEqual(refusedChecks(s.logs), ['card', 'token']);
    });

    it('a malformed request gets the same refusal', async (context) => {
      const s = await setUp(context, dialect);
      for (const body of [
        {},
        { initData: s.initData() },
        { initData: s.initData(), nonce: 'short' },
        { initData: 'x', nonce: await s.nonce() },
      ]) {
        const reply = await s.post(body);
        assert.equal(reply.status, 403);
        assert.deepEqual(Object.keys(reply.body).sort(), ['message', 'success', 'timestamp']);
        assert.equal(reply.body.message, UNIFORM);
      }
    });

    it('no card number, CVV, init data or nonce reaches the log; the access line names the route only', async (context) => {
      const s = await setUp(context, dialect);
      const nonce = await s.nonce();
      const initData = s.initData();
      await fetch(`${s.baseUrl}/webapp?nonce=${nonce}`);
      await s.post({ initData: s.initData(MALLORY), nonce });
      await s.post({ initData: `${initData}x`, nonce });
      const served = await s.post({ initData, nonce });
      await s.post({ initData, nonce });
      const secrets = [served.body.data.number, served.body.data.cvv, nonce, initData, new URLSearchParams(initData).get('hash')!];
      assertNotLogged(s.logs.join(''), secrets, 'a secret in the log');
      const routes = s.logs
        .map((line) => JSON.parse(line))
        .filter((entry) => entry.msg === 'request')
        .map((entry) => `${entry.method} ${entry.route} ${entry.status}`);
      assert.deepEqual(routes, [
        'GET /webapp 200',
        'POST /webapp/card-details 403',
        'POST /webapp/card-details 403',
        'POST /webapp/card-details 200',
        'POST /webapp/card-details 403',
      ]);
    });

    it('a fault is a plain 500, logged without the request', async (context) => {
      const s = await setUp(context, dialect, {
        getSensitiveDetails: () => Promise.reject(new TypeError("Cannot read properties of undefined (reading 'pan')")),
      });
      const nonce = await s.nonce();
      const initData = s.initData();
      const reply = await s.post({ initData, nonce });
      assert.equal(reply.status, 500);
      assert.equal(reply.body.message, 'Internal server error');
      assert.equal(reply.headers.get('cache-control'), 'no-store');
      const log = s.logs.join('');
      assert.match(log, /Unexpected error while handling a request/);
      for (const secret of [nonce, initData, new URLSearchParams(initData).get('hash')!])
        assert.ok(!log.includes(secret), 'a secret in the log');
    });
  });
}

describe('without WEBAPP_URL', () => {
  it('no Mini App route is served', async (context) => {
    const t = await useCore(context, 'sqlite');
    const app = createHttpServer({ core: t.core, db: t.database.db, clock: t.clock, logger: createLogger('silent') });
    context.after(() => app.close());
    assert.equal((await app.inject({ method: 'GET', url: '/webapp' })).statusCode, 404);
    assert.equal((await app.inject({ method: 'POST', url: '/webapp/card-details', payload: {} })).statusCode, 404);
  });
});
