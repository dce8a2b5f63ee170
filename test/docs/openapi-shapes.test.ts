/**
 * No schema of /openapi.json is a bare object (`type: object` with neither properties,
 * additionalProperties, patternProperties nor alternatives) or an array of anything (no `items`, no
 * `prefixItems`): a generated client would type it `Record<string, never>` or `unknown[]`. Nor is any
 * schema `{}` (annotations only), which it would type `unknown`.
 */
import { expect } from 'chai';
import Joi from 'joi';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { buildOpenApi } from '../../src/docs/openapi.js';
import type { RouteDef } from '../../src/http/route.js';
import { INGEST } from '../../src/cot/cot.responses.js';
import { toJsonSchema } from '../../src/docs/joi-to-json-schema.js';
import { documentValidator } from '../helpers/json-schema.js';

type Node = Record<string, unknown>;

/** JSON pointers (from the document's root) of every bare object and every array of anything. */
export function bareSchemas(doc: unknown): string[] {
  const found: string[] = [];
  const walk = (node: unknown, at: string): void => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach((x, i) => walk(x, `${at}/${i}`));
    const n = node as Node;
    const types = Array.isArray(n.type) ? n.type : [n.type];
    // an object whose alternatives (anyOf/oneOf/allOf) each say their keys is not bare: they are walked below
    const keyed = n.properties !== undefined || n.additionalProperties !== undefined || n.patternProperties !== undefined || n.anyOf !== undefined || n.oneOf !== undefined || n.allOf !== undefined;
    if (types.includes('object') && !keyed) found.push(at);
    if (types.includes('array') && n.items === undefined && n.prefixItems === undefined) found.push(`${at} (array)`);
    // examples are values, not schemas
    for (const [k, v] of Object.entries(n)) if (k !== 'example' && k !== 'examples') walk(v, `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`);
  };
  walk(doc, '#');
  return found;
}

// keywords that describe a value without constraining it: a schema with only these accepts anything
const ANNOTATIONS = new Set(['description', 'title', 'default', 'deprecated', 'readOnly', 'writeOnly']);
// the keys under which a schema object holds schemas (`properties` and friends hold maps of them)
const SCHEMA_KEYS = new Set(['schema', 'items', 'additionalProperties', 'not', 'contentSchema']);
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'schemas', '$defs']);
const SCHEMA_LISTS = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems']);

/** JSON pointers of every schema that says nothing about its value (`{}` or annotations only): a generated client types it `unknown`. */
export function untypedSchemas(doc: unknown): string[] {
  const found: string[] = [];
  const step = (at: string, k: string) => `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
  const walk = (node: unknown, at: string, isSchema: boolean): void => {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return;
    const n = node as Node;
    if (isSchema && Object.keys(n).every((k) => ANNOTATIONS.has(k))) found.push(at);
    for (const [k, v] of Object.entries(n)) {
      if (k === 'example' || k === 'examples' || v === null || typeof v !== 'object') continue;
      if (SCHEMA_KEYS.has(k)) walk(v, step(at, k), true);
      else if (SCHEMA_MAPS.has(k)) for (const [name, s] of Object.entries(v as Node)) walk(s, step(step(at, k), name), true);
      else if (SCHEMA_LISTS.has(k) && Array.isArray(v)) v.forEach((s, i) => walk(s, `${step(at, k)}/${i}`, true));
      else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${step(at, k)}/${i}`, false));
      else walk(v, step(at, k), false);
    }
  };
  walk(doc, '#', false);
  return found;
}

