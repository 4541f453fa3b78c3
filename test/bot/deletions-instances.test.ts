import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { botTables } from '../../src/bot/store/tables.js';
import { claimDueDeletions, dueDeletions, scheduleDeletion } from '../../src/bot/store/pending-deletions.js';
import { CLAIM_LEASE_MS } from '../../src/db/claims.js';
import { dialects } from '../core/dialects.js';
import { BotApiServer } from '../helpers/bot-api-server.js';
import { sharedDatabase, sleep, startInstance, type Instance } from './instances.js';

// Self-deleting messages with several bot processes on one database: each message is deleted once.

async function withServer(ctx: { after(fn: () => Promise<void>): void }): Promise<{ server: BotApiServer; apiRoot: string }> {
  const server = new BotApiServer();
  const apiRoot = await server.start();
  ctx.after(() => server.stop());
  return { server, apiRoot };
}

/** Messages the bot sent to `chats` (stored by the server), all due for deletion a second ago. */
async function dueMessages(server: BotApiServer, instance: Instance, chats: number[], perChat: number) {
  const db = botTables(instance.t.database.db);
  const due = new Date(instance.t.clock.now().getTime() - 1_000);
  const messages: { chatId: number; messageId: number }[] = [];
  for (const chatId of chats) {
    for (let i = 0; i < perChat; i++) {
      const { messageId } = server.storeUserMessage(chatId, `card details ${i}`);
      await scheduleDeletion(db, chatId, messageId, due);
      messages.push({ chatId, messageId });
    }
  }
  return messages;
}

const deletionsOf = (server: BotApiServer, mark: number, m: { chatId: number; messageId: number }) =>
  server.calls
    .slice(mark)
    .filter((c) => c.method === 'deleteMessage' && Number(c.payload.chat_id) === m.chatId && Number(c.payload.message_id) === m.messageId);

async function allForgotten(instance: Instance): Promise<void> {
  const db = botTables(instance.t.database.db);
  while ((await dueDeletions(db, instance.t.clock.now())).length > 0) await sleep(10);
  await sleep(150);
}

for (const dialect of dialects()) {
  describe(`scheduled deletions with several bot instances on one database (${dialect})`, () => {
    test('two instances delete each due message exactly once', async (ctx) => {
      const { server, apiRoot } = await withServer(ctx);
      const db = await sharedDatabase(ctx, dialect);
      const a = await startInstance(ctx, db, apiRoot);
      const b = await startInstance(ctx, db, apiRoot);
      const messages = await dueMessages(server, a, [9801, 9802], 60);
      const mark = server.mark();
      a.start();
      b.start();
      await allForgotten(a);

      assert.deepEqual(
        messages.filter((m) => deletionsOf(server, mark, m).length !== 1),
        [],
        'each message deleted exactly once',
      );
      assert.ok(messages.every((m) => server.message(m.chatId, m.messageId)?.deleted));
      assert.deepEqual(
        server.calls.slice(mark).filter((c) => !c.ok || c.method !== 'deleteMessage'),
        [],
        'no refusal (a second deletion is refused), nothing asked by hand',
      );
    });

    test('deletions held by a process that died are carried out once its claim lapses', async (ctx) => {
      const { server, apiRoot } = await withServer(ctx);
      const db = await sharedDatabase(ctx, dialect);
      const live = await startInstance(ctx, db, apiRoot);
      const [message] = await dueMessages(server, live, [9811], 1);
      const dead = await claimDueDeletions(botTables(live.t.database.db), { id: 'a-process-that-died', clock: live.t.clock });
      assert.equal(dead.items.length, 1);
      const mark = server.mark();
      live.start();
      await sleep(200);
      assert.equal(deletionsOf(server, mark, message!).length, 0, 'not deleted while the claim holds');
      live.t.clock.advance(CLAIM_LEASE_MS);
      await server.waitForCall((c) => c.method === 'deleteMessage', mark);
      await allForgotten(live);
      assert.equal(deletionsOf(server, mark, message!).length, 1);
      assert.ok(server.message(message!.chatId, message!.messageId)?.deleted);
    });
  });
}
