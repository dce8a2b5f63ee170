/** /openapi.json and /docs (Swagger UI served from the installed package: no CDN). */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Joi } from '../lib/code-points.js';
import { objectOf, required } from '../lib/params.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { Errors } from '../http/errors.js';
import { buildOpenApiInSlices } from './openapi.js';
import { listOf, mapOf, oneOf, openShape, shape, str, text } from '../http/response-schema.js';

const require = createRequire(import.meta.url);
const SWAGGER_DIR = dirname(require.resolve('swagger-ui-dist/package.json'));
// a Map: a request names the key, and `__proto__` or `constructor` must find nothing
const ASSETS = new Map([
  ['swagger-ui.css', 'text/css'],
  ['swagger-ui-bundle.js', 'application/javascript'],
]);

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Drone Intelligence Service API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="stylesheet" href="/docs/assets/docs.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script></body></html>`;

// an external file, not an inline script, so the page runs under a strict CSP
const INIT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true });`;

// Swagger UI's own layout on a phone squeezes each operation's path and summary into a third of the
// row and the tag's description beside its name: stack them instead, with narrower margins
const DOCS_CSS = `@media (max-width: 40rem) {
  .swagger-ui .wrapper { padding: 0 8px; }
  .swagger-ui .information-container.wrapper .info { margin: 16px 0; }
  .swagger-ui .opblock-tag { flex-wrap: wrap; font-size: 18px; padding: 8px 4px; }
  .swagger-ui .opblock-tag small { flex: 1 0 100%; padding: 4px 0 0; font-size: 13px; }
  .swagger-ui .opblock .opblock-summary-path-description-wrapper { flex-direction: column; align-items: flex-start; gap: 2px; }
  .swagger-ui .opblock .opblock-summary-path { max-width: 100%; word-break: break-all; }
  .swagger-ui .opblock .opblock-summary-method { min-width: 56px; }
}
`;

/** A JSON Schema (2020-12) as the document embeds it: any keywords. */
const JSON_SCHEMA = openShape().description('a JSON Schema (2020-12)');
const RESPONSE = Joi.alternatives(openShape({ description: str() }), shape({ $ref: str() }));
const OPERATION = openShape({
  summary: str(),
  tags: listOf(str()),
  operationId: str(),
  parameters: listOf(openShape({ name: str(), in: oneOf('query', 'path'), required: Joi.boolean(), schema: JSON_SCHEMA })),
  responses: mapOf(RESPONSE).description('by status code'),
});

/** The document buildOpenApi writes (src/docs/openapi.ts), to the level a client walks it. */
const OPENAPI_DOCUMENT = shape({
  openapi: oneOf('3.1.0'),
  info: shape({ title: str(), version: str(), description: str() }),
  servers: listOf(shape({ url: str(), description: str() })),
  tags: listOf(shape({ name: str(), description: str().optional() })).description('in the order /docs lists its groups'),
  security: listOf(mapOf(listOf(str()))),
  paths: mapOf(mapOf(OPERATION).description('operations by lower-case method')).description('by path template'),
  components: shape({
    schemas: mapOf(JSON_SCHEMA),
    responses: mapOf(openShape({ description: str() })),
    securitySchemes: mapOf(openShape({ type: str() })),
  }),
}).description('The OpenAPI 3.1 document');

/** `table` is read lazily: it holds every route, this one included. */
export function docsRoutes(table: () => readonly RouteDef[]): RouteDef[] {
  let spec: Promise<string> | null = null;
  return [
    defineRoute({
      method: 'GET',
      path: '/openapi.json',
      root: true,
      uses: [],
      summary: 'OpenAPI 3.1 description generated from the route table',
      tag: 'docs',
      response: OPENAPI_DOCUMENT,
      async handler({ ctx }) {
        // built on the first request, in slices (the table is complete by then), then served as is
        spec ??= buildOpenApiInSlices(table()).then(
          (doc) => JSON.stringify(doc),
          (err: unknown) => {
            spec = null;
            throw err;
          },
        );
        const body = await spec;
        ctx.type = 'application/json';
        return body;
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/docs',
      root: true,
      uses: [],
      summary: 'Interactive API documentation (Swagger UI, served locally)',
      tag: 'docs',
      produces: 'text/html',
      response: text('The Swagger UI page'),
      html: 'docs',
      handler({ ctx }) {
        ctx.type = 'text/html; charset=utf-8';
        return PAGE;
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/docs/assets/:file',
      root: true,
      uses: [],
      summary: 'Swagger UI assets',
      tag: 'docs',
      params: objectOf({ file: required(Joi.string().max(64)).description('swagger-ui.css, swagger-ui-bundle.js, init.js or docs.css') }),
      produces: ['application/javascript', 'text/css'],
      response: text('The asset (Swagger UI from the installed swagger-ui-dist package; init.js and docs.css are ours)'),
      errors: [404],
      async handler({ params, ctx }) {
        const { file } = params;
        ctx.set('Cache-Control', 'public, max-age=86400');
        if (file === 'init.js') {
          ctx.type = 'application/javascript';
          return INIT;
        }
        if (file === 'docs.css') {
          ctx.type = 'text/css';
          return DOCS_CSS;
        }
        const type = ASSETS.get(file);
        if (!type) throw Errors.itemNotFound('asset', file);
        ctx.type = type;
        return readFile(join(SWAGGER_DIR, file));
      },
    }),
  ];
}
