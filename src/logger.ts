import { pino, type Logger } from 'pino';
import { loggableError } from './log-safe.js';

export type { Logger };

/**
 * Where a process's logs go: standard error (standard output is the admin command line's answer), as JSON
 * lines, or as readable lines (pino-pretty) when standard error is a terminal. Chosen by the entry points
 * (src/run.ts, src/admin/cli.ts) when they make their logger, never on import, so tests keep getting JSON.
 */
export function processLogDestination(): pino.DestinationStream {
  if (process.stderr.isTTY) {
    return pino.transport({ target: 'pino-pretty', options: { destination: 2, colorize: true, sync: true } });
  }
  // Synchronous, so a fatal line written just before `process.exit` is not lost.
  return pino.destination({ dest: 2, sync: true });
}

/**
 * Structured logs. One `err` serializer makes any error safe to log; paths that could carry card data
 * or tokens are redacted as a second line of defence; the first is never passing them to the logger.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      // Whatever is logged under `err`, by our code or a library's, is reduced to what is safe to keep:
      // no Bot API payload, no request URL with the bot token, no fields of a plain object.
      serializers: { err: loggableError },
      redact: {
        paths: [
          'pan',
          'cvv',
          'PAN',
          'CVV',
          'token',
          '*.pan',
          '*.cvv',
          '*.PAN',
          '*.CVV',
          '*.token',
          'req.headers.authorization',
          'headers.authorization',
          '*.headers.authorization',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
