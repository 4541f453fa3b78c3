import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { pino } from 'pino';
import type { Logger } from '../infra/logger.js';

/** An incoming `X-Request-Id` worth keeping: 1 to 128 visible ASCII characters. */
const SANE_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** The request's id: the caller's `X-Request-Id` when sane, else `make()` (`requestIds`). */
export function requestIdFrom(header: string | string[] | undefined, make: () => string): string {
  return typeof header === 'string' && SANE_REQUEST_ID.test(header) ? header : make();
}

/** How many ids one prefix serves: the last six characters of an id count them in decimal. */
const IDS_PER_PREFIX = 1_000_000;

/**
 * Ids for requests that bring none: each a UUID (version 4 by its shape), unique, and cheap to make. The
 * first 24 characters are a random UUID's, drawn once a process starts; the last 12 count the ids made,
 * six digits for each million and six within it (numbers small enough for V8 to write at little cost). A
 * random UUID for every request cost a read about 1 % (docs/performance.md). An id ties a reply to its log
 * lines and is no secret: a client can tell from two of its replies how many requests came between.
 */
export function requestIds(): () => string {
  const random = randomUUID().slice(0, 24);
  let millions = -1;
  let prefix = '';
  let count = IDS_PER_PREFIX;
  return () => {
    if (count === IDS_PER_PREFIX) {
      millions = (millions + 1) % IDS_PER_PREFIX;
      prefix = random + String(IDS_PER_PREFIX + millions).slice(1);
      count = 0;
    }
    return prefix + String(IDS_PER_PREFIX + count++).slice(1);
  };
}

/** Writes one request's access line: the route's line, made by `accessLines`. */
export type AccessLine = (request: Pick<FastifyRequest, 'id' | 'method' | 'caller'>, status: number, ms: number) => void;

/**
 * The access line of each route (`lineFor(route)`), or none when the logger is below info. A line is the
 * JSON line pino writes for `{ reqId, method, route, status, ms, userId }` and the message `request`, with
 * the logger's level, time and bindings first, but built as text with the route's part made once, and
 * handed to the logger's stream: serializing an object per request through pino cost the API's reads
 * about a tenth of their throughput (docs/performance.md). Nothing in it is a secret (ids, a route pattern,
 * a status), so no redaction is needed. Written through pino itself when its stream wants each line's
 * details (a multistream) or the logger reshapes lines (a `log` formatter, a mixin, a stream hook).
 *
 * The seam: this function, whose fallback below is the library's own path (`access.info(fields, 'request')`);
 * making `lineParts` return undefined swaps to it. Measured gain (bench/fast-paths.ts, 2 runs on a shared 2-core machine at load 11): 213 to 287 ns a line
 * against 1,261 to 2,203 ns through pino, about 1 to 2 µs saved a request.
 */
export function accessLines(logger: Logger): ((route: string) => AccessLine) | undefined {
  if (!logger.isLevelEnabled('info')) return undefined;
  const parts = lineParts(logger);
  if (!parts) {
    const access = logger.child({}, { redact: [] });
    return (route) => (request, status, ms) => access.info(accessFields(request, route, status, ms), 'request');
  }
  const { head, time, chindings, message, stream } = parts;
  return (route) => {
    const routePart = `,"route":${JSON.stringify(route)},"status":`;
    return (request, status, ms) => {
      const user = request.caller ? `,"userId":${quoted(request.caller.userId)}` : '';
      stream.write(
        `${head}${time()}${chindings},"reqId":${quoted(request.id)},"method":"${request.method}"${routePart}${status},"ms":${ms}${user}${message}`,
      );
    };
  };
}

/** Printable ASCII but the quote and the backslash: what a JSON string holds as it is, as ids (a UUID, a sane `X-Request-Id`) almost always are. */
const PLAIN = /^[ !#-[\]-~]*$/;

/** A string as JSON: quoted as it is when it is plain (JSON.stringify costs more). */
function quoted(text: string): string {
  return PLAIN.test(text) ? `"${text}"` : JSON.stringify(text);
}

/** The parts of a pino line that do not change from line to line, when the logger writes plain lines. */
function lineParts(logger: Logger) {
  const { symbols } = pino;
  const own = logger as unknown as Record<symbol, unknown>;
  const stream = own[symbols.streamSym] as pino.DestinationStream & Record<symbol, unknown>;
  const formatters = own[symbols.formattersSym] as { log?: unknown } | undefined;
  const hooks = own[symbols.hooksSym] as { streamWrite?: unknown } | undefined;
  if (stream[symbols.needsMetadataGsym] || formatters?.log || own[symbols.mixinSym] || hooks?.streamWrite) return undefined;
  const timestamp = own[symbols.timeSym] as () => string;
  return {
    /** `{"level":30` */
    head: (own[symbols.lsCacheSym] as Record<number, string>)[logger.levels.values.info!]!,
    /** `,"time":…` as the logger writes it */
    time: () => timestamp.call(logger),
    /** The logger's bindings: `,"pid":…,"hostname":…` and any of its children's. */
    chindings: own[symbols.chindingsSym] as string,
    message: `,${JSON.stringify(own[symbols.messageKeySym])}:"request"${own[symbols.endSym] as string}`,
    stream,
  };
}

function accessFields(request: Pick<FastifyRequest, 'id' | 'method' | 'caller'>, route: string, status: number, ms: number) {
  const caller = request.caller;
  return caller
    ? { reqId: request.id, method: request.method, route, status, ms, userId: caller.userId }
    : { reqId: request.id, method: request.method, route, status, ms };
}
