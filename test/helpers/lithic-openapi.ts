import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';
import { parse } from 'yaml';

// Lithic's published OpenAPI 3.1 document (Apache-2.0), kept beside the repository: the contract the Lithic
// adapter, our ASA and events routes, and the fake Lithic are all checked against.

/** Where the document lies, relative to the repository root (`LITHIC_OPENAPI_FILE` overrides it). */
export const LITHIC_OPENAPI_RELATIVE = '../shared/vendor/lithic-openapi/lithic-openapi.yml';

const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The document's path, or undefined when it is absent. */
export function lithicOpenApiFile(): string | undefined {
  const file = process.env.LITHIC_OPENAPI_FILE ?? path.resolve(repositoryRoot, LITHIC_OPENAPI_RELATIVE);
  return existsSync(file) ? file : undefined;
}

/**
 * For node:test's `skip` option: false when the document is there, else the reason.
 * @example describe('the adapter against Prism', { skip: lithicOpenApiSkip() }, () => { … })
 */
export function lithicOpenApiSkip(): string | false {
  if (lithicOpenApiFile() !== undefined) return false;
  return `Lithic's OpenAPI document is absent (looked for ${process.env.LITHIC_OPENAPI_FILE ?? LITHIC_OPENAPI_RELATIVE} from the repository root; set LITHIC_OPENAPI_FILE)`;
}

export type Schema = { [key: string]: unknown };
interface Operation {
  parameters?: Schema[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> } | Schema>;
}
export interface LithicDocument {
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, { post: Operation }>;
  components: { schemas: Record<string, Schema>; responses: Record<string, Schema>; parameters: Record<string, Schema> };
}

let cachedDocument: LithicDocument | undefined;

/** The parsed document (read once per process). Throws when it is absent: guard with `lithicOpenApiSkip()`. */
export function lithicDocument(): LithicDocument {
  if (cachedDocument !== undefined) return cachedDocument;
  const file = lithicOpenApiFile();
  if (file === undefined) throw new Error(lithicOpenApiSkip() || 'no document');
  // Parsing the YAML takes about 2 s; its JSON, kept in the temporary folder per version of the file, 50 ms.
  const { size, mtimeMs } = statSync(file);
  const cache = path.join(tmpdir(), `lithic-openapi-${size}-${Math.trunc(mtimeMs)}.json`);
  if (existsSync(cache)) {
    try {
      cachedDocument = JSON.parse(readFileSync(cache, 'utf8')) as LithicDocument;
      return cachedDocument;
    } catch {
      // A cache left half-written: parse the YAML again.
    }
  }
  cachedDocument = parse(readFileSync(file, 'utf8'), { maxAliasCount: -1 }) as LithicDocument;
  const partial = `${cache}.${process.pid}`;
  writeFileSync(partial, JSON.stringify(cachedDocument));
  renameSync(partial, cache);
  return cachedDocument;
}

// ajv-formats is CommonJS with a default export: under Node's ESM the module object may wrap it.
const addFormats = ((addFormatsPlugin as unknown as { default?: unknown }).default ?? addFormatsPlugin) as (ajv: Ajv2020) => Ajv2020;

const DOCUMENT_ID = 'lithic-openapi';

/** What the validator found wrong, one line per problem; empty when the value is one the document allows. */
export type Problems = string[];

export interface LithicValidator {
  /** Against `#/components/schemas/<name>`. */
  schema(name: string, value: unknown): Problems;
  /** A request body against the operation `method path` (a concrete path such as `/v1/cards/abc`). */
  request(method: string, concretePath: string, body: unknown): Problems;
  /** A response: its status must be documented for the operation, and its body valid against that response's schema. */
  response(method: string, concretePath: string, status: number, body: unknown): Problems;
  /** A webhook's payload (`webhooks:` by event type: `card_authorization.approval_request`, `card_transaction.updated`, …). */
  webhook(eventType: string, payload: unknown): Problems;
  /** The operation's path template for a concrete path, or undefined when the document has none. */
  template(method: string, concretePath: string): string | undefined;
}

let cachedValidator: LithicValidator | undefined;

