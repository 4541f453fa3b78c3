import { IDEMPOTENCY_KEY_LENGTH, IDEMPOTENCY_KEY_PATTERN, IDEMPOTENCY_KEY_RULE } from './idempotency.js';

/** The OpenAPI document as @fastify/swagger builds it, plus what only the HTTP layer knows. */
type OpenApiDocument = { paths?: Record<string, Record<string, { parameters?: unknown[] }>> };

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    `Extension. ${IDEMPOTENCY_KEY_RULE}, per user. The same key with the same request replays the stored reply ` +
    '(header `Idempotent-Replayed: true`); with another request: 422; while the first has not finished: 409. Only successes ' +
    'are kept, for 24 hours (replies holding an OTP code no longer than OTP codes are kept), a bounded number per user with ' +
    'the oldest going first; a refusal or a fault frees the key. A success is stored in the same transaction as its effect, ' +
    'so a request cut off by a crash has either both or neither; after a lease, a retry runs it. The top-up quote changes ' +
    'nothing and keeps nothing.',
  // What the server checks, from its own constants: the pattern is ECMA-262 as JSON Schema's is.
  schema: {
    type: 'string',
    minLength: IDEMPOTENCY_KEY_LENGTH.min,
    maxLength: IDEMPOTENCY_KEY_LENGTH.max,
    pattern: IDEMPOTENCY_KEY_PATTERN.source,
  },
};

type Operation = {
  parameters?: unknown[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: { anyOf?: { type?: string }[] } }> };
};

/**
 * A body that may be null (the endpoints that take none, or `{}`) is optional in the document, as the
 * server treats it; the generator marks every body required.
 */
export function withOptionalEmptyBodies<T extends object>(document: T): T {
  const doc = document as T & { paths?: Record<string, Record<string, Operation>> };
  for (const operations of Object.values(doc.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      const schema = operation.requestBody?.content?.['application/json']?.schema;
      if (schema?.anyOf?.some((s) => s.type === 'null')) operation.requestBody!.required = false;
    }
  }
  return doc;
}

/** Documents the `Idempotency-Key` header on every POST operation. */
export function withIdempotencyHeader<T extends object>(document: T): T {
  const doc = structuredClone(document) as T & OpenApiDocument;
  for (const operations of Object.values(doc.paths ?? {})) {
    const post = operations.post;
    if (post) post.parameters = [...(post.parameters ?? []), IDEMPOTENCY_KEY];
  }
  return doc;
}
