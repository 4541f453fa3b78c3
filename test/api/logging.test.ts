import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newCard, newCustomer } from '../helpers/core.js';
import { assertFailure, assertSuccess, startTestApi } from '../helpers/http.js';
import { assertNotLogged } from '../helpers/log.js';

test('an unexpected fault is logged with its request id; tokens, PANs and CVVs never reach the log', async () => {
  const lines: string[] = [];
  const api = await startTestApi({ logLines: lines });
  try {
    const alice = await newCustomer(api.t);
    const card = await newCard(api.t, alice);
    const details = assertSuccess(await api.call('GET', `/api/v1/cards/${card.id}/details`, { token: alice.token }));
    assertSuccess(await api.call('POST', `/api/v1/cards/${card.id}/topup`, { token: alice.token, body: { amount: 10 } }));
    await api.call('GET', '/api/v1/health', { token: 'wrong-token-value' });

    const original = api.t.core.listBins;
    api.t.core.listBins = async () => {
      throw new Error('boom');
    };
    const r = await api.call('GET', '/api/v1/bins', { token: alice.token });
    api.t.core.listBins = original;
    assertFailure(r, 500, 'Internal server error');
    const requestId = r.headers.get('x-request-id');
    assert.ok(requestId);

    const fault = lines
      .map((l) => JSON.parse(l) as { reqId?: string; level: number; err?: { message: string } })
      .find((l) => l.reqId === requestId);
    assert.equal(fault?.level, 50);
    assert.equal(fault?.err?.message, 'boom');
    assertNotLogged(lines.join(''), [alice.token, 'wrong-token-value', details.PAN, details.CVV]);
  } finally {
    await api.close();
  }
});
