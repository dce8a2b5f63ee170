/** OpenAPI 3.1 generated from the route table and the same joi schemas the routes validate with. */
import type { RouteDef } from '../http/route.js';
import { API_VERSION } from '../core/doctrine.js';
import { toJsonSchema, type JsonSchema } from './joi-to-json-schema.js';

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
          input: {},
          ctx: { type: 'object' },
        },
      },
    },
  },
};

const MESSAGE_ERROR: JsonSchema = { type: 'object', title: 'ErrorMessage', required: ['detail'], properties: { detail: { type: 'string' } } };

const STATUS_TEXT: Record<number, string> = {
  404: 'Not Found',
  413: 'Request body too large',
  415: 'Unsupported media type',
  500: 'Internal Server Error',
  503: 'Capacity or queue limit reached (Retry-After)',
  504: 'Computation exceeded its time budget',
};

function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

function parameters(route: RouteDef, where: 'query' | 'path'): JsonSchema[] {
  const schema = where === 'query' ? route.query : route.params;
  if (!schema) return [];
  const s = toJsonSchema(schema) as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(s.properties ?? {}).map(([name, p]) => ({
    name,
    in: where,
    required: where === 'path' || (s.required ?? []).includes(name),
    schema: p,
  }));
}

export function buildOpenApi(routes: readonly RouteDef[]): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const r of routes) {
    const p = openApiPath(r.path);
    const responses: Record<string, JsonSchema> = {
      200: { description: 'OK', content: { [r.produces ?? 'application/json']: { schema: {} } } },
    };
    if (r.query || r.params || r.body) responses[422] = { description: 'Validation Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/HTTPValidationError' } } } };
    for (const status of r.errors ?? []) {
      responses[status] = { description: STATUS_TEXT[status] ?? 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorMessage' } } } };
    }
    const op: JsonSchema = {
      summary: r.summary,
      tags: [r.tag],
      operationId: `${r.method.toLowerCase()}_${p.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '')}`,
      parameters: [...parameters(r, 'path'), ...parameters(r, 'query')],
      responses,
    };
    if (r.body) {
      op.requestBody = {
        required: true,
        content:
          r.body === 'text'
            ? Object.fromEntries((r.bodyTypes ?? ['text/plain']).map((t) => [t, { schema: { type: 'string' } }]))
            : { 'application/json': { schema: toJsonSchema(r.body) } },
      };
    }
    (paths[p] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Drone Intelligence Service',
      version: API_VERSION,
      description: 'Counter-drone verdicts with DSSE receipts in a hash-chained ledger, live ADS-B, CoT 2.0 interop, read-only views and seeded kernels.',
    },
    paths,
    components: { schemas: { HTTPValidationError: VALIDATION_ERROR, ErrorMessage: MESSAGE_ERROR } },
  };
}
