import { pino, type Logger } from 'pino';
import { loggableError } from './log-safe.js';

export type { Logger };

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
          'pan', 'cvv', 'PAN', 'CVV', 'token', '*.pan', '*.cvv', '*.PAN', '*.CVV', '*.token',
          'req.headers.authorization', 'headers.authorization', '*.headers.authorization',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
