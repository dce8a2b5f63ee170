/**
 * The route table documents itself completely: every route declares a response schema that
 * converts to valid JSON Schema 2020-12, every query and path parameter has a description, every
 * kernel parameter carries its description in its kernel's declaration and every constraint message
 * of a kernel is listed among its declared rules; the served /openapi.json is a valid OpenAPI 3.1 document
 * (@apidevtools/swagger-parser) with unique operationIds.
 */
import { expect } from 'chai';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import Joi from 'joi';
import { KERNELS } from '../../workers/registry.js';
import { kernelParamsSchema } from '../../workers/kernel-def.js';
import { described } from '../../src/http/schema-walk.js';
import type { RouteDef } from '../../src/http/route.js';
import { buildOpenApi } from '../../src/docs/openapi.js';
import { projectRoot } from '../../src/config/load.js';
import { responseValidator } from '../helpers/response-check.js';
import { withTestApp } from '../helpers/app.js';

/** Every query and path parameter of a route without a description, as `METHOD path in name`. */
function undescribedParameters(routes: readonly RouteDef[]): string[] {
  const out: string[] = [];
  for (const r of routes) {
    for (const [where, schema] of [['query', r.query], ['path', r.params]] as const) {
      for (const [name, d] of Object.entries(schema ? (described(schema).keys ?? {}) : {})) {
        if (!d.flags?.description) out.push(`${r.method} ${r.path} ${where} ${name}`);
      }
    }
  }
  return out;
}

