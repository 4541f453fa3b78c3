import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Api } from 'grammy';
import type { Update } from 'grammy/types';
import { holdsApiToken } from '../../src/bot/token-scan.js';
import { createInbox } from '../../src/bot/runtime/inbox.js';
import type { InboxTables } from '../../src/bot/runtime/inbox-store.js';
import { startDurablePolling } from '../../src/bot/runtime/polling.js';
import { createCardDataCipher, newApiToken } from '../../src/core/keys/secrets.js';
import { createLogger } from '../../src/infra/logger.js';
import { createTestCore, TEST_CARD_DATA_KEY, type TestCore } from '../helpers/core.js';
import { textUpdate } from '../helpers/updates.js';
import { eventually } from '../helpers/wait.js';
import type { Kysely } from 'kysely';

const rows = (t: TestCore) =>
  (t.database.db as unknown as Kysely<InboxTables>)
    .selectFrom('bot_updates')
    .select(['update_id', 'payload', 'handled_at'])
    .orderBy('update_id')
    .execute();

/** An inbox whose handler records what it got, and waits while `gate` is closed. */
function recordingInbox(t: TestCore, secrets?: Parameters<typeof createInbox>[0]['secrets']) {
  const handled: Update[] = [];
  let open: () => void = () => {};
  let gate = new Promise<void>((resolve) => (open = resolve));
  const inbox = createInbox({
    db: t.database.db,
    clock: t.clock,
    logger: createLogger('silent'),
    sweepIntervalMs: 10_000,
    handle: async (update) => {
      await gate;
      handled.push(update);
    },
    ...(secrets ? { secrets } : {}),
  });
  return {
    inbox,
    handled,
    release: () => open(),
    close: () => {
      gate = Promise.resolve();
      open();
    },
  };
}

describe('the inbox keeps secrets out of the database in clear', () => {
  it('stores an update holding a token sealed with the card-data key, and hands it over whole, in its chat order', async (t) => {
    const core = await createTestCore();
    t.after(() => core.close());
    const token = newApiToken();
    const { inbox, handled, release } = recordingInbox(core, { holds: holdsApiToken, cipher: core.cipher });
    const chat = { id: 4401 };
    const batch = [textUpdate(chat, 'hello'), textUpdate(chat, `/link ${token}`), textUpdate(chat, 'after')];
    await inbox.receiveAll(batch);
    // Stored, not handled yet (the handler waits): the token is nowhere in the table.
    const stored = await rows(core);
    assert.deepEqual(
      stored.map((r) => r.update_id),
      batch.map((u) => u.update_id),
    );
    assert.ok(stored[1]!.payload.startsWith('sealed:v3.'));
    assert.ok(stored.every((r) => !r.payload.includes(token) && !r.payload.includes(token.slice(3))));
    release();
    await inbox.idle();
    await inbox.stop();
    assert.deepEqual(
      handled.map((u) => u.update_id),
      batch.map((u) => u.update_id),
    );
    assert.equal(handled[1]!.message?.text, `/link ${token}`);
  });

  it('without a cipher never stores such an update, and still handles it', async (t) => {
    const core = await createTestCore();
    t.after(() => core.close());
    const token = newApiToken();
    const { inbox, handled, release } = recordingInbox(core, { holds: holdsApiToken });
    const update = textUpdate({ id: 4402 }, token);
    await inbox.receiveAll([update]);
    assert.deepEqual(await rows(core), []);
    release();
    await inbox.idle();
    await inbox.stop();
    assert.deepEqual(
      handled.map((u) => u.update_id),
      [update.update_id],
    );
  });

  it('skips a sealed update another key sealed, saying so, and goes on with the chat', async (t) => {
    const core = await createTestCore();
    t.after(() => core.close());
    const other = createCardDataCipher(Buffer.alloc(32, 9));
    const first = recordingInbox(core, { holds: holdsApiToken, cipher: other });
    first.release();
    const chat = { id: 4403 };
    const sealedElsewhere = textUpdate(chat, `/link ${newApiToken()}`);
    // Stored under the other key by a process that then stopped before handling it.
    await (core.database.db as unknown as Kysely<InboxTables>)
      .insertInto('bot_updates')
      .values({
        update_id: sealedElsewhere.update_id,
        chat_key: `chat:${chat.id}`,
        payload: `sealed:${other.encrypt(JSON.stringify(sealedElsewhere), `bot_updates:${sealedElsewhere.update_id}`)}`,
        received_at: core.clock.now().toISOString(),
        handled_at: null,
      })
      .execute();
    await first.inbox.stop();
    const second = recordingInbox(core, { holds: holdsApiToken, cipher: createCardDataCipher(TEST_CARD_DATA_KEY) });
    second.release();
    const next = textUpdate(chat, 'next');
    await second.inbox.receiveAll([next]);
    await second.inbox.idle();
    await second.inbox.stop();
    assert.deepEqual(
      second.handled.map((u) => u.update_id),
      [next.update_id],
    );
    assert.ok((await rows(core)).every((r) => r.handled_at !== null));
  });
});

describe('durable polling', () => {
  /** A getUpdates that serves `queue` from `offset` on, as Telegram does, recording each offset asked for. */
  function fakeTelegram(queue: Update[]) {
    const offsets: (number | undefined)[] = [];
    let fail = 0;
    const api = {
      async getUpdates(other: { offset?: number }, signal?: AbortSignal) {
        offsets.push(other.offset);
        if (fail > 0) {
          fail--;
          throw new Error('network down');
        }
        if (other.offset !== undefined) queue.splice(0, queue.length, ...queue.filter((u) => u.update_id >= other.offset!));
        if (queue.length > 0) return queue.slice(0, 100);
        await new Promise((resolve) => signal?.addEventListener('abort', resolve, { once: true }));
        return [];
      },
    };
    return { api: api as unknown as Api, offsets, failNext: (n: number) => (fail = n) };
  }

  /** Durable polling of `api` into a stand-in inbox that stores with `receiveAll`, retrying at once. */
  const poll = (api: Api, receiveAll: (updates: readonly Update[]) => Promise<void>) =>
    startDurablePolling({ api, logger: createLogger('silent'), allowedUpdates: ['message'], maxBackoffMs: 1, inbox: { receiveAll } });

  it('confirms a batch to Telegram only once it is stored', async () => {
    const queue = [textUpdate({ id: 1 }, 'a'), textUpdate({ id: 2 }, 'b')];
    const telegram = fakeTelegram([...queue]);
    const stored: number[][] = [];
    let storeFails = 1;
    const polling = poll(telegram.api, async (updates) => {
      if (storeFails-- > 0) throw new Error('disk full');
      stored.push(updates.map((u) => u.update_id));
    });
    await eventually('the batch stored', () => stored.length === 1);
    await eventually('the next poll', () => telegram.offsets.length >= 3);
    await polling.stop();
    const last = queue[1]!.update_id;
    // The failed store is polled again from the start: nothing confirmed until it was stored.
    assert.deepEqual(telegram.offsets.slice(0, 3), [undefined, undefined, last + 1]);
    assert.deepEqual(stored, [queue.map((u) => u.update_id)]);
  });

  it('keeps polling after a failed poll', async () => {
    const queue = [textUpdate({ id: 3 }, 'c')];
    const telegram = fakeTelegram([...queue]);
    telegram.failNext(2);
    const stored: number[] = [];
    const polling = poll(telegram.api, async (updates) => {
      stored.push(...updates.map((u) => u.update_id));
    });
    await eventually('the update stored', () => stored.length === 1);
    await polling.stop();
    assert.deepEqual(stored, [queue[0]!.update_id]);
  });
});