describe('/openapi.json: no bare object or untyped array', function () {
  let t: TestApp;
  let doc: unknown;

  before(async () => {
    t = await buildTestApp({}, { checkResponses: false });
    doc = buildOpenApi(t.routes);
  });
  after(() => t.close());

  it('every object schema says what keys it has and every array what it holds, kernel outputs included', () => {
    expect(bareSchemas(doc)).to.deep.equal([]);
  });

  it('every schema says something of its value: no `{}` (the TAK outputs\' details, health observations, echoed inputs included)', () => {
    expect(untypedSchemas(doc)).to.deep.equal([]);
  });

  it('the CoT detail node is one named schema that refers to itself: a child is checked at any depth, in the document and standing alone', () => {
    const d = doc as { components: { schemas: Record<string, Node> }; paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { schema: Node }> }> }>> };
    const ref = { $ref: '#/components/schemas/CotNode' };
    expect((d.components.schemas.CotNode!.properties as Record<string, Node>).children).to.deep.equal({ type: 'array', items: ref });
    const ingest = d.paths['/api/svc/v1/cot/ingest']!.post!.responses['200']!.content['application/json']!.schema;
    const detail = ((ingest.properties as Record<string, Node>).event!.properties as Record<string, Node>).detail!;
    expect(detail).to.deep.equal({ anyOf: [ref, { type: 'null' }] });
    const leaf = (name: string) => ({ name, attributes: { a: '1' } });
    const deep = { ...leaf('detail'), children: [{ ...leaf('track'), children: [{ ...leaf('x'), children: [leaf('y')] }] }] };
    const broken = structuredClone(deep);
    delete (broken.children[0]!.children[0]!.children[0] as { name?: string }).name;
    const inDocument = documentValidator(detail, d.components.schemas);
    expect([inDocument(deep), inDocument(null), inDocument(broken)]).to.deep.equal([true, true, false]);
    // as the response checker compiles it: the route's schema alone, the node under its own $defs
    const alone = toJsonSchema(INGEST);
    expect(Object.keys(alone.$defs as object)).to.deep.equal(['CotNode']);
    const nodeAlone = documentValidator({ ...((alone.properties as Record<string, Node>).event!.properties as Record<string, Node>).detail, $defs: alone.$defs });
    expect([nodeAlone(deep), nodeAlone(broken)]).to.deep.equal([true, false]);
  });

  it('the untyped walk finds `{}` and annotation-only schemas wherever schemas nest, a constraint-only branch is not one', () => {
    const planted = {
      paths: { '/a': { get: { parameters: [{ name: 'p', schema: { description: 'x' } }], responses: { 200: { content: { 'application/json': { schema: { type: 'object', properties: { any: {}, typed: { type: 'string' } }, additionalProperties: {}, anyOf: [{ required: ['typed'] }, { title: 't' }] }, example: { any: {} } } } } } } } },
      components: { schemas: { E: { type: 'array', items: {} } } },
    };
    expect(untypedSchemas(planted)).to.deep.equal([
      '#/paths/~1a/get/parameters/0/schema',
      '#/paths/~1a/get/responses/200/content/application~1json/schema/properties/any',
      '#/paths/~1a/get/responses/200/content/application~1json/schema/additionalProperties',
      '#/paths/~1a/get/responses/200/content/application~1json/schema/anyOf/1',
      '#/components/schemas/E/items',
    ]);
  });

  it('an object with alternatives is judged by its alternatives; an example is never walked', () => {
    const planted = { a: { type: 'object' }, b: { type: ['array', 'null'] }, c: { type: 'object', anyOf: [{ type: 'object' }, { type: 'object', properties: {} }] }, d: { type: 'object', properties: {}, example: { type: 'object' } } };
    expect(bareSchemas(planted)).to.deep.equal(['#/a', '#/b (array)', '#/c/anyOf/0']);
  });

  it('the walk finds a bare object and an untyped array where a route declares them, and nothing in examples', () => {
    const route: RouteDef = {
      method: 'GET',
      path: '/t/:id',
      root: true,
      summary: 's',
      tag: 't',
      uses: [],
      params: Joi.object({ id: Joi.string() }),
      parameterExamples: { id: 'x' },
      response: Joi.object({ open: Joi.object(), list: Joi.array(), keyed: Joi.object().pattern(Joi.string(), Joi.number()), typed: Joi.array().items(Joi.string()) }),
      responseExample: { open: {}, list: [], keyed: {}, typed: [] },
      handler: () => ({}),
    };
    const found = bareSchemas(buildOpenApi([route]));
    expect(found).to.deep.equal([
      '#/paths/~1t~1{id}/get/responses/200/content/application~1json/schema/properties/open',
      '#/paths/~1t~1{id}/get/responses/200/content/application~1json/schema/properties/list (array)',
    ]);
  });
});
