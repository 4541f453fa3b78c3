import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { coreSettingsFrom } from '../src/app/compose.js';
import { ConfigError, loadConfig } from '../src/app/config.js';

describe("self-deleting messages keep their promise or say they can't", () => {
  for (const setting of ['SENSITIVE_TTL_SECONDS', 'OTP_TTL_SECONDS']) {
    it(`${setting} above Telegram's 48-hour deletion window is refused at start, naming the setting`, () => {
      assert.throws(
        () => loadConfig({ [setting]: '172801' }),
        (error: unknown) => error instanceof ConfigError && error.message.includes(setting) && /48 hours/.test(error.message),
      );
      assert.equal(loadConfig({ [setting]: '172800' })[setting as 'OTP_TTL_SECONDS'], 172_800);
    });
  }
});

describe('REDIS_URL (several instances share their rate limits)', () => {
  it('is unset by default: each process counts alone', () => {
    assert.equal(loadConfig({}).REDIS_URL, undefined);
  });

  it('takes redis:// and rediss:// URLs, with a password and a database number', () => {
    for (const url of ['redis://127.0.0.1:6379', 'rediss://:secret@cache.internal:6380/2'])
      assert.equal(loadConfig({ REDIS_URL: url }).REDIS_URL, url);
  });

  it('refuses anything else at start, naming the setting but not its value (it may hold a password)', () => {
    for (const url of ['http://:secret@127.0.0.1:6379', 'redis:/nohost', 'secret']) {
      assert.throws(
        () => loadConfig({ REDIS_URL: url }),
        (error: unknown) => error instanceof ConfigError && error.message.includes('REDIS_URL') && !error.message.includes('secret'),
      );
    }
  });

  it('gives a Redis command 500 ms unless REDIS_COMMAND_TIMEOUT_MS says otherwise, between 10 ms and a minute', () => {
    assert.equal(loadConfig({}).REDIS_COMMAND_TIMEOUT_MS, 500);
    assert.equal(loadConfig({ REDIS_COMMAND_TIMEOUT_MS: '2000' }).REDIS_COMMAND_TIMEOUT_MS, 2000);
    for (const value of ['0', '5', '60001', 'soon'])
      assert.throws(
        () => loadConfig({ REDIS_COMMAND_TIMEOUT_MS: value }),
        (error: unknown) => error instanceof ConfigError && error.message.includes('REDIS_COMMAND_TIMEOUT_MS'),
      );
  });

  it('keeps 10 Postgres connections a process unless DATABASE_POOL_SIZE says otherwise, from 1 to 1,000', () => {
    assert.equal(loadConfig({}).DATABASE_POOL_SIZE, 10);
    assert.equal(loadConfig({ DATABASE_POOL_SIZE: '32' }).DATABASE_POOL_SIZE, 32);
    for (const value of ['0', '1001', '2.5', 'many'])
      assert.throws(
        () => loadConfig({ DATABASE_POOL_SIZE: value }),
        (error: unknown) => error instanceof ConfigError && error.message.includes('DATABASE_POOL_SIZE'),
      );
  });

  it("puts every key under REDIS_KEY_PREFIX, 'virtual-cards:' unless set; a prefix with spaces or other signs is refused", () => {
    assert.equal(loadConfig({}).REDIS_KEY_PREFIX, 'virtual-cards:');
    assert.equal(loadConfig({ REDIS_KEY_PREFIX: 'cards-staging:' }).REDIS_KEY_PREFIX, 'cards-staging:');
    for (const prefix of ['two words', 'x*', 'x'.repeat(65)]) {
      assert.throws(
        () => loadConfig({ REDIS_KEY_PREFIX: prefix }),
        (error: unknown) => error instanceof ConfigError && error.message.includes('REDIS_KEY_PREFIX'),
      );
    }
  });
});

describe('PROVIDER_TIMEOUT_MS (a card-provider call is given up before its operation would be settled as failed)', () => {
  it('is 20 s by default and takes 100 ms to 25 s', () => {
    assert.equal(loadConfig({}).PROVIDER_TIMEOUT_MS, 20_000);
    assert.equal(loadConfig({ PROVIDER_TIMEOUT_MS: '25000' }).PROVIDER_TIMEOUT_MS, 25_000);
    assert.equal(loadConfig({ PROVIDER_TIMEOUT_MS: '100' }).PROVIDER_TIMEOUT_MS, 100);
    assert.equal(coreSettingsFrom(loadConfig({ PROVIDER_TIMEOUT_MS: '5000' })).providerTimeoutMs, 5_000, 'the core is given it');
  });

  it('refuses at start a timeout that a pending operation or a status hold could outlast, naming the setting', () => {
    for (const value of ['25001', '60000', '0', 'soon']) {
      assert.throws(
        () => loadConfig({ PROVIDER_TIMEOUT_MS: value }),
        (error: unknown) => error instanceof ConfigError && error.message.includes('PROVIDER_TIMEOUT_MS'),
        value,
      );
    }
  });
});

