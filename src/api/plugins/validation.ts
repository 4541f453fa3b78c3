import fp from 'fastify-plugin';
import { z } from 'zod';
import { validationError } from '../../core/rules/schemas.js';
import { parseJsonBody } from '../json-body.js';

const noQuery = z.strictObject({});

/**
 * What a request may carry: strict JSON bodies only (`json-body.ts`), validated by the core's zod schemas
 * (a failure is the core's own validation error), and no query parameters a route does not declare.
 * Replies are built by the presenters and not re-validated: response schemas document the API.
 */
export const validationPlugin = fp(
  async (app) => {
    // A POST without a body is validated as an empty object, so its items name the missing fields.
    app.setValidatorCompiler(({ schema, httpPart }) => (data: unknown) => {
      const input = httpPart === 'body' && (data === null || data === undefined) ? {} : data;
      const result = (schema as z.ZodType).safeParse(input);
      return result.success ? { value: result.data } : { error: validationError(result.error) };
    });
    app.setSerializerCompiler(() => (data: unknown) => JSON.stringify(data));

    app.removeAllContentTypeParsers();
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
      try {
        done(null, parseJsonBody(body as string));
      } catch (error) {
        done(error as Error, undefined);
      }
    });

    // A route that declares no query parameters takes none: unknown ones are refused like unknown body fields.
    app.addHook('onRoute', (route) => {
      if (route.schema && !route.schema.querystring && route.config?.public !== true)
        route.schema = { ...route.schema, querystring: noQuery };
    });
  },
  { name: 'validation' },
);
