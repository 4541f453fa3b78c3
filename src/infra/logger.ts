import { pino, type Logger } from 'pino';
import { loggableError } from './log-safe.js';

export type { Logger };

/**
 * Where a process's logs go: standard error (standard output is the admin command line's answer), as JSON
 * lines, or as readable lines (pino-pretty) when standard error is a terminal. Chosen by the entry points
 * (src/app/run.ts, src/admin/cli.ts) when they make their logger, never on import, so tests keep getting JSON.
 */
export function processLogDestination(): pino.DestinationStream {
  if (process.stderr.isTTY) {
    return pino.transport({ target: 'pino-pretty', options: { destination: 2, colorize: true, sync: true } });
  }
  return gatheredLogDestination(2);
}

const GATHER_BYTES = 4096;
const GATHER_MS = 200;

/**
 * JSON lines to a file descriptor or path, gathered into one write of up to 4 kB, and written at least
 * every 200 ms: a write of its own for every access line cost the API about a sixth of its read
 * throughput (`bench/api.bench.ts`). Written synchronously, and flushed when the process exits, so a
 * fatal line written just before `process.exit` is not lost; a SIGKILL loses at most the last 200 ms.
 */
export function gatheredLogDestination(dest: number | string): pino.DestinationStream {
  const stream = pino.destination({ dest, sync: true, minLength: GATHER_BYTES });
  setInterval(() => stream.flush(), GATHER_MS).unref();
  process.once('exit', () => stream.flushSync());
  return stream;
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
