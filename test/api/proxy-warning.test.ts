import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startTestApi } from '../helpers/http.js';

// Without HTTP_TRUST_PROXY, every client behind a proxy shares its address: the first request that shows a proxy says so.

const WARNING = 'Requests arrive with X-Forwarded-For but HTTP_TRUST_PROXY is not set';
const viaProxy = { headers: { 'x-forwarded-for': '203.0.113.7' } };

describe('X-Forwarded-For without HTTP_TRUST_PROXY', () => {
  test('is warned of once per process, at the first request that carries it, naming the address it came from', async (t) => {
    const logLines: string[] = [];
    const api = await startTestApi({ logLines });
    t.after(() => api.close());
    assert.equal((await api.call('GET', '/livez')).status, 200);
    assert.ok(!logLines.some((line) => line.includes(WARNING)), 'no warning without the header');
    for (let i = 0; i < 3; i++) assert.equal((await api.call('GET', '/livez', viaProxy)).status, 200);
    const warnings = logLines.filter((line) => line.includes(WARNING)).map((line) => JSON.parse(line));
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0].level, 40, 'at warn');
    assert.match(warnings[0].address, /127\.0\.0\.1/);
  });

  test('is not warned of when HTTP_TRUST_PROXY names the proxy', async (t) => {
    const logLines: string[] = [];
    const api = await startTestApi({ logLines, server: { trustProxy: ['127.0.0.1'] } });
    t.after(() => api.close());
    assert.equal((await api.call('GET', '/livez', viaProxy)).status, 200);
    assert.ok(!logLines.some((line) => line.includes(WARNING)));
  });
});
