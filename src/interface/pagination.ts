import { z } from 'zod';

/**
 * A page's pagination as the interface words it (spec 4.12), the same on the wire both ways: the HTTP API's
 * answer schema (src/api/http-schemas.ts) and the reading of another service's answer (src/remote/shapes.ts).
 * Like objects.ts, it imports nothing of ours.
 */
export const paginationSchema = z.object({
  page: z.number().int(),
  limit: z.number().int(),
  total: z.number().int(),
  totalPages: z.number().int(),
  hasNext: z.boolean(),
  hasPrev: z.boolean(),
});
