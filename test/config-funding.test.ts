import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/app/config.js';

describe('ADMIN_USER_IDS (who decides deposit requests and reads /stats)', () => {
  it('is nobody by default', () => {
    assert.deepEqual(loadConfig({}).ADMIN_USER_IDS, []);
  });

  it('takes Telegram user ids separated by commas', () => {
    assert.deepEqual(loadConfig({ ADMIN_USER_IDS: '12345, 67890' }).ADMIN_USER_IDS, [12_345, 67_890]);
  });

  it('refuses anything else at start, naming the setting', () => {
    for (const value of ['alice', '12,', '-5', '1.5']) {
      assert.throws(
        () => loadConfig({ ADMIN_USER_IDS: value }),
        (error: unknown) => error instanceof ConfigError && error.message.includes('ADMIN_USER_IDS'),
        value,
      );
    }
  });
});

describe('PAYMENT_PROVIDER_TOKEN (Telegram Payments)', () => {
  it('is unset by default: no invoices', () => {
    assert.equal(loadConfig({}).PAYMENT_PROVIDER_TOKEN, undefined);
  });

  it('takes the token as given; one with spaces is refused without being echoed', () => {
    assert.equal(loadConfig({ PAYMENT_PROVIDER_TOKEN: '284685063:TEST:abc' }).PAYMENT_PROVIDER_TOKEN, '284685063:TEST:abc');
    assert.throws(
      () => loadConfig({ PAYMENT_PROVIDER_TOKEN: 'secret with spaces' }),
      (error: unknown) =>
        error instanceof ConfigError && error.message.includes('PAYMENT_PROVIDER_TOKEN') && !error.message.includes('secret'),
    );
  });
});