describe('WEBHOOK_SECRET (the header Telegram sends with each webhook post)', () => {
  it('is refused at start when shorter than 32 characters, naming the setting but not the value', () => {
    for (const value of ['tiny1', 'x'.repeat(31), `${'y'.repeat(31)}!`]) {
      assert.throws(
        () => loadConfig({ WEBHOOK_SECRET: value }),
        (error: unknown) => error instanceof ConfigError && error.message.includes('WEBHOOK_SECRET') && !error.message.includes(value),
        value,
      );
    }
    assert.equal(loadConfig({ WEBHOOK_SECRET: 'z'.repeat(32) }).WEBHOOK_SECRET, 'z'.repeat(32));
  });

  it('WEBHOOK_RATE_LIMIT_PER_ADDRESS is 6000 posts a minute unless set', () => {
    assert.equal(loadConfig({}).WEBHOOK_RATE_LIMIT_PER_ADDRESS, 6_000);
    assert.equal(loadConfig({ WEBHOOK_RATE_LIMIT_PER_ADDRESS: '50' }).WEBHOOK_RATE_LIMIT_PER_ADDRESS, 50);
  });
});

describe('TELEGRAM_API_ROOT', () => {
  it("is Telegram's unless set, and takes a local Bot API server's root", () => {
    assert.equal(loadConfig({}).TELEGRAM_API_ROOT, 'https://api.telegram.org');
    assert.equal(loadConfig({ TELEGRAM_API_ROOT: 'http://127.0.0.1:8081' }).TELEGRAM_API_ROOT, 'http://127.0.0.1:8081');
  });

  it('refuses at start a root with a trailing slash, a query or another scheme, naming the setting', () => {
    for (const value of ['https://api.telegram.org/', 'http://127.0.0.1:8081/?x=1', 'ftp://api.telegram.org', 'telegram']) {
      assert.throws(
        () => loadConfig({ TELEGRAM_API_ROOT: value }),
        (error: unknown) => error instanceof ConfigError && error.message.includes('TELEGRAM_API_ROOT'),
        value,
      );
    }
  });

  it('names the setting once in its message', () => {
    assert.throws(() => loadConfig({ TELEGRAM_API_ROOT: 'https://api.telegram.org/' }), {
      message:
        'Invalid settings:\n' +
        '  TELEGRAM_API_ROOT: the root the bot adds /bot<token>/<method> to, without a trailing / (e.g. https://api.telegram.org)',
    });
  });
});

describe('secrets from files (<NAME>_FILE: Docker secrets, systemd credentials)', () => {
  it('reads BOT_TOKEN_FILE, WEBHOOK_SECRET_FILE and the others into their settings, without the trailing newline', (t) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'secret-files-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = (name: string, content: string) => {
      const at = path.join(dir, name);
      writeFileSync(at, content);
      return at;
    };
    const config = loadConfig({
      BOT_TOKEN_FILE: file('bot', '123:from-a-file\n'),
      WEBHOOK_SECRET_FILE: file('hook', `${'w'.repeat(40)}\n`),
      DATABASE_URL_FILE: file('db', 'postgres://u:p@db/cards'),
    });
    assert.equal(config.BOT_TOKEN, '123:from-a-file');
    assert.equal(config.WEBHOOK_SECRET, 'w'.repeat(40));
    assert.equal(config.DATABASE_URL, 'postgres://u:p@db/cards');
  });

  it('refuses both forms at once, and a file it cannot read, naming the setting and never the content', (t) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'secret-files-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const at = path.join(dir, 'bot');
    writeFileSync(at, 'secret-value');
    assert.throws(
      () => loadConfig({ BOT_TOKEN: 'x', BOT_TOKEN_FILE: at }),
      (error: unknown) => error instanceof ConfigError && /BOT_TOKEN and BOT_TOKEN_FILE are both set/.test(error.message),
    );
    assert.throws(
      () => loadConfig({ REDIS_URL_FILE: path.join(dir, 'missing') }),
      (error: unknown) =>
        error instanceof ConfigError &&
        /REDIS_URL_FILE: cannot read .*missing \(ENOENT\)/.test(error.message) &&
        !error.message.includes('secret-value'),
    );
  });
});

