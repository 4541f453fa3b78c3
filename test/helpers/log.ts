import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/infra/logger.js';

/** A real logger whose output is kept as text, for tests that check what was (and was not) logged. */
export function capturedLogger(level: 'debug' | 'info' = 'debug'): { logger: Logger; text: () => string } {
  let text = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return { logger: createLogger(level, sink), text: () => text };
}

/** Shorter secrets than this (a CVV: three digits) could be part of a timestamp, a pid or an id by chance. */
const CHANCE_LENGTH = 8;

/**
 * Fails naming `what` if any of `secrets` reached `log` (the logger's JSON lines). A long secret is looked for
 * anywhere. A short one is looked for where a leak would put it and chance would not: in the string values of
 * each line, as a word of its own (`"123"`, `CVV: 123`, `cvv=123`), never inside a longer number or word, a
 * number value (a status, a duration), the logger's own fields or a stack trace's line numbers.
 */
export function assertNotLogged(log: string, secrets: readonly string[], what = 'a secret reached the log'): void {
  const strings = log
    .split('\n')
    .filter((line) => line !== '')
    .flatMap((line) => {
      try {
        return stringValues(JSON.parse(line) as unknown);
      } catch {
        return [line];
      }
    });
  for (const secret of secrets) {
    const found =
      secret.length >= CHANCE_LENGTH
        ? log.includes(secret)
        : strings.some((value) => new RegExp(`(?<![A-Za-z0-9.])${escapeRegExp(secret)}(?![A-Za-z0-9.])`).test(value));
    assert.ok(!found, what);
  }
}

const FRAMING = new Set(['time', 'pid', 'hostname', 'stack']);

function stringValues(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringValues);
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([key, inner]) => (FRAMING.has(key) ? [] : stringValues(inner)));
  return [];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