describe('the route table documents every route', function () {
  const app = withTestApp();

  it('every route declares a response schema that compiles as JSON Schema 2020-12', () => {
    expect(app().routes.length).to.be.above(120);
    const missing = app().routes.filter((r) => !r.response).map((r) => `${r.method} ${r.path}`);
    expect(missing).to.deep.equal([]);
    for (const r of app().routes) expect(() => responseValidator(r.response), `${r.method} ${r.path}`).to.not.throw();
  });

  it('every query and path parameter has a description', () => {
    expect(undescribedParameters(app().routes)).to.deep.equal([]);
    // the check sees a parameter without one
    const bare = app().routes.find((r) => r.path === '/api/svc/v1/adsb')!;
    expect(undescribedParameters([{ ...bare, query: Joi.object({ x: Joi.number() }) }])).to.deep.equal(['GET /api/svc/v1/adsb query x']);
  });

  it('every kernel parameter carries its description, and every constraint message of a kernel is one of its declared rules', () => {
    const dir = join(projectRoot(), 'workers', 'kernels');
    const messagesIn = (src: string) => [...src.matchAll(/msg: '([^']+)'/g)].map((m) => m[1]!);
    const own = new Set<string>();
    for (const def of KERNELS) {
      for (const [k, d] of Object.entries(described(kernelParamsSchema(def)).keys ?? {})) expect(d.flags?.description?.length ?? 0, `${def.id} ${k}`).to.be.above(3);
      expect(Boolean(def.rules?.length), `${def.id}: rules declared iff it has constraints`).to.equal(Boolean(def.constraints));
      // a literal message in the kernel's own file is one of its own rules
      const file = `${def.id.replaceAll('/', '-')}.ts`;
      own.add(file);
      const missing = messagesIn(readFileSync(join(dir, file), 'utf8')).filter((m) => !def.rules?.includes(m));
      expect(missing, `${def.id}: constraint messages missing from its rules`).to.deep.equal([]);
    }
    // helper files shared by several kernels: each message is a rule of some kernel (a template literal is listed with its value)
    const listed = new Set(KERNELS.flatMap((d) => d.rules ?? []));
    const shared = readdirSync(dir).filter((f) => !own.has(f)).flatMap((f) => messagesIn(readFileSync(join(dir, f), 'utf8')));
    expect(shared.filter((m) => !listed.has(m))).to.deep.equal([]);
    expect(listed.size).to.be.above(20);
  });

  it('a kernel rule that is violated answers 422 with the documented message', async () => {
    const cases: [string, string, string][] = [
      ['/api/svc/v1/moe/route?experts=2&topk=3', 'topk', 'topk must not exceed experts'],
      ['/api/svc/v1/mla/latent-compress?d_head=6', 'd_head', 'd_head must be a multiple of 4'],
      ['/api/svc/v1/qec/surface-code?distance=4', 'distance', 'distance must be odd'],
    ];
    for (const [url, param, msg] of cases) {
      const res = await app().http.get(url);
      expect(res.status, url).to.equal(422);
      expect(res.body.detail[0]).to.include({ type: 'value_error', msg: `Value error, ${msg}` });
      expect(res.body.detail[0].loc).to.deep.equal(['query', param]);
    }
  });

  it('/openapi.json validates as OpenAPI 3.1 and carries response schemas, descriptions, rules and formats', async () => {
    const doc = (await app().http.get('/openapi.json')).body;
    await SwaggerParser.validate(structuredClone(doc));
    const ids = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap((p) => Object.values(p).map((op) => op.operationId));
    expect(new Set(ids).size).to.equal(ids.length);
    // a path served with and without a trailing slash is one operation, which names the other path
    for (const page of ['/elite/globe', '/jackin']) {
      expect(doc.paths, page).to.not.have.property(`${page}/`);
      expect(doc.paths[page].get.description, page).to.include(`Also served at \`${page}/\``);
    }
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }>; parameters: { description?: string }[] }>>)) {
      for (const [method, op] of Object.entries(ops)) {
        const content = op.responses['200']!.content!;
        for (const [type, media] of Object.entries(content)) expect(Object.keys(media.schema), `${method} ${path} ${type}`).to.not.deep.equal([]);
        for (const p of op.parameters) expect(p.description, `${method} ${path}`).to.be.a('string');
      }
    }
    const ok = (path: string, method = 'get') => doc.paths[path][method].responses['200'].content['application/json'].schema;
    expect(ok('/api/svc/v1/ledger/readiness').required).to.include.members(['schema', 'ready', 'integrity']);
    expect(doc.paths['/api/svc/v1/ledger/readiness'].get.responses['503'].content['application/json'].schema).to.deep.equal(ok('/api/svc/v1/ledger/readiness'));
    expect(ok('/api/svc/v1/ssm/scan').properties.kernel).to.deep.equal({ enum: ['ssm/scan'] });
    const frame = doc.paths['/api/svc/v1/verdict'].post.requestBody.content['application/json'].schema.properties;
    expect(frame.ts_utc).to.include({ format: 'date-time' });
    expect(frame.heading_deg).to.include({ minimum: 0, exclusiveMaximum: 360 });
    const param = (path: string, name: string) => doc.paths[path].get.parameters.find((p: { name: string }) => p.name === name);
    expect(param('/api/svc/v1/mla/latent-compress', 'd_head').schema).to.include({ multipleOf: 4 });
    expect(param('/api/svc/v1/qec/surface-code', 'distance').schema.not).to.deep.equal({ multipleOf: 2 });
    expect(doc.paths['/api/svc/v1/moe/route'].get.description).to.match(/topk must not exceed experts/);
    expect(doc.paths['/api/svc/v1/adsb'].get.description).to.match(/lat_min must be less than or equal to lat_max/);
    expect(param('/api/svc/v1/fgbrain/repair', 'request').schema.contentSchema.properties).to.have.keys(['seed', 'n', 'm', 'lesion', 'heal']);
    expect(doc.info.description).to.match(/OPTIONS.*204.*Allow/s).and.match(/405/).and.match(/404/);
    expect(doc.paths['/api/svc/v1/fleet/vessels'].get.responses['304']).to.deep.equal({ description: 'Not Modified: If-None-Match matched the current ETag (no body)' });
  });

  it('a duplicate operationId is refused when the document is built', () => {
    const r = app().routes.find((x) => x.path === '/jackin')!;
    expect(() => buildOpenApi([r, { ...r }])).to.throw(/operationId get_jackin is not unique/);
  });
});
