/**
 * A handler reads its query, path parameters and body as the route's own joi schemas type them,
 * with no cast: a key the schema does not declare, or a value used as another type, fails to
 * compile. The `@ts-expect-error` lines are checked by the type-check (`tsc` covers test/), which
 * also fails if one of them stops being an error.
 */
import { expect } from 'chai';
import Joi from 'joi';
import type { Context } from 'koa';
import { defineRoute } from '../../src/http/route.js';
import { bool, int, objectOf, oneOf, optional, required, typed } from '../../src/lib/params.js';
import type { Logger } from '../../src/observability/logger.js';

interface Frame {
  track_id: string;
  alt_m: number;
}

const typedRoute = defineRoute({
  method: 'POST',
  path: '/t/:id',
  uses: [],
  summary: 'typed input',
  tag: 'test',
  response: Joi.any(),
  query: objectOf({ index: int(0, 9, 0), verbose: bool(false), mode: oneOf(['a', 'b'], 'a'), label: optional(Joi.string()) }),
  params: objectOf({ id: required(Joi.string().max(8)) }),
  body: objectOf({ frames: typed<Frame[]>(Joi.array().items(Joi.object<Frame>({ track_id: Joi.string(), alt_m: Joi.number() })).required()) }),
  handler({ query, params, body }) {
    const index: number = query.index;
    const verbose: boolean = query.verbose;
    const mode: 'a' | 'b' = query.mode;
    const label: string | undefined = query.label;
    // @ts-expect-error: no such key in the query schema
    void query.indx;
    // @ts-expect-error: an optional key may be undefined
    const sure: string = query.label;
    // @ts-expect-error: a number, not a string
    const text: string = query.index;
    // @ts-expect-error: 'c' is not one of the words
    void (query.mode === 'c');
    // @ts-expect-error: the path parameters have no `index`
    void params.index;
    // @ts-expect-error: a frame has no `alt`
    void body.frames[0]?.alt;
    return { index, verbose, mode, label, id: params.id.toUpperCase(), alts: body.frames.map((f) => f.alt_m + 1), sure, text };
  },
});

defineRoute({
  method: 'POST',
  path: '/u',
  uses: [],
  summary: 'untyped and text input',
  tag: 'test',
  response: Joi.any(),
  query: Joi.object({ index: Joi.number() }),
  body: 'text',
  handler({ query, body }) {
    // @ts-expect-error: an untyped object schema gives `unknown`, which must be narrowed, not read
    void query.index;
    const raw: string = body;
    // @ts-expect-error: a text body is a string
    const n: number = body;
    return { raw, n };
  },
});

describe('typed route input', () => {
  it('the schemas validate to the very values the handler is typed to read', async () => {
    const query = typedRoute.query!.validate({ index: '3', verbose: 'yes' }, { convert: true });
    const params = typedRoute.params!.validate({ id: 'ab' });
    const body = (typedRoute.body as Joi.ObjectSchema).validate({ frames: [{ track_id: 'A', alt_m: 90 }] });
    for (const r of [query, params, body]) expect(r.error).to.equal(undefined);
    expect(query.value).to.deep.equal({ index: 3, verbose: true, mode: 'a' });
    const out = await typedRoute.handler({ query: query.value, params: params.value, body: body.value, ctx: {} as Context, signal: new AbortController().signal, log: {} as Logger });
    expect(out).to.deep.include({ index: 3, verbose: true, mode: 'a', label: undefined, id: 'AB', alts: [91] });
  });
});
