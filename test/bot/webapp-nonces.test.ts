import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { consumeWebAppNonce, issueWebAppNonce, WEBAPP_NONCE_TTL_SECONDS, webAppButtonUrl } from '../../src/bot/webapp-nonces.js';
import { dialects, useCore } from '../core/dialects.js';

const binding = { cardId: 'card-1', telegramUserId: 1001, chatId: 1001, tokenHash: 'a'.repeat(64) };

for (const dialect of dialects()) {
  describe(`Mini App nonces (${dialect})`, () => {
    it('are stored only as hashes, and give back their binding once', async (context) => {
      const t = await useCore(context, dialect);
      const nonce = await issueWebAppNonce(t.database.db, binding, t.clock.now());
      assert.match(nonce, /^[\w-]{43}$/);
      const rows = await t.database.db
        .withTables<{ webapp_nonces: { nonce_hash: string } }>()
        .selectFrom('webapp_nonces')
        .selectAll()
        .execute();
      assert.equal(rows.length, 1);
      assert.ok(!JSON.stringify(rows).includes(nonce));
      assert.deepEqual(await consumeWebAppNonce(t.database.db, nonce, 1001, t.clock.now()), binding);
      assert.equal(await consumeWebAppNonce(t.database.db, nonce, 1001, t.clock.now()), undefined);
    });

    it('expire, and expired ones are purged when the next is issued', async (context) => {
      const t = await useCore(context, dialect);
      const stale = await issueWebAppNonce(t.database.db, binding, t.clock.now());
      t.clock.advance(WEBAPP_NONCE_TTL_SECONDS * 1000);
      assert.equal(await consumeWebAppNonce(t.database.db, stale, 1001, t.clock.now()), undefined);
      await issueWebAppNonce(t.database.db, binding, t.clock.now());
      const count = await t.database.db
        .withTables<{ webapp_nonces: { nonce_hash: string } }>()
        .selectFrom('webapp_nonces')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(count.n), 1);
    });
  });
}

describe('the Mini App button address', () => {
  it('is WEBAPP_URL with the nonce as a query parameter, keeping any query it has', () => {
    assert.equal(webAppButtonUrl('https://cards.example/webapp', 'abc'), 'https://cards.example/webapp?nonce=abc');
    assert.equal(webAppButtonUrl('https://cards.example/app?x=1', 'abc'), 'https://cards.example/app?x=1&nonce=abc');
  });
});
