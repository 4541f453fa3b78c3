import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BotApiServer } from './helpers/bot-api-server.js';
import { FakeCardService } from './helpers/fake-card-service.js';
import { hasMetric, scrape, sampleValue } from './helpers/metrics.js';
import { ENTRY, type StartedProcess, startProcess } from './helpers/processes.js';
import { eventually } from './helpers/wait.js';

// METRICS_PORT as an operator sets it: one /metrics per process, showing whatever runs there (the bot
// alone, the HTTP API alone, both, the bot in remote mode), on its own listener.

const BOT_TOKEN = '123456:METRICS-process';

describe('one /metrics for whatever the process runs (METRICS_PORT)', { timeout: 120_000 }, () => {
  let server: BotApiServer;
  let apiRoot: string;
  let fake: FakeCardService;
  const dirs: string[] = [];

  /** Starts `script` with the metrics on a port of their own; returns the process and where /metrics is. */
  const start = async (env: Record<string, string>, script = ENTRY.main): Promise<{ main: StartedProcess; metricsUrl: string }> => {
    const dir = mkdtempSync(path.join(tmpdir(), 'metrics-process-'));
    dirs.push(dir);
    const main = startProcess(
      dir,
      {
        BOT_TOKEN,
        TELEGRAM_API_ROOT: apiRoot,
        DATABASE_URL: path.join(dir, 'cards.db'),
        CARD_DATA_KEY_FILE: path.join(dir, 'card-data.key'),
        METRICS_PORT: '0',
        ...env,
      },
      script,
    );
    const listening = await main.waitForLog('Metrics listening');
    return { main, metricsUrl: listening.url as string };
  };
  const stop = async (main: StartedProcess) => {
    main.child.kill('SIGTERM');
    assert.equal(await main.exited, 0);
  };
  /** A user's /start, and the bot's `message` counter moving to 1 on /metrics. */
  const startCounted = async (metricsUrl: string, chatId: number) => {
    const step = server.user(chatId).send('/start');
    await server.nextMessage(chatId, step.mark);
    await eventually(
      'the message is counted',
      async () => sampleValue(await scrape(metricsUrl), 'bot_updates_total', { type: 'message' }) === 1,
    );
  };

  before(async () => {
    server = new BotApiServer();
    apiRoot = await server.start();
    fake = await new FakeCardService().listen();
  });
  after(async () => {
    await fake.close();
    await server.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('the bot alone (HTTP_ENABLED=false): its metrics and the process defaults, no HTTP ones', async () => {
    const { main, metricsUrl } = await start({ HTTP_ENABLED: 'false' });
    try {
      await main.waitForLog('bot polling');
      await startCounted(metricsUrl, 8101);
      const samples = await scrape(metricsUrl);
      assert.ok(hasMetric(samples, 'process_'));
      assert.equal(sampleValue(samples, 'bot_outbox_depth'), 0);
      assert.equal(sampleValue(samples, 'bot_inbox_lag_seconds'), 0);
      assert.ok(!hasMetric(samples, 'http_request_duration_seconds'));
      assert.ok(!(await (await fetch(metricsUrl)).text()).includes(BOT_TOKEN));
    } finally {
      await stop(main);
    }
  });

  it('the HTTP API alone (npm run api): its metrics, none of the bot', async () => {
    const { main, metricsUrl } = await start({ HTTP_PORT: '0' }, ENTRY.api);
    try {
      const listening = await main.waitForLog('HTTP API listening');
      await fetch(`${listening.url}/livez`);
      const samples = await scrape(metricsUrl);
      assert.equal(sampleValue(samples, 'http_request_duration_seconds_count', { method: 'GET', route: '/livez', status_code: '200' }), 1);
      assert.ok(!hasMetric(samples, 'bot_'));
    } finally {
      await stop(main);
    }
  });

  it('the bot and the HTTP API in one process: both in one registry, on one listener', async () => {
    const { main, metricsUrl } = await start({ HTTP_PORT: '0' });
    try {
      const listening = await main.waitForLog('HTTP API listening');
      await main.waitForLog('bot polling');
      assert.notEqual(new URL(metricsUrl).port, new URL(listening.url).port);
      await fetch(`${listening.url}/livez`);
      await startCounted(metricsUrl, 8102);
      const samples = await scrape(metricsUrl);
      assert.equal(sampleValue(samples, 'http_request_duration_seconds_count', { method: 'GET', route: '/livez', status_code: '200' }), 1);
      assert.equal(sampleValue(samples, 'bot_update_duration_seconds_count', { type: 'message' }), 1);
    } finally {
      await stop(main);
    }
  });

  it('the bot in remote mode (CARD_SERVICE_URL): the same metrics, the outbox its own', async () => {
    const { main, metricsUrl } = await start({ HTTP_ENABLED: 'false', CARD_SERVICE_URL: fake.url });
    try {
      await main.waitForLog('bot polling');
      await startCounted(metricsUrl, 8103);
      const samples = await scrape(metricsUrl);
      assert.equal(sampleValue(samples, 'bot_outbox_depth'), 0);
      assert.equal(sampleValue(samples, 'bot_deletions_pending'), 0);
      assert.equal(sampleValue(samples, 'bot_pushes_total', { kind: 'otp', result: 'sent' }), 0);
    } finally {
      await stop(main);
    }
  });
});
