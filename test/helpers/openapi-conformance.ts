import { getOrCreate } from '../../src/infra/get-or-create.js';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';

/** One request made through the test API and what came back. */
export interface Exchange {
  method: string;
  /** Path and query, as sent. */
  url: string;
  requestHeaders: Record<string, string>;
  /** The body as sent (text), if any. */
  requestBody?: string;
  status: number;
  contentType: string | null;
  text: string;
}

type Schema = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Schema;
}
interface Operation {
  security?: unknown[];
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
}

// ajv-formats is CommonJS with a default export: under Node's ESM the module object may wrap it.
const addFormats = ((addFormatsPlugin as unknown as { default?: unknown }).default ?? addFormatsPlugin) as (ajv: Ajv2020) => Ajv2020;

/**
 * Checks exchanges against the OpenAPI 3.1 document the server serves, with a standard JSON Schema
 * 2020-12 validator (ajv): each reply's status must be documented for its operation and its body
 * must validate against that response's schema; a successful request's body, query and headers must
 * validate against the operation's request schemas, and a query parameter or header a validation
 * refusal names must not. Replies no operation documents (an unknown
 * route or method) must still be the documented error envelope. Returns one line per problem.
 */
export function createConformance(document: Document) {
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  // Query parameters and headers arrive as text: validated as OpenAPI tools do, coerced to the documented type.
  const coercing = addFormats(new Ajv2020({ strict: false, allErrors: true, coerceTypes: true }));
  const compiled = new WeakMap<Schema, ValidateFunction>();
  const coercedCompiled = new WeakMap<Schema, ValidateFunction>();
  const compile = (schema: Schema, coerce = false) => {
    const cache = coerce ? coercedCompiled : compiled;
    return getOrCreate(cache, schema, () => (coerce ? coercing : ajv).compile(schema));
  };

  const templates = Object.keys(document.paths)
    .map((template) => ({
      template,
      pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]*')}$`),
      // The most literal template first: /api/v1/cards/transactions before /api/v1/cards/{id}.
      params: (template.match(/\{/g) ?? []).length,
    }))
    .sort((a, b) => a.params - b.params);

  const envelopeSchema = Object.values(document.paths)
    .flatMap((operations) => Object.values(operations))
    .map((operation) => operation.responses?.['404']?.content?.['application/json']?.schema)
    .find((schema) => schema !== undefined);

  function operationFor(method: string, path: string): { template: string; operation: Operation } | undefined {
    for (const { template, pattern } of templates) {
      const operation = document.paths[template]?.[method.toLowerCase()];
      if (operation && pattern.test(path)) return { template, operation };
    }
    return undefined;
  }

  function errorsOf(validate: ValidateFunction): string {
    return JSON.stringify(validate.errors?.map((e) => `${e.instancePath} ${e.message}`));
  }

  return {
    check(exchange: Exchange): string[] {
      const [path = '', query = ''] = exchange.url.split('?', 2);
      const label = `${exchange.method} ${exchange.url} → ${exchange.status}`;
      if (path === '/api/v1/openapi.json') return [];
      let body: unknown;
      try {
        body = JSON.parse(exchange.text);
      } catch {
        return [`${label}: the reply is not JSON: ${exchange.text.slice(0, 200)}`];
      }
      if (!/^application\/json/.test(exchange.contentType ?? '')) return [`${label}: content-type ${exchange.contentType}`];

      const found = operationFor(exchange.method, path);
      if (!found) {
        if (!envelopeSchema) return [`${label}: no error envelope documented`];
        const validate = compile(envelopeSchema);
        return validate(body) ? [] : [`${label}: not the error envelope: ${errorsOf(validate)}`];
      }
      const { template, operation } = found;
      const response = operation.responses?.[String(exchange.status)];
      if (!response) return [`${label}: status ${exchange.status} is not documented for ${exchange.method} ${template}`];
      const problems: string[] = [];
      const schema = response.content?.['application/json']?.schema;
      if (!schema) problems.push(`${label}: no response schema documented`);
      else {
        const validate = compile(schema);
        if (!validate(body))
          problems.push(`${label}: reply does not match ${template}: ${errorsOf(validate)} in ${exchange.text.slice(0, 300)}`);
      }
      if (exchange.status < 300) problems.push(...checkRequest(label, operation, query, exchange));
      if (exchange.status === 400) problems.push(...checkRefusedParameters(label, operation, query, exchange, body));
      return problems;
    },
  };

  /**
   * A query parameter or header the server refused (a validation item naming it) must be one the
   * document refuses too, where the document can say so: given once (a parameter given twice is
   * refused for that alone) and compared as OpenAPI tools do, coerced to the documented type.
   */
  function checkRefusedParameters(label: string, operation: Operation, query: string, exchange: Exchange, body: unknown): string[] {
    const items = (body as { error?: unknown }).error;
    if (!Array.isArray(items)) return [];
    const given = new URLSearchParams(query);
    const problems: string[] = [];
    for (const item of items as { path?: unknown[] }[]) {
      const name = item.path?.length === 1 ? item.path[0] : undefined;
      if (typeof name !== 'string') continue;
      const parameter = (operation.parameters ?? []).find(
        (p) => p.schema && (p.in === 'query' ? p.name === name : p.in === 'header' && p.name.toLowerCase() === name.toLowerCase()),
      );
      if (!parameter) continue;
      let value: string | undefined;
      if (parameter.in === 'query') {
        const values = given.getAll(name);
        if (values.length === 1) value = values[0];
      } else {
        value = Object.entries(exchange.requestHeaders).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
      }
      if (value === undefined) continue;
      if (compile(parameter.schema!, true)(value))
        problems.push(`${label}: the server refuses ${parameter.in} ${name}=${JSON.stringify(value)}; the document allows it`);
    }
    return problems;
  }

  /** A request the server accepted must be one the document allows. */
  function checkRequest(label: string, operation: Operation, query: string, exchange: Exchange): string[] {
    const problems: string[] = [];
    const parameters = operation.parameters ?? [];
    const given = new URLSearchParams(query);
    for (const name of new Set(given.keys())) {
      const parameter = parameters.find((p) => p.in === 'query' && p.name === name);
      // Public routes (liveness) ignore what they do not read, as the README says; the others refuse it.
      if (!parameter) {
        if (operation.security) problems.push(`${label}: query parameter ${name} is not documented`);
      } else if (parameter.schema) {
        const validate = compile(parameter.schema, true);
        if (!validate(given.get(name))) problems.push(`${label}: query ${name} does not match: ${errorsOf(validate)}`);
      }
    }
    for (const parameter of parameters.filter((p) => p.in === 'header' && p.schema)) {
      const value = Object.entries(exchange.requestHeaders).find(([k]) => k.toLowerCase() === parameter.name.toLowerCase())?.[1];
      if (value === undefined) continue;
      const validate = compile(parameter.schema!, true);
      if (!validate(value)) problems.push(`${label}: header ${parameter.name} does not match: ${errorsOf(validate)}`);
    }
    const bodySchema = operation.requestBody?.content?.['application/json']?.schema;
    if (bodySchema && exchange.requestBody !== undefined && exchange.requestBody !== '') {
      const validate = compile(bodySchema);
      if (!validate(JSON.parse(exchange.requestBody))) problems.push(`${label}: request body does not match: ${errorsOf(validate)}`);
    }
    return problems;
  }
}