/** A standard JSON Schema 2020-12 validator (ajv, as OpenAPI 3.1 uses) over the whole document; built once. */
export function lithicValidator(): LithicValidator {
  if (cachedValidator !== undefined) return cachedValidator;
  const document = lithicDocument();
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true, validateSchema: false }));
  ajv.addSchema(document as unknown as Schema, DOCUMENT_ID);
  const compiled = new Map<string, ValidateFunction>();
  const byPointer = (pointer: string): ValidateFunction => {
    let validate = compiled.get(pointer);
    if (validate === undefined) {
      validate = ajv.getSchema(`${DOCUMENT_ID}#${pointer}`);
      if (validate === undefined) throw new Error(`the document has no schema at ${pointer}`);
      compiled.set(pointer, validate);
    }
    return validate;
  };
  const check = (pointer: string, value: unknown, what: string): Problems => {
    const validate = byPointer(pointer);
    if (validate(value)) return [];
    return (validate.errors ?? []).map(
      (error) => `${what}${error.instancePath || ''} ${error.message ?? 'is invalid'} (${error.schemaPath})`,
    );
  };
  const pointerSegment = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
  const templates = Object.keys(document.paths)
    .map((template) => ({
      template,
      pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`),
      literal: template.replace(/\{[^}]+\}/g, '').length,
    }))
    // A literal segment wins over a parameter (`/v1/cards/aggregate_balances` before `/v1/cards/{card_token}`).
    .sort((a, b) => b.literal - a.literal);
  const template = (method: string, concretePath: string) => {
    const bare = concretePath.split('?')[0]!;
    return templates.find((t) => t.pattern.test(bare) && document.paths[t.template]![method.toLowerCase()] !== undefined)?.template;
  };
  const operationPointer = (method: string, concretePath: string) => {
    const found = template(method, concretePath);
    if (found === undefined) return undefined;
    return { found, pointer: `/paths/${pointerSegment(found)}/${method.toLowerCase()}` };
  };
  cachedValidator = {
    schema: (name, value) => check(`/components/schemas/${pointerSegment(name)}`, value, name),
    template,
    request(method, concretePath, body) {
      const operation = operationPointer(method, concretePath);
      if (operation === undefined) return [`${method} ${concretePath}: no such operation in the document`];
      const requestBody = document.paths[operation.found]![method.toLowerCase()]!.requestBody;
      if (requestBody?.content?.['application/json']?.schema === undefined) {
        return body === undefined ? [] : [`${method} ${operation.found}: the document takes no JSON body`];
      }
      if (body === undefined)
        return (requestBody as { required?: boolean }).required ? [`${method} ${operation.found}: body required`] : [];
      return check(`${operation.pointer}/requestBody/content/application~1json/schema`, body, `${method} ${operation.found} request`);
    },
    response(method, concretePath, status, body) {
      const operation = operationPointer(method, concretePath);
      if (operation === undefined) return [`${method} ${concretePath}: no such operation in the document`];
      const responses = document.paths[operation.found]![method.toLowerCase()]!.responses ?? {};
      const key = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => responses[k] !== undefined);
      if (key === undefined) return [`${method} ${operation.found}: status ${status} is not documented`];
      let pointer = `${operation.pointer}/responses/${key}`;
      let response = responses[key] as Schema;
      const ref = response.$ref as string | undefined;
      if (ref !== undefined) {
        pointer = ref.slice(1);
        response = document.components.responses[ref.split('/').pop()!]!;
      }
      const content = (response.content as Record<string, { schema?: Schema }> | undefined)?.['application/json'];
      if (content?.schema === undefined) return [];
      return check(`${pointer}/content/application~1json/schema`, body, `${method} ${operation.found} ${status}`);
    },
    webhook(eventType, payload) {
      if (document.webhooks[eventType] === undefined) return [`no webhook ${eventType} in the document`];
      return check(`/webhooks/${pointerSegment(eventType)}/post/requestBody/content/application~1json/schema`, payload, eventType);
    },
  };
  return cachedValidator;
}

/** Throws with every problem when there is any (for tests and the fake, so a drift fails loudly). */
export function assertNoProblems(problems: Problems, what: string): void {
  if (problems.length > 0) throw new Error(`${what} is not what Lithic's document allows:\n${problems.slice(0, 20).join('\n')}`);
}
