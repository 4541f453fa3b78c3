import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { createHttpServer } from '../../src/api/server.js';
import { botTables } from '../../src/bot/store/tables.js';
import { saveLink } from '../../src/bot/store/chat-links.js';
import { issueWebAppNonce } from '../../src/bot/webapp-nonces.js';
import { hashToken } from '../../src/core/keys/secrets.js';
import type { SensitiveCardDetails } from '../../src/core/operations/views.js';
import { createLogger } from '../../src/infra/logger.js';
import { createTestCore, newCard, newCustomer, type TestCore } from '../helpers/core.js';
import { launchFragment, signInitData } from '../helpers/init-data.js';
import { eventually } from '../helpers/wait.js';
import { embeddedWebApp } from '../helpers/webapp.js';

// The Mini App page in a real browser: Debian's Chromium, driven by playwright-core. Without the browser
// the suite is skipped saying why (`npm test` needs nothing but `npm ci`), unless REQUIRE_CHROMIUM=1:
// `.ci/run` installs Chromium and sets it, so there a missing browser fails the suite.
const CHROMIUM = '/usr/bin/chromium';
const MISSING = `Chromium is missing at ${CHROMIUM}: install it with \`apt-get install -y chromium\` (the Mini App browser test needs it)`;
const skip = !existsSync(CHROMIUM) && process.env.REQUIRE_CHROMIUM !== '1' ? MISSING : false;
const BOT_TOKEN = '123456:WEBAPP-browser-token';
const ALICE = 1001;
const SHOW_SECONDS = 2;

