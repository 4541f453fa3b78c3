import { withIdempotencyHeader, withOptionalEmptyBodies } from '../plugins/openapi.js';
import type { ApiApp } from './route-kit.js';

/** Extension: the OpenAPI document (`plugins/openapi.ts`), no token; made once, at its first request. */
export function openApiRoutes(app: ApiApp): void {
  let document: object | undefined;
  app.get('/api/v1/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => {
    document ??= withOptionalEmptyBodies(withIdempotencyHeader(app.swagger()));
    return document;
  });
}
