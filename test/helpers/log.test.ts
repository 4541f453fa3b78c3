import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertNotLogged } from './log.js';

// The helper the secret-in-the-log tests rest on: it must find a leak, and a CVV's three digits must not be
// "found" in what holds them by chance.

const line = (fields: Record<string, unknown>) =>
  `${JSON.stringify({ level: 30, time: 1795534794123, pid: 123, hostname: 'vm', ...fields })}\n`;

test('finds a short secret wherever a leak would put it', () => {
  for (const leak of [{ cvv: '123' }, { msg: 'sent CVV: 123 to the chat' }, { detail: { query: 'cvv=123&x=1' } }, { list: ['123'] }])
    assert.throws(() => assertNotLogged(line(leak), ['123']), /a secret reached the log/, JSON.stringify(leak));
  assert.throws(() => assertNotLogged('not json: cvv 123\n', ['123']));
});

test('finds a long secret anywhere, even inside a word', () => {
  assert.throws(() => assertNotLogged(line({ msg: 'tokenvc_abcdefgh12345678' }), ['vc_abcdefgh12345678']));
});

test('a short secret held by chance in a timestamp, a pid, a status, an id, a float, a date or a stack is not a leak', () => {
  const log =
    line({ status: 123, responseTime: 0.123, reqId: 'a1230000-1234-4123-8123-012345678123', at: '2026-11-24T15:38:11.123Z' }) +
    line({ err: { message: 'boom', stack: 'Error: boom\n    at run (/app/src/api/server.ts:123:17)' } });
  assertNotLogged(log, ['123']);
});
