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
