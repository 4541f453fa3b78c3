import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { runAdmin } from '../../src/admin/run.js';
import { canonicalJson, lithicHmac } from '../../src/api/routes/lithic-asa.js';
import { type RunningHttpApi, startHttpApi } from '../../src/api/start.js';
import { type CoreRuntime, startCoreFromConfig } from '../../src/app/compose.js';
import { loadConfig } from '../../src/app/config.js';
import { createLogger } from '../../src/infra/logger.js';
import { type FakeLithic, startFakeLithic } from '../helpers/fake-lithic.js';
import { lithicOpenApiSkip } from '../helpers/lithic-openapi.js';
import { asaRequest, webhookPayload } from '../helpers/lithic-payloads.js';

// `provider lithic enroll` stores Lithic's two secrets sealed in the database: a process started with
// CARD_PROVIDER=lithic and neither secret in its environment verifies Lithic's calls with them; one set in the
// environment wins; a key rotation re-seals them, so the next start still reads them.

/** The admin command line against a process's core, in process (its close leaves the core open): exit code and output. */
function adminCommands(runtime: () => CoreRuntime) {
  return async (...argv: string[]) => {
    const out: string[] = [];
    const code = await runAdmin(argv, async () => ({ ...runtime(), close: async () => {} }), {
      out: (s) => out.push(s),
      err: (s) => out.push(s),
    });
    return { code, out: out.join('\n') };
  };
}

describe('Lithic secrets stored by enroll, used at start', { skip: lithicOpenApiSkip() }, () => {
  let fake: FakeLithic;
  let dir: string;
  const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  const open: { runtime?: CoreRuntime; api?: RunningHttpApi }[] = [];

  const settings = (extra: Record<string, string> = {}) =>
    loadConfig({
      DATABASE_URL: path.join(dir, 'cards.db'),
      CARD_DATA_KEY_FILE: path.join(dir, 'card-data.key'),
      CARD_PROVIDER: 'lithic',
      LITHIC_API_KEY: fake.apiKey,
      LITHIC_API_URL: fake.url,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: '0',
      ...extra,
    });

  /** A process as `npm run api` starts it: the core from the settings, then the HTTP API over it. */
  async function startProcess(extra: Record<string, string> = {}) {
    const config = settings(extra);
    const runtime = await startCoreFromConfig(config, logger);
    const api = await startHttpApi({ runtime, config, logger });
    const process_ = { runtime, api };
    open.push(process_);
    return process_;
  }
  async function stop(p: { runtime?: CoreRuntime; api?: RunningHttpApi }) {
    await p.api?.close();
    await p.runtime?.close();
    p.api = undefined;
    p.runtime = undefined;
  }

  /** Lithic's authorization request, signed as Lithic signs it with `secret`: our route's answer's status. */
  async function askAsa(url: string, secret: string): Promise<number> {
    const body = canonicalJson(asaRequest({ cardToken: randomUUID(), amount: 1_000 }));
    const response = await fetch(`${url}/provider/lithic/asa`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-lithic-hmac': lithicHmac(secret, body) },
      body,
    });
    await response.text();
    return response.status;
  }

  /** An event signed with `secret` (Standard Webhooks): our route's answer's status. */
  async function sendEvent(url: string, secret: string): Promise<number> {
    const body = JSON.stringify(webhookPayload('card_transaction.updated'));
    const id = `msg_${randomUUID()}`;
    const at = new Date();
    const response = await fetch(`${url}/provider/lithic/events`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(secret).sign(id, at, body),
      },
      body,
    });
    await response.text();
    return response.status;
  }

  let webhookSecret = '';

  before(async () => {
    fake = await startFakeLithic();
    dir = mkdtempSync(path.join(tmpdir(), 'lithic-secrets-'));
    // The operator enrolls, from a process started without either secret.
    const runtime = await startCoreFromConfig(settings(), logger);
    try {
      const enrolled = await adminCommands(() => runtime)('provider', 'lithic', 'enroll', '--url', 'https://cards.example.com');
      assert.equal(enrolled.code, 0, enrolled.out);
      assert.match(enrolled.out, /Stored both secrets/);
      webhookSecret = fake.subscriptions().find((s) => s.url === 'https://cards.example.com/provider/lithic/events')!.secret;
      assert.ok(!enrolled.out.includes(fake.asaSecret) && !enrolled.out.includes(webhookSecret));
    } finally {
      await runtime.close();
    }
  });

  after(async () => {
    for (const p of open) await stop(p);
    await fake?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a start without LITHIC_ASA_SECRET / LITHIC_WEBHOOK_SECRET serves both routes with the stored secrets', async () => {
    const p = await startProcess();
    assert.equal(await askAsa(p.api.url, fake.asaSecret), 200);
    assert.equal(await askAsa(p.api.url, 'not-the-asa-secret'), 401);
    assert.equal(await sendEvent(p.api.url, webhookSecret), 200);
    assert.equal(await sendEvent(p.api.url, `whsec_${randomBytes(24).toString('base64')}`), 401);
    await stop(p);
  });

  it("the environment's LITHIC_ASA_SECRET wins over the stored one", async () => {
    const p = await startProcess({ LITHIC_ASA_SECRET: 'asa-secret-from-the-environment' });
    assert.equal(await askAsa(p.api.url, 'asa-secret-from-the-environment'), 200);
    assert.equal(await askAsa(p.api.url, fake.asaSecret), 401);
    assert.equal(await sendEvent(p.api.url, webhookSecret), 200, 'the webhook secret, unset there, is still the stored one');
    await stop(p);
  });

  it('keys rotate re-seals them: the next start reads them under the new key', async () => {
    const before_ = await startCoreFromConfig(settings(), logger);
    const newKey = path.join(dir, 'new.key');
    writeFileSync(newKey, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    try {
      const rotated = await adminCommands(() => before_)('keys', 'rotate', '--new-key-file', newKey, '--json');
      assert.equal(rotated.code, 0, rotated.out);
    } finally {
      await before_.close();
    }
    const p = await startProcess();
    assert.equal(p.runtime.storedSecrets?.LITHIC_ASA_SECRET, fake.asaSecret);
    assert.equal(await askAsa(p.api.url, fake.asaSecret), 200);
    assert.equal(await sendEvent(p.api.url, webhookSecret), 200);
    const status = await adminCommands(() => p.runtime)('keys', 'status', '--json');
    assert.equal(status.code, 0, status.out);
    const ledger = await adminCommands(() => p.runtime)('ledger', 'check', '--json');
    assert.equal(ledger.code, 0, ledger.out);
    await stop(p);
  });
});
