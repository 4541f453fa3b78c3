import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { startCore, type CoreRuntime } from '../../src/app/compose.js';
import { fundingTables } from '../../src/core/funding/funding-tables.js';
import { freshPostgresSchema, whileNoSchemaIsDropped, withoutPostgres } from '../core/dialects.js';
import { BotApiServer } from '../helpers/bot-api-server.js';
import { startProcess, type StartedProcess } from '../helpers/processes.js';
import { eventually } from '../helpers/wait.js';

// Issue 18, item 1: a paid Telegram Payment is never lost to a crash in polling mode. The bot runs as
// `npm start` does, in its own process, polling the Bot API test server; the payment's credit is held
// open by a row lock the test takes on the invoice, the process is killed with SIGKILL while it waits,
// and a new process started on the same database credits the wallet, once.

const BASE_URL = process.env.TEST_DATABASE_URL;
const BOT_TOKEN = '123456:PAYMENT-crash';
const CHAT = 8_100_000 + Math.floor(Math.random() * 100_000);

describe('a successful payment in polling mode, the bot killed while crediting it', { skip: withoutPostgres, timeout: 150_000 }, () => {
  let server: BotApiServer;
  let apiRoot: string;
  let dir: string;
  let schema: { url: string; drop(): Promise<void> };
  let runtime: CoreRuntime;
  const processes: StartedProcess[] = [];

  const startBotProcess = () => {
    const started = startProcess(dir, {
      BOT_TOKEN,
      TELEGRAM_API_ROOT: apiRoot,
      DATABASE_URL: schema.url,
      CARD_DATA_KEY_FILE: path.join(dir, 'card-data.key'),
      HTTP_ENABLED: 'false',
      PAYMENT_PROVIDER_TOKEN: '284685063:TEST:payment-crash',
    });
    processes.push(started);
    return started;
  };

  before(async () => {
    server = new BotApiServer();
    apiRoot = await server.start();
    dir = mkdtempSync(path.join(tmpdir(), 'payment-crash-'));
    schema = await freshPostgresSchema(BASE_URL!);
  });
  after(async () => {
    for (const p of processes) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await runtime?.close();
    await server.stop();
    await schema.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('credits the wallet once after a restart, though Telegram was told the update was received', async () => {
    const first = startBotProcess();
    await whileNoSchemaIsDropped(BASE_URL!, () => first.waitForLog('bot polling'));
    const key = Buffer.from(readFileSync(path.join(dir, 'card-data.key'), 'utf8').trim(), 'base64');
    runtime = await whileNoSchemaIsDropped(BASE_URL!, () => startCore({ databaseUrl: schema.url, cardDataKey: key }));
    const { token, userId } = await runtime.admin.createUser({ name: 'Payer', deposit: 1_000 });
    const user = server.user(CHAT);
    const linked = user.send(token);
    await server.nextMessage(CHAT, linked.mark, 'Linked');
    const invoice = await runtime.funding.payments.openInvoice({ userId, chatId: CHAT, amount: 5_000 });
    const caller = await runtime.core.authenticate(token);

    // The invoice's row locked: the credit waits on it (its payment row's reference to the invoice) until the test lets go.
    const lock = new pg.Client({ connectionString: schema.url });
    await lock.connect();
    try {
      await lock.query('begin');
      await lock.query('select id from wallet_invoices where id = $1 for update', [invoice.id]);
      server.pushUpdate({
        message: {
          message_id: 900,
          date: server.now(),
          chat: { id: CHAT, type: 'private', first_name: 'Payer' },
          from: { id: CHAT, is_bot: false, first_name: 'Payer', language_code: 'en' },
          successful_payment: {
            currency: 'USD',
            total_amount: 5_000,
            invoice_payload: `wi:${invoice.id}`,
            telegram_payment_charge_id: 'tg-charge-crash',
            provider_payment_charge_id: 'provider-charge-crash',
          },
        },
      });
      // The credit waits on the lock, and the next poll has confirmed the update to "Telegram".
      await eventually(
        'the credit waiting on the invoice lock',
        async () => {
          // Not on the locking client: inside its transaction the activity view is a snapshot taken once.
          const waiting = await runtime.database.db.executeQuery<{ n: number }>(
            sql`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query ilike '%wallet_%'`.compile(
              runtime.database.db,
            ),
          );
          return waiting.rows[0]!.n > 0;
        },
        { timeoutMs: 20_000, everyMs: 50, seen: first.output },
      );
      await eventually('the payment confirmed to Telegram', () => server.pendingUpdates() === 0, { timeoutMs: 40_000, everyMs: 50 });

      first.child.kill('SIGKILL');
      await first.exited;
    } finally {
      await lock.query('rollback').catch(() => undefined);
      await lock.end();
    }
    assert.equal((await runtime.core.walletBalance(caller)).balance, 1_000, 'nothing was credited before the kill');

    // A new process on the same database: Telegram sends the payment no more; the inbox still has it.
    const mark = server.mark();
    const second = startBotProcess();
    // Migrated (it then waits for the dead poller's lease to lapse).
    await whileNoSchemaIsDropped(BASE_URL!, () =>
      second.waitForLog((l) => String(l.msg).startsWith('another process holds the polling lease')),
    );
    await server.waitForCall(
      (c) => c.method === 'sendMessage' && Number(c.payload.chat_id) === CHAT && String(c.payload.text).startsWith('Thank you! $50.00'),
      mark,
      90_000,
      'the thank-you after the restart',
    );
    assert.equal((await runtime.core.walletBalance(caller)).balance, 6_000);
    // Handled once: one payment row, one thank-you.
    await second.waitForLog('payment credited');
    const thanks = server.calls.filter(
      (c) => c.method === 'sendMessage' && Number(c.payload.chat_id) === CHAT && String(c.payload.text).startsWith('Thank you!'),
    );
    assert.equal(thanks.length, 1);
    const payments = await fundingTables(runtime.database.db).selectFrom('wallet_payments').select('journal_id').execute();
    assert.equal(payments.length, 1);
    assert.notEqual(payments[0]!.journal_id, null);
    const ledger = await runtime.admin.checkLedger();
    assert.deepEqual([ledger.differences, ledger.unbalancedJournals], [[], []]);
  });
});
