import assert from 'node:assert/strict';
import { describe, it, test } from 'node:test';
import { startBackgroundJobs } from '../../src/bot/jobs/background-jobs.js';
import { startLoop } from '../../src/infra/loop.js';
import { botTables } from '../../src/bot/store/tables.js';
import { chatLocaleKey } from '../../src/bot/store/kv-keys.js';
import { dueDeletions, scheduleDeletion } from '../../src/bot/store/pending-deletions.js';
import { writeKv } from '../../src/bot/store/kv.js';
import { createLogger } from '../../src/infra/logger.js';
import { createHarness } from './harness.js';

test('a background loop retries a failing tick and reports each streak of failures to the operator once', async () => {
  const outcomes = ['fail', 'fail', 'fail', 'ok', 'fail', 'ok'];
  const reports: string[] = [];
  let ticks = 0;
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  const loop = startLoop(
    1,
    createLogger('silent'),
    'outbox',
    async (text) => void reports.push(text),
    async () => {
      const outcome = outcomes[ticks++];
      if (ticks === outcomes.length) finished();
      if (outcome === 'fail') throw new Error(`database locked #${ticks}`);
      return undefined;
    },
  );
  await done;
  await loop.stop();
  assert.deepEqual(reports, [
    'Bot outbox loop failed (retrying): Error: database locked #1',
    'Bot outbox loop failed (retrying): Error: database locked #5',
  ]);
});

describe("self-deleting messages keep their promise or say they can't", () => {
  const CANT = { code: 400, description: "Bad Request: message can't be deleted" };
  const GONE = { code: 400, description: 'Bad Request: message to delete not found' };

  /** A harness whose deleteMessage calls fail as `failure` says, with `messageIds` due for deletion in `chatId`. */
  async function dueButRefused(
    chatId: number,
    messageIds: number[],
    failure: (messageId: number) => { code: number; description: string } | undefined,
    locale?: string,
  ) {
    const h = await createHarness({ failCall: (method, p) => (method === 'deleteMessage' ? failure(Number(p.message_id)) : undefined) });
    const db = botTables(h.t.database.db);
    if (locale) await writeKv(db, chatLocaleKey(chatId), locale, h.t.clock.now());
    for (const id of messageIds) await scheduleDeletion(db, chatId, id, new Date(h.t.clock.now().getTime() - 1_000));
    const mark = h.calls.length;
    const jobs = startBackgroundJobs(h.bot);
    const settled = async () => {
      while ((await dueDeletions(db, h.t.clock.now())).length > 0) await new Promise((resolve) => setTimeout(resolve, 5));
      // One more tick, so anything said after forgetting the deletions is said by now.
      await new Promise((resolve) => setTimeout(resolve, 60));
    };
    return { h, mark, jobs, settled };
  }

  it('a deletion Telegram refuses is answered in the chat: reply to the message, asking to delete it by hand', async () => {
    const { h, mark, jobs, settled } = await dueButRefused(8601, [41], () => CANT);
    const notice = await h.waitFor((c) => c.method === 'sendMessage', mark);
    await settled();
    await jobs.stop();
    assert.equal(notice.payload.chat_id, 8601);
    assert.deepEqual(notice.payload.reply_parameters, { message_id: 41, allow_sending_without_reply: true });
    assert.match(notice.payload.text, /could not delete.*please delete it yourself/is);
    assert.match(h.log(), /"chatId":8601.*"messageId":41.*"errorCode":400.*message can't be deleted/);
  });

  it("is told in the chat's language", async () => {
    const { h, mark, jobs, settled } = await dueButRefused(8602, [42], () => CANT, 'ru');
    const notice = await h.waitFor((c) => c.method === 'sendMessage', mark);
    await settled();
    await jobs.stop();
    assert.match(notice.payload.text, /Не получилось удалить/);
  });

  it('is told once per chat for a burst of refusals, never twice for a message', async () => {
    const { h, mark, jobs, settled } = await dueButRefused(8603, [43, 44, 45], () => CANT);
    await settled();
    await new Promise((resolve) => setTimeout(resolve, 100));
    await jobs.stop();
    const notices = h.since(mark, 'sendMessage');
    assert.equal(notices.length, 1);
    assert.equal(notices[0]!.payload.reply_parameters.message_id, 43);
    assert.match(notices[0]!.payload.text, /3 messages/);
  });

  it('a message the user deleted already is not worth telling', async () => {
    const { h, mark, jobs, settled } = await dueButRefused(8604, [46, 47], (id) => (id === 46 ? GONE : undefined));
    await h.waitFor((c) => c.method === 'deleteMessage' && c.payload.message_id === 47, mark);
    await settled();
    await jobs.stop();
    assert.equal(h.since(mark, 'sendMessage').length, 0);
  });
});
