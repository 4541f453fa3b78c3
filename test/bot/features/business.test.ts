import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { createHarness, texts, type Harness } from '../harness.js';
import { newCustomer } from '../../helpers/core.js';
import { businessUpdates, textUpdate } from '../../helpers/updates.js';

/** Row counts of the bot's tables, to see that nothing was written. */
async function botRows(h: Harness): Promise<string> {
  const tables = ['bot_chat_links', 'bot_kv', 'bot_pending_deletions', 'bot_confirmations', 'bot_deliveries'];
  const counts = await Promise.all(
    tables.map(async (table) => {
      const { rows } = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(h.t.database.db);
      return `${table}=${rows[0]!.n}`;
    }),
  );
  return counts.join(' ');
}

describe('business-connection updates are ignored', () => {
  it('connection, message (a command, a token, a flood of them), edit and deletion: no reply, no link, no database write', async () => {
    // A customer talks to a business account that connected this bot; their chat there has their own id,
    // the same as their private chat with the bot, which is linked.
    const h = await createHarness({ config: { rateLimit: { timeFrameMs: 60_000, limit: 3 } } });
    const me = await h.linkedCustomer(5301);
    const other = await newCustomer(h.t, 0, 'Bob');
    const before = await botRows(h);
    const send = async (label: string) => {
      for (const text of ['/start', '/unlink', `/link ${other.token}`, other.token, 'hello']) {
        for (const update of businessUpdates({ id: 5301 }, text)) {
          const kind = Object.keys(update).find((k) => k !== 'update_id');
          assert.deepEqual(await h.send(update), [], `${label}: ${kind} with ${text.includes(other.token) ? 'a token' : text}`);
        }
      }
    };
    await send('linked');
    assert.equal(await botRows(h), before);
    // Nor is a revoked link announced to the business chat.
    await h.t.admin.revokeToken(me.token);
    const revoked = await botRows(h);
    await send('revoked');
    assert.equal(await botRows(h), revoked);
    // None of it counted against the customer's own flood limit.
    const own = await h.send(textUpdate({ id: 5301 }, '/help'));
    assert.doesNotMatch(texts(own).join('\n'), /Too many messages/);
  });
});
