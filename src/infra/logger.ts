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

/** A destination that gathers lines before it writes them; `flush` writes what it holds now. */
export interface GatheredDestination extends pino.DestinationStream {
  flush(): void;
}

/**
 * JSON lines to a file descriptor or path, gathered into one write of up to 4 kB, and written at least
 * every 200 ms: a write of its own for every access line cost the API about a sixth of its read
 * throughput (`bench/api.bench.ts`). The lines wait in a list, joined once per write: sonic-boom's own
 * gathering (`minLength`) measures its whole gathered string at every line, flattening it again each
 * time, which cost the API's reads more than the rest of their access line (docs/performance.md).
 * sonic-boom still does the writing: synchronous, retried while a pipe is full, flushed when the process
 * exits, so a fatal line written just before `process.exit` is not lost; a SIGKILL loses at most the last 200 ms.
 */
export function gatheredLogDestination(dest: number | string): GatheredDestination {
  const stream = pino.destination({ dest, sync: true });
  let lines: string[] = [];
  let length = 0;
  const flush = () => {
    if (lines.length === 0) return;
    const text = lines.join('');
    lines = [];
    length = 0;
    stream.write(text);
  };
  setInterval(flush, GATHER_MS).unref();
  process.once('exit', () => {
    flush();
    stream.flushSync();
  });
  return {
    write(line: string) {
      lines.push(line);
      length += line.length;
      if (length >= GATHER_BYTES) flush();
    },
    flush,
  };
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
