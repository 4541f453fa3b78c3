import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startHttpApi } from '../../src/api/start.js';
import { loadConfig } from '../../src/app/config.js';
import { createLogger } from '../../src/infra/logger.js';
import { createTestCore, newCustomer } from '../helpers/core.js';

test('startHttpApi serves the API on HTTP_HOST:HTTP_PORT and closing it leaves the core open', async () => {
  const runtime = await createTestCore();
  const config = loadConfig({ HTTP_HOST: '127.0.0.1', HTTP_PORT: '0', HTTP_BODY_LIMIT_BYTES: '2048' });
  const api = await startHttpApi({ runtime, config, logger: createLogger('silent') });
  try {
    assert.match(api.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const { token } = await newCustomer(runtime);
    const health = await fetch(`${api.url}/api/v1/health`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(health.status, 200);
    const big = await fetch(`${api.url}/api/v1/cards`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x'.repeat(3000) }),
    });
    assert.equal(big.status, 413);
  } finally {
    await api.close();
  }
  assert.equal((await runtime.core.health()).status, 'healthy');
  await runtime.close();
});
