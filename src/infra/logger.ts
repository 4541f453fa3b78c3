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
/** Room for the line that takes the gathered bytes past `GATHER_BYTES`; a longer line is written on its own. */
const GATHER_ROOM = 16_384;
const GATHER_MS = 200;

/** A destination that gathers lines before it writes them; `flush` writes what it holds now. */
export interface GatheredDestination extends pino.DestinationStream {
  flush(): void;
}

/**
 * JSON lines to a file descriptor or path, gathered into one write of about 4 kB, and written at least
 * every 200 ms: a write of its own for every access line cost the API about a sixth of its read
 * throughput (`bench/api.bench.ts`). Each line is encoded once, into one reused buffer: sonic-boom's own
 * gathering (`minLength`) measures its whole gathered string at every line, flattening it again each time,
 * and encodes it twice more when it writes; that cost the API's reads more than building their access
 * lines (docs/performance.md). sonic-boom still does the writing: synchronous, retried while a pipe is
 * full, flushed when the process exits, so a fatal line written just before `process.exit` is not lost;
 * a SIGKILL loses at most the last 200 ms.
 */
export function gatheredLogDestination(dest: number | string): GatheredDestination {
  const stream = pino.destination({ dest, sync: true, contentMode: 'buffer' });
  // In buffer mode sonic-boom takes bytes (its types know only strings). Looked up at each write: on a
  // broken pipe (EPIPE) pino replaces the stream's `write` with one that drops what it is given.
  const writeBytes = (bytes: Buffer) => (stream.write as unknown as (bytes: Buffer) => boolean).call(stream, bytes);
  const gathered = Buffer.alloc(GATHER_ROOM);
  let used = 0;
  const flush = () => {
    if (used === 0) return;
    // A copy: sonic-boom keeps what it could not write yet (a full pipe) while this buffer fills again.
    const bytes = Buffer.from(gathered.subarray(0, used));
    used = 0;
    writeBytes(bytes);
  };
  setInterval(flush, GATHER_MS).unref();
  process.once('exit', () => {
    flush();
    stream.flushSync();
  });
  return {
    write(line: string) {
      // A UTF-16 unit takes at most 3 bytes of UTF-8: a line that might not fit goes after what is gathered.
      const most = line.length * 3;
      if (used + most > GATHER_ROOM) {
        flush();
        if (most > GATHER_ROOM) {
          writeBytes(Buffer.from(line));
          return;
        }
      }
      used += gathered.write(line, used);
      if (used >= GATHER_BYTES) flush();
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