describe('the card-details Mini App in Chromium', { skip }, () => {
  let t: TestCore;
  let app: ReturnType<typeof createHttpServer>;
  let baseUrl: string;
  let profile: string;
  let browser: BrowserContext;
  let details: SensitiveCardDetails;
  const cspViolations: string[] = [];
  let tokenHash: string;
  let cardId: string;

  before(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(MISSING);
    t = await createTestCore();
    app = createHttpServer({
      core: t.core,
      db: t.database.db,
      clock: t.clock,
      logger: createLogger('silent'),
      webApp: {
        url: 'http://127.0.0.1/webapp',
        botToken: BOT_TOKEN,
        showSeconds: SHOW_SECONDS,
        bot: embeddedWebApp({ core: t.core, db: t.database.db, clock: t.clock }),
      },
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const alice = await newCustomer(t);
    const card = await newCard(t, alice);
    cardId = card.id;
    tokenHash = hashToken(alice.token);
    await saveLink(botTables(t.database.db), { chatId: ALICE, userId: alice.userId, tokenHash }, t.clock.now());
    details = await t.core.getSensitiveDetails(alice.caller, card.id);

    profile = mkdtempSync(path.join(tmpdir(), 'webapp-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    await browser.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
    // The pages' clock stands still until a test moves it: the display's seconds (and the "Copied" label's)
    // cannot run out while a busy machine is still checking what they show.
    await browser.clock.install();
    await browser.clock.pauseAt(Date.now() + 1000);
  });

  after(async () => {
    await browser?.close();
    await app?.close();
    await t?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  const nonce = () => issueWebAppNonce(t.database.db, { cardId, telegramUserId: ALICE, chatId: ALICE, tokenHash }, t.clock.now());

  /** Opens the page as Telegram would: the nonce in the query, the signed init data in the fragment. */
  async function open(forNonce: string, initData: string): Promise<{ page: Page; headers: Record<string, string> }> {
    const page = await browser.newPage();
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
    });
    const response = await page.goto(`${baseUrl}/webapp?nonce=${forNonce}${launchFragment(initData)}`);
    assert.ok(response, 'the page answered');
    return { page, headers: response.headers() };
  }

  /** What the page shows once it has heard back: the details, or the refusal. */
  async function settled(page: Page): Promise<void> {
    await page.locator('#details, #status.error').first().waitFor();
  }

  /**
   * No trace of the card in the document: no digit at all in what the page shows, not its last four digits in
   * the part the script fills (the page's own style and script may hold any four digits), nor the number anywhere.
   */
  async function assertNoCardData(page: Page): Promise<void> {
    assert.doesNotMatch(await page.locator('main').innerText(), /\d/);
    assert.ok(!(await page.locator('main').innerHTML()).includes(details.pan.slice(-4)), 'the last four digits in the page');
    const html = await page.content();
    const spaced = details.pan.replace(/(\d{4})(?=\d)/g, '$1 ');
    assert.ok(!html.includes(details.pan) && !html.includes(spaced), 'the card number in the page');
    assert.equal(await page.locator('#number').count(), 0);
  }

  it("shows the card's number, CVV and expiry with a countdown, copies them, then blanks itself", async () => {
    const { page, headers } = await open(await nonce(), signInitData(BOT_TOKEN, { id: ALICE }, t.clock.now()));
    assert.match(headers['content-security-policy']!, /default-src 'none'/);
    assert.equal(headers['cache-control'], 'no-store');
    assert.equal(headers['referrer-policy'], 'no-referrer');
    await settled(page);
    assert.equal((await page.locator('#number').textContent())!.replaceAll(' ', ''), details.pan);
    assert.equal(await page.locator('#cvv').textContent(), details.cvv);
    assert.equal(await page.locator('#expiry').textContent(), details.exp);
    assert.equal(await page.locator('#countdown').textContent(), `Hidden in ${SHOW_SECONDS} s`);
    // The page's own style applied (allowed by its hash), like its script.
    assert.equal(await page.evaluate("getComputedStyle(document.querySelector('main')).maxWidth"), '448px');
    // Neither the nonce nor the init data stays in the address.
    assert.equal(new URL(page.url()).search + new URL(page.url()).hash, '');

    await page.locator('#number + button').click();
    await page.waitForFunction("document.querySelector('#number + button').textContent === 'Copied'");
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), details.pan);

    await page.clock.runFor(SHOW_SECONDS * 1000 - 1);
    assert.equal(await page.locator('#countdown').textContent(), 'Hidden in 1 s', 'still shown a moment before the end');
    await page.clock.runFor(1);
    await page.locator('#details').waitFor({ state: 'detached' });
    assert.match((await page.locator('#status').textContent())!, /hidden now/);
    // What was copied is wiped with it.
    const clipboard = () => page.evaluate('navigator.clipboard.readText()');
    await eventually('the clipboard is wiped', async () => (await clipboard()) === '', { timeoutMs: 5000, everyMs: 50 });
    assert.equal(await clipboard(), '', 'the clipboard is wiped with the details');
    await assertNoCardData(page);
    await page.close();
  });

  it('a forged signature shows nothing', async () => {
    const { page } = await open(await nonce(), signInitData('654321:another-bot', { id: ALICE }, t.clock.now()));
    await settled(page);
    assert.match((await page.locator('#status').textContent())!, /cannot be shown/);
    await assertNoCardData(page);
    await page.close();
  });

  it('init data signed more than 5 minutes ago shows nothing', async () => {
    const old = new Date(t.clock.now().getTime() - 301_000);
    const { page } = await open(await nonce(), signInitData(BOT_TOKEN, { id: ALICE }, old));
    await settled(page);
    await assertNoCardData(page);
    await page.close();
  });

  it('a nonce opened a second time shows nothing', async () => {
    const once = await nonce();
    const initData = signInitData(BOT_TOKEN, { id: ALICE }, t.clock.now());
    const first = await open(once, initData);
    await settled(first.page);
    assert.equal(await first.page.locator('#number').count(), 1);
    await first.page.close();
    const again = await open(once, initData);
    await settled(again.page);
    await assertNoCardData(again.page);
    await again.page.close();
  });

  it("another user's init data shows nothing", async () => {
    const { page } = await open(await nonce(), signInitData(BOT_TOKEN, { id: 2002 }, t.clock.now()));
    await settled(page);
    await assertNoCardData(page);
    await page.close();
  });

  it('speaks Russian to a user whose Telegram is in Russian', async () => {
    const { page } = await open(await nonce(), signInitData(BOT_TOKEN, { id: ALICE, language_code: 'ru' }, t.clock.now()));
    await settled(page);
    assert.equal(await page.locator('#countdown').textContent(), `Скроются через ${SHOW_SECONDS} с`);
    await page.close();
  });

  it('the page broke none of its own Content-Security-Policy', () => {
    assert.deepEqual(cspViolations, []);
  });
});
