import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createHarness, texts } from '../harness.js';
import { textUpdate } from '../../helpers/updates.js';

// Issue 31, item 9: /help describes details as they are: a self-deleting message, or the Mini App when WEBAPP_URL is set.
// (`/addcard` in /help and the command list in remote mode: test/bot/remote-screens-e2e.test.ts.)

describe('/help', () => {
  it('says details come in a message that deletes itself, and leaves /addcard out where every card is listed', async () => {
    const h = await createHarness({ config: { sensitiveTtlSeconds: 45 } });
    await h.linkedCustomer(7401);
    const help = texts(await h.send(textUpdate({ id: 7401 }, '/help'))).join('\n');
    assert.match(help, /show details \(in a message deleted after 45 s\)/);
    assert.doesNotMatch(help, /\/addcard/);
  });

  it('with WEBAPP_URL, says details open in a window of their own, never in the chat (EN and RU)', async () => {
    const h = await createHarness({ config: { webAppUrl: 'https://cards.example/webapp' } });
    await h.linkedCustomer(7402);
    const help = texts(await h.send(textUpdate({ id: 7402 }, '/help'))).join('\n');
    assert.match(help, /show details \(in a window of their own that never puts them in the chat\)/);
    assert.doesNotMatch(help, /deleted after/);
    const ru = texts(await h.send(textUpdate({ id: 7402, languageCode: 'ru' }, '/help'))).join('\n');
    assert.match(ru, /реквизиты \(в отдельном окне, в чат они не попадают\)/);
  });
});
