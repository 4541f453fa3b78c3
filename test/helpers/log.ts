import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/logger.js';

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
