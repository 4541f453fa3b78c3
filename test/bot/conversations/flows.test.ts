import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BotContext } from '../../../src/bot/context.js';
import { enterFlow } from '../../../src/bot/conversations/flows.js';
import { botTables } from '../../../src/bot/store/tables.js';
import { CONVERSATION_KEY_PREFIX } from '../../../src/bot/store/kv-keys.js';
import { readKv, writeKv } from '../../../src/bot/store/kv.js';
import { newCard } from '../../helpers/core.js';
import { callbackUpdate, textUpdate } from '../../helpers/updates.js';
import { createHarness, texts } from '../harness.js';

/** The conversation state the plugin stores for a chat: a version pair and each conversation's states. */
interface StoredFlows {
  version: [number, number];
  state: Record<string, { args?: string }[]>;
}

describe('entering a flow', () => {
  it('takes the arguments of that flow, checked by the compiler (a swapped card id and message id do not compile)', () => {
    // Never called: the typecheck of npm test reads it, and fails if any of these lines compiles.
    const wrongEntries = (ctx: BotContext) => [
      // @ts-expect-error a card id and a message id swapped
      enterFlow.topup(ctx, { cardId: 7, viewMessageId: 'card-1' }),
      // @ts-expect-error the message is the view's, named so
      enterFlow.withdraw(ctx, { cardId: 'card-1', messageId: 7 }),
      // @ts-expect-error a card flow needs its card
      enterFlow.close(ctx),
      // @ts-expect-error creating a card starts from no card
      enterFlow.createCard(ctx, { cardId: 'card-1' }),
      // @ts-expect-error no flow of that name
      enterFlow.transfer(ctx),
    ];
    assert.equal(typeof wrongEntries, 'function');
  });

  it('a flow waiting in state stored under the earlier layout (positional arguments) is dropped, not misread', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(7101);
    const card = await newCard(h.t, me);
    await h.send(callbackUpdate({ id: 7101 }, `c:topup:${card.id}`, 7));
    // Rewrite the waiting top-up as the earlier layout stored it, then start afresh, as after a deploy.
    const db = botTables(h.t.database.db);
    const key = `${CONVERSATION_KEY_PREFIX}7101`;
    const stored = JSON.parse((await readKv(db, key))!) as StoredFlows;
    stored.version[1] = 1;
    for (const states of Object.values(stored.state)) for (const state of states) state.args = JSON.stringify(['topup', card.id, 7]);
    await writeKv(db, key, JSON.stringify(stored), h.t.clock.now());
    h.restart();

    const calls = await h.send(textUpdate({ id: 7101 }, '50'));
    assert.doesNotMatch(texts(calls).join('\n'), /Platform fee/);
    assert.match(texts(calls).join('\n'), /I did not get that/);
    assert.doesNotMatch(h.log(), /"level":50/, 'no error logged');

    await h.send(callbackUpdate({ id: 7101 }, `c:topup:${card.id}`, 7));
    assert.match(texts(await h.send(textUpdate({ id: 7101 }, '50'))).join('\n'), /Platform fee/);
  });
});
