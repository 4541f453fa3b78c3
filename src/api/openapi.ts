/** The OpenAPI document as @fastify/swagger builds it, plus what only the HTTP layer knows. */
type OpenApiDocument = { paths?: Record<string, Record<string, { parameters?: unknown[] }>> };

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Extension. 1 to 255 visible ASCII characters, per user. The same key with the same request replays the stored reply ' +
    '(header `Idempotent-Replayed: true`); with another request: 422; while the first is still running: 409. Replies are ' +
    'kept for 24 hours; cooldown refusals (429) and server faults are not kept.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};

/** Documents the `Idempotency-Key` header on every POST operation. */
export function withIdempotencyHeader<T extends object>(document: T): T {
  const doc = structuredClone(document) as T & OpenApiDocument;
  for (const operations of Object.values(doc.paths ?? {})) {
    const post = operations.post;
    if (post) post.parameters = [...(post.parameters ?? []), IDEMPOTENCY_KEY];
  }
  return doc;
}
