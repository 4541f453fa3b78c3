import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Structured logs. Paths that could carry card data or tokens are redacted as a second line of
 * defence; the first is never passing them to the logger.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
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
