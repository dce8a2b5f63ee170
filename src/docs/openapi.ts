/** OpenAPI 3.1 generated from the route table and the same joi schemas the routes validate with. */
import type { RouteDef } from '../http/route.js';
import { API_VERSION } from '../core/doctrine.js';
import { DEFS_REF, toJsonSchema, type JsonSchema } from './joi-to-json-schema.js';
import { jsonValue } from '../http/response-schema.js';
import { inSlices } from '../core/slices.js';
import { specPath } from '../introspection/route-inventory.js';
import { operationExampleOf } from './operation-examples.js';
import { kernelExampleOf } from '../kernels/kernel-docs.js';
import { orderedTags } from './tag-order.js';

const VALIDATION_ERROR: JsonSchema = {
  type: 'object',
  title: 'HTTPValidationError',
  properties: {
    detail: {
      type: 'array',
      items: {
        type: 'object',
        title: 'ValidationError',
        required: ['type', 'loc', 'msg'],
        properties: {
          type: { type: 'string' },
          loc: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
          msg: { type: 'string' },
          input: { ...toJsonSchema(jsonValue()), description: 'the value that was refused, cut short: strings at 256 characters, lists and objects at 8 entries, nesting at 3 levels' },
          ctx: {
            type: 'object',
            description: "the rule's parameters: ge, gt, le, lt, min_length, max_length, pattern, field_type and actual_length, shown and total; `error: {}` on a value_error",
            additionalProperties: { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'object', additionalProperties: false }] },
          },
        },
      },
    },
  },
};

const MESSAGE_ERROR: JsonSchema = { type: 'object', title: 'ErrorMessage', required: ['detail'], properties: { detail: { type: 'string' } } };

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request: a body that is not UTF-8 or whose Content-Encoding is corrupt',
  401: 'Write token missing or not accepted (WWW-Authenticate: Bearer)',
  404: 'Not Found',
  413: 'Request body too large',
  415: 'Unsupported media type',
  429: 'Too many write requests from this client (Retry-After)',
  500: 'Internal Server Error',
  503: 'Capacity or queue limit reached (Retry-After)',
  504: 'Computation exceeded its time budget',
};

/** What every path does besides its operations (src/http/route.ts `mountRoutes`, errors.ts). */
export const INFO_DESCRIPTION = [
  'Counter-drone verdicts with DSSE receipts in a hash-chained ledger, live ADS-B, CoT 2.0 interop, read-only views and seeded kernels.',
  '',
  '**Methods.** Every path answers `OPTIONS` with `204 No Content` and an `Allow` header naming what it serves (`GET` implies `HEAD`; `OPTIONS` is always listed), e.g. `Allow: GET, HEAD, OPTIONS`. ' +
    'A method a path does not serve (any method: `PUT`, `DELETE`, `TRACE`, `PROPFIND`, …) is `405` with the same `Allow` and the JSON body `{"detail":"Method Not Allowed"}`, never 501 or text. ' +
    'An unknown path is `404` with `{"detail":"Not Found"}` for every method. `HEAD` is answered wherever `GET` is, with the headers of the `GET`.',
  '',
  '**Errors.** `422` is `HTTPValidationError` (every issue of the request together, pydantic v2 wording); other errors are `{"detail": "<message>"}`; `503` carries `Retry-After`. ' +
    'Any operation may be answered `400` (malformed HTTP), `408` (head or body too slow) or `431` (head over the limit) before routing, and the connection then closes.',
  '',
  '**Writes.** Routes that append, store or refresh (marked with the `writeToken` security requirement) need `Authorization: Bearer <token>` when write tokens are configured (401 otherwise) and count against the write quotas when those are set, in ledger nodes (a verdict 1, an edge batch its frames), per token or, without one, per client address (429 with Retry-After).',
  '',
  '**Query values.** Integers are plain decimals (`5`, not `5.0` or `5e0`), numbers finite decimals, booleans one of true/false/1/0/yes/no/on/off/t/f/y/n; every numeric parameter is bounded and out of range is 422, never clamped.',
].join('\n');

/**
 * `<method>_<path as identifier>`; a trailing slash is its own path (`/jackin/` beside `/jackin`),
 * so it becomes `_slash` rather than vanishing.
 */
export function operationId(method: string, path: string): string {
  const slash = path.length > 1 && path.endsWith('/') ? '_slash' : '';
  return `${method.toLowerCase()}_${path.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '')}${slash}`;
}

/**
 * What Node refuses before any route sees the request (src/http/server.ts), answered on every
 * operation: shared responses, referenced rather than repeated 134 times.
 */
const CONNECTION_ERRORS: Record<string, JsonSchema> = {
  BadHttp: { description: 'Malformed HTTP request (answered before routing; the connection closes)', content: json({ $ref: '#/components/schemas/ErrorMessage' }) },
  HeadTimeout: { description: 'Request head or body not received in time (the connection closes)', content: json({ $ref: '#/components/schemas/ErrorMessage' }) },
  HeadTooLarge: { description: 'Request line and headers over guard.maxHeaderBytes (the connection closes)', content: json({ $ref: '#/components/schemas/ErrorMessage' }) },
};
const CONNECTION_STATUS: Record<string, string> = { 400: 'BadHttp', 408: 'HeadTimeout', 431: 'HeadTooLarge' };

