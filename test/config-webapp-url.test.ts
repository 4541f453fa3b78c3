import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/app/config.js';

describe('WEBAPP_URL', () => {
  it("is taken in remote mode too: the Mini App reads card details through the bot's port", () => {
    const config = loadConfig({ WEBAPP_URL: 'https://cards.example/webapp', CARD_SERVICE_URL: 'https://service.example' });
    assert.equal(config.WEBAPP_URL, 'https://cards.example/webapp');
  });

  it('is unset by default: Details sends the self-deleting message', () => {
    assert.equal(loadConfig({}).WEBAPP_URL, undefined);
  });

  it('takes a public https:// address', () => {
    assert.equal(loadConfig({ WEBAPP_URL: 'https://cards.example/webapp' }).WEBAPP_URL, 'https://cards.example/webapp');
  });

  it('takes http:// only on this machine (tests)', () => {
    assert.equal(loadConfig({ WEBAPP_URL: 'http://127.0.0.1:3000/webapp' }).WEBAPP_URL, 'http://127.0.0.1:3000/webapp');
    assert.equal(loadConfig({ WEBAPP_URL: 'http://localhost:3000/webapp' }).WEBAPP_URL, 'http://localhost:3000/webapp');
    assert.throws(() => loadConfig({ WEBAPP_URL: 'http://cards.example/webapp' }), ConfigError);
  });

  it('refuses other schemes and a fragment (Telegram puts its launch data there)', () => {
    for (const bad of ['ftp://cards.example/webapp', 'javascript:alert(1)', 'https://cards.example/webapp#x', 'not a url']) {
      assert.throws(
        () => loadConfig({ WEBAPP_URL: bad }),
        (error) => error instanceof ConfigError && /WEBAPP_URL/.test(error.message),
        bad,
      );
    }
  });
});
