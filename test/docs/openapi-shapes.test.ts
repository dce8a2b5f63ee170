/**
 * No schema of /openapi.json is a bare object (`type: object` with neither properties,
 * additionalProperties, patternProperties nor alternatives) or an array of anything (no `items`, no
 * `prefixItems`): a generated client would type it `Record<string, never>` or `unknown[]`.
 */
import { expect } from 'chai';
import Joi from 'joi';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { buildOpenApi } from '../../src/docs/openapi.js';
import type { RouteDef } from '../../src/http/route.js';

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