/**
 * A route's documented example: its own fields first, then a kernel's generated example (its
 * defaults and their body), then the operations' examples file. The files are read on the first
 * build of the document, never at start-up.
 */
function exampleOf(route: RouteDef): { parameters: Readonly<Record<string, unknown>>; response: unknown; responseType: string } {
  const kernel = route.kernel ? kernelExampleOf(route.kernel) : undefined;
  const file = kernel ? undefined : operationExampleOf(route.method, route.path);
  const own = route.responseExample ?? kernel?.body;
  return {
    parameters: { ...file?.parameters, ...kernel?.query, ...route.parameterExamples },
    response: own ?? file?.response,
    responseType: (own === undefined ? file?.responseType : undefined) ?? 'application/json',
  };
}

function parameters(route: RouteDef, where: 'query' | 'path'): JsonSchema[] {
  const schema = where === 'query' ? route.query : route.params;
  if (!schema) return [];
  const examples = exampleOf(route).parameters;
  const s = toJsonSchema(schema) as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(s.properties ?? {}).map(([name, p]) => {
    const { description, ...rest } = p;
    return {
      name,
      in: where,
      ...(typeof description === 'string' ? { description } : {}),
      required: where === 'path' || (s.required ?? []).includes(name),
      schema: rest,
      ...(name in examples ? { example: examples[name] } : {}),
    };
  });
}

function json(schema: JsonSchema): JsonSchema {
  return { 'application/json': { schema } };
}

/** The success body of a route as OpenAPI content: its media type and the JSON Schema of its `response`. */
export function responseContent(r: RouteDef): JsonSchema {
  const schema = toJsonSchema(r.response);
  const types = typeof r.produces === 'string' ? [r.produces] : (r.produces ?? ['application/json']);
  const { response: example, responseType } = exampleOf(r);
  return Object.fromEntries(
    types.map((t) => {
      const own = isJson(t) ? schema : textOnly(schema);
      // a text example belongs to the media type it was answered with
      const shown = example !== undefined && (isJson(t) ? responseType === 'application/json' : responseType === t);
      return [t, shown ? { schema: own, example } : { schema: own }];
    }),
  );
}

const isJson = (type: string): boolean => type === 'application/json' || type.endsWith('+json');

/** Under a text media type the body is a string: of a string-or-JSON schema (asset files), the string member. */
function textOnly(schema: JsonSchema): JsonSchema {
  const members = schema.anyOf as JsonSchema[] | undefined;
  const strings = members?.filter((m) => m.type === 'string');
  return strings?.length === 1 ? strings[0]! : schema;
}

type Paths = Record<string, Record<string, JsonSchema>>;

/**
 * The routes that are operations of the document: a path that differs from another route's only
 * by a trailing slash (`/jackin/` beside `/jackin`) gives the same answer, so it is named in that
 * route's description rather than listed as a second resource.
 */
export function documentedRoutes(routes: readonly RouteDef[]): RouteDef[] {
  const keys = routeKeys(routes);
  return routes.filter((r) => !slashTwinOf(r, keys));
}

const routeKeys = (routes: readonly RouteDef[]): Set<string> => new Set(routes.map((r) => `${r.method} ${r.path}`));

function slashTwinOf(r: RouteDef, keys: ReadonlySet<string>): boolean {
  return r.path.length > 1 && r.path.endsWith('/') && keys.has(`${r.method} ${r.path.slice(0, -1)}`);
}

/** The description of an operation, plus the trailing-slash path that serves the same answer, if any. */
function describedWithTwin(r: RouteDef, keys: ReadonlySet<string>): string | undefined {
  if (!keys.has(`${r.method} ${r.path}/`)) return r.description;
  const also = `Also served at \`${r.path}/\`, with the same answer.`;
  return r.description ? `${r.description} ${also}` : also;
}

export function buildOpenApi(routes: readonly RouteDef[]): JsonSchema {
  const paths: Paths = {};
  const ids = new Set<string>();
  const keys = routeKeys(routes);
  for (const r of routes) if (!slashTwinOf(r, keys)) addOperation(paths, ids, r, keys);
  return openApiDocument(paths);
}

/**
 * The same document built a few routes at a time with the loop free between slices: converting
 * every response schema takes a few hundred ms, which must not be one main-thread task.
 */
export async function buildOpenApiInSlices(routes: readonly RouteDef[]): Promise<JsonSchema> {
  const paths: Paths = {};
  const ids = new Set<string>();
  const keys = routeKeys(routes);
  await inSlices(routes, (r) => {
    if (!slashTwinOf(r, keys)) addOperation(paths, ids, r, keys);
  });
  return openApiDocument(paths);
}