describe('the settings check', () => {
  it('names each refused setting once: the message after its name does not repeat it', () => {
    const bad = {
      BOT_TOKEN: 'not-a-token',
      TELEGRAM_API_ROOT: 'ftp://api.telegram.org',
      CARD_SERVICE_URL: 'https://cards.example/api?x=1',
      WEBHOOK_SECRET: 'short',
    };
    for (const [name, value] of Object.entries(bad)) {
      assert.throws(
        () => loadConfig({ [name]: value }),
        (error: unknown) =>
          error instanceof ConfigError && error.message.includes(`${name}: `) && !error.message.includes(`${name}: ${name}`),
        name,
      );
    }
  });
});

describe('METRICS_PORT and HTTP_PORT', () => {
  it('the same port for both is refused at the settings check, naming both; 0 (any free port) and a server that is off are not', () => {
    assert.throws(
      () => loadConfig({ HTTP_PORT: '9100', METRICS_PORT: '9100' }),
      (error: unknown) =>
        error instanceof ConfigError &&
        /METRICS_PORT=9100 is HTTP_PORT as well/.test(error.message) &&
        /set METRICS_PORT to another port/.test(error.message),
    );
    assert.throws(() => loadConfig({ METRICS_PORT: '3000' }), /METRICS_PORT=3000 is HTTP_PORT as well/);
    assert.equal(loadConfig({ HTTP_PORT: '0', METRICS_PORT: '0' }).METRICS_PORT, 0);
    assert.equal(loadConfig({ HTTP_ENABLED: 'false', HTTP_PORT: '9100', METRICS_PORT: '9100' }).METRICS_PORT, 9100);
    assert.equal(loadConfig({ HTTP_PORT: '9100', METRICS_PORT: '9101' }).METRICS_PORT, 9101);
  });
});

describe('HTTP_TRUST_PROXY', () => {
  it('true (believe X-Forwarded-For from anyone) is refused at the settings check, naming the setting and the fix', () => {
    assert.throws(
      () => loadConfig({ HTTP_TRUST_PROXY: 'true' }),
      (error: unknown) =>
        error instanceof ConfigError &&
        /HTTP_TRUST_PROXY: true would believe X-Forwarded-For from anyone/.test(error.message) &&
        /HTTP_TRUST_PROXY=1/.test(error.message) &&
        /addresses\/CIDRs/.test(error.message),
    );
  });

  it('takes a hop count, or the proxies addresses and CIDRs; unset or false trusts nobody', () => {
    assert.equal(loadConfig({ HTTP_TRUST_PROXY: '1' }).HTTP_TRUST_PROXY, 1);
    assert.equal(loadConfig({ HTTP_TRUST_PROXY: '2' }).HTTP_TRUST_PROXY, 2);
    assert.deepEqual(loadConfig({ HTTP_TRUST_PROXY: '127.0.0.1, 10.0.0.0/8,::1,fd00::/8' }).HTTP_TRUST_PROXY, [
      '127.0.0.1',
      '10.0.0.0/8',
      '::1',
      'fd00::/8',
    ]);
    assert.equal(loadConfig({ HTTP_TRUST_PROXY: 'false' }).HTTP_TRUST_PROXY, false);
    assert.equal(loadConfig({}).HTTP_TRUST_PROXY, false);
    for (const bad of ['0', '10', 'abc', '10.0.0.0/33', '127.0.0.1,', 'yes']) {
      assert.throws(() => loadConfig({ HTTP_TRUST_PROXY: bad }), /HTTP_TRUST_PROXY: the number of proxies/, bad);
    }
  });
});

describe('CARD_SERVICE_URL (remote mode)', () => {
  it('plain http:// is refused at the settings check unless on this machine, naming the setting and the fix', () => {
    for (const url of ['http://cards.example', 'http://10.0.0.5:8080', 'http://[2001:db8::1]', 'http://127.0.0.1.example.com']) {
      assert.throws(
        () => loadConfig({ CARD_SERVICE_URL: url }),
        (error: unknown) =>
          error instanceof ConfigError &&
          /CARD_SERVICE_URL: plain http:\/\/ would send every user's API token .* unencrypted: use the service's https:\/\/ URL/.test(
            error.message,
          ),
        url,
      );
    }
  });

  it('takes https:// anywhere, and http:// on loopback: 127.0.0.0/8, localhost, [::1]', () => {
    for (const url of [
      'https://cards.example',
      'http://127.0.0.1:8080',
      'http://127.1.2.3',
      'http://localhost:9000/base',
      'http://[::1]:8080',
    ])
      assert.equal(loadConfig({ CARD_SERVICE_URL: url }).CARD_SERVICE_URL, url);
  });
});
