import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REFUSAL_TEXTS } from '../../src/bot/ui/refusal-texts.js';
import { createHarness, texts } from './harness.js';
import { textUpdate } from '../helpers/updates.js';

describe('errors in chat', () => {
  it('an unexpected error is a short apology, with details in the log and the admin chat', async () => {
    const h = await createHarness({
      config: { adminChatId: -4242 },
      core: {
        walletBalance: async () => {
          throw new Error('database on fire');
        },
      },
    });
    await h.linkedCustomer(9301);
    await h.send(textUpdate({ id: 9301 }, '/menu'));
    const { buttonData } = await import('./conversations/kit.js');
    const { callbackUpdate } = await import('../helpers/updates.js');
    const calls = await h.send(callbackUpdate({ id: 9301 }, buttonData(h.calls, 'Wallet')));
    const toUser = calls.filter((c) => c.method === 'sendMessage' && c.payload.chat_id === 9301).map((c) => String(c.payload.text));
    assert.deepEqual(toUser, ['Sorry, something went wrong. Please try again later.']);
    const toAdmin = calls.filter((c) => c.method === 'sendMessage' && c.payload.chat_id === -4242);
    assert.match(String(toAdmin[0]?.payload.text), /database on fire/);
    assert.match(h.log(), /database on fire/);
    assert.equal(calls.filter((c) => c.method === 'answerCallbackQuery').length, 1, 'the button is answered once');
  });

  it('has a next step for every refusal code', () => {
    for (const [code, { hint }] of Object.entries(REFUSAL_TEXTS)) assert.match(hint, /^hint-/, code);
  });

  it('limits how fast one user can send', async () => {
    const h = await createHarness({ config: { rateLimit: { timeFrameMs: 60_000, limit: 2 } } });
    await h.send(textUpdate({ id: 9302 }, '/start'));
    await h.send(textUpdate({ id: 9302 }, '/help'));
    const calls = await h.send(textUpdate({ id: 9302 }, '/help'));
    assert.deepEqual(texts(calls), ['Too many messages; slow down a little.']);
    // Per user: another user is not held back by the first.
    const other = await h.send(textUpdate({ id: 9303 }, '/start'));
    assert.match(texts(other).join('\n'), /API token/);
  });

  it('answers a button pressed too fast, so the client stops spinning', async () => {
    const h = await createHarness({ config: { rateLimit: { timeFrameMs: 60_000, limit: 1 } } });
    await h.send(textUpdate({ id: 9304 }, '/start'));
    const { callbackUpdate } = await import('../helpers/updates.js');
    const calls = await h.send(callbackUpdate({ id: 9304 }, 'main/0/0/hx'));
    const answers = calls.filter((c) => c.method === 'answerCallbackQuery');
    assert.equal(answers.length, 1);
    assert.equal(answers[0]?.payload.text, 'Too many messages; slow down a little.');
  });

  it('waits out a 429 from Telegram and sends again (auto-retry), in the outer tree and inside flows', async () => {
    let refused = 0;
    const h = await createHarness({
      failCall: (method) =>
        method === 'sendMessage' && refused++ % 2 === 0
          ? { code: 429, description: 'Too Many Requests: retry after 0', retryAfter: 0 }
          : undefined,
    });
    const me = await h.linkedCustomer(9305);
    const { newCard } = await import('../helpers/core.js');
    const card = await newCard(h.t, me);
    refused = 0;
    let calls = await h.send(textUpdate({ id: 9305 }, '/help'));
    assert.equal(calls.filter((c) => c.method === 'sendMessage').length, 2, 'refused once, then sent');
    assert.match(texts(calls).join('\n'), /Details|help|menu/i);
    const { callbackUpdate } = await import('../helpers/updates.js');
    refused = 0;
    calls = await h.send(callbackUpdate({ id: 9305 }, `c:topup:${card.id}`));
    const prompts = calls.filter((c) => c.method === 'sendMessage').map((c) => String(c.payload.text));
    assert.equal(prompts.length, 2);
    assert.match(prompts[1]!, /How much to top up/);
  });
});
