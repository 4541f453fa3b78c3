import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.js';

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