function addOperation(paths: Paths, ids: Set<string>, r: RouteDef, keys: ReadonlySet<string>): void {
  const p = specPath(r.path);
  const content = responseContent(r);
  const responses: Record<string, JsonSchema> = { 200: { description: 'OK', content } };
  for (const status of r.responseAlsoOn ?? []) responses[status] = { description: `${STATUS_TEXT[status] ?? 'Error'}: the same body`, content };
  if (r.query || r.params || r.body) responses[422] = { description: 'Validation Error', content: json({ $ref: '#/components/schemas/HTTPValidationError' }) };
  // src/http/route.ts: a body of another media type is 415, one over the limit 413, bytes that do not decode 400
  const bodyErrors = r.body ? [400, 413, 415] : [];
  for (const status of [...bodyErrors, ...(r.errors ?? [])]) {
    if (responses[status]) continue;
    responses[status] =
      status === 304
        ? { description: 'Not Modified: If-None-Match matched the current ETag (no body)' }
        : { description: STATUS_TEXT[status] ?? 'Error', content: json({ $ref: '#/components/schemas/ErrorMessage' }) };
  }
  const id = operationId(r.method, p);
  const description = describedWithTwin(r, keys);
  if (ids.has(id)) throw new Error(`operationId ${id} is not unique (${r.method} ${r.path})`);
  ids.add(id);
  const op: JsonSchema = {
    summary: r.summary,
    ...(description ? { description } : {}),
    tags: [r.tag],
    operationId: id,
    parameters: [...parameters(r, 'path'), ...parameters(r, 'query')],
    responses,
  };
  if (r.write) {
    // src/http/write-guard.ts: a bearer token when tokens are configured, else open; always rate limited
    op.security = [{ writeToken: [] }, {}];
    for (const status of [401, 429]) responses[status] ??= { description: STATUS_TEXT[status], content: json({ $ref: '#/components/schemas/ErrorMessage' }) };
  }
  for (const [status, name] of Object.entries(CONNECTION_STATUS)) responses[status] ??= { $ref: `#/components/responses/${name}` };
  if (r.body) {
    const types = r.body === 'text' ? (r.bodyTypes ?? ['text/plain']) : ['application/json'];
    const schema = r.body === 'text' ? { type: 'string' } : toJsonSchema(r.body);
    const examples = r.examples ?? operationExampleOf(r.method, r.path)?.body;
    const content = Object.fromEntries(types.map((t) => [t, examples ? { schema, examples } : { schema }]));
    op.requestBody = { required: true, content };
  }
  (paths[p] ??= {})[r.method.toLowerCase()] = op;
}

const COMPONENT_REF = '#/components/schemas/';

/**
 * Moves the named schemas each converted schema carries under `$defs` (a recursive CoT detail
 * node) to `components.schemas`, once, and points their references there: a `#/$defs/` reference
 * inside the document would resolve against the document's root, not the schema's.
 */
function hoistDefs(node: unknown, found: Map<string, JsonSchema>): void {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) return node.forEach((x) => hoistDefs(x, found));
  const n = node as JsonSchema;
  const defs = n.$defs as Record<string, JsonSchema> | undefined;
  if (defs) {
    delete n.$defs;
    for (const [name, schema] of Object.entries(defs)) {
      const seen = found.get(name);
      if (seen && JSON.stringify(seen) !== JSON.stringify(schema)) throw new Error(`two different schemas are named ${name}`);
      if (!seen) found.set(name, schema);
      hoistDefs(schema, found);
    }
  }
  if (typeof n.$ref === 'string' && n.$ref.startsWith(DEFS_REF)) n.$ref = `${COMPONENT_REF}${n.$ref.slice(DEFS_REF.length)}`;
  for (const [k, v] of Object.entries(n)) if (k !== 'example' && k !== 'examples') hoistDefs(v, found);
}

function openApiDocument(paths: Paths): JsonSchema {
  const named = new Map<string, JsonSchema>();
  hoistDefs(paths, named);
  const used = new Set(Object.values(paths).flatMap((ops) => Object.values(ops).flatMap((op) => (op as { tags: string[] }).tags)));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Drone Intelligence Service',
      version: API_VERSION,
      description: INFO_DESCRIPTION,
    },
    servers: [{ url: '/', description: 'this service (paths are absolute from its origin)' }],
    // reads are open; writes take the write token when SVC_WRITE_TOKENS is set (per operation)
    security: [{}],
    tags: orderedTags(used),
    paths,
    components: {
      schemas: { HTTPValidationError: VALIDATION_ERROR, ErrorMessage: MESSAGE_ERROR, ...Object.fromEntries(named) },
      responses: CONNECTION_ERRORS,
      securitySchemes: {
        writeToken: { type: 'http', scheme: 'bearer', description: 'A write token of SVC_WRITE_TOKENS (guard.writeTokens); write routes need one only when tokens are configured' },
      },
    },
  };
}
