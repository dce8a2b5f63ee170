import { expect } from 'chai';
import Joi from 'joi';
import supertest from 'supertest';
import { createKoaApp } from '../../src/http/koa-app.js';
import { defineRoute } from '../../src/http/route.js';
import { EventLoopMonitor } from '../../src/observability/event-loop.js';
import { createLogger } from '../../src/observability/logger.js';
import { Metrics } from '../../src/observability/metrics.js';
import { Ring } from '../../src/lib/ring.js';
import type { TraceRecord } from '../../src/observability/traces.js';
import { int, num } from '../../src/lib/params.js';
import { StoreUnavailableError } from '../../src/ledger/store/store.js';

// A small app with the real middleware chain and routes written for these tests.
const eventLoop = new EventLoopMonitor();
const routes = [
  defineRoute({
    method: 'POST',
    path: '/t/json',
    root: true,
    uses: [],
    summary: 'json body',
    tag: 'test',
    body: Joi.object({ name: Joi.string().max(5).required(), n: int(0, 10, 1), kind: Joi.string().valid('a', 'b') }),
    response: Joi.object({ got: Joi.object() }),
    handler: ({ body }) => ({ got: body }),
  }),
  defineRoute({
    method: 'POST',
    path: '/t/xml',
    root: true,
    uses: [],
    summary: 'text body',
    tag: 'test',
    body: 'text',
    bodyTypes: ['application/xml', 'text/xml'],
    bodyLimitBytes: 1024,
    response: Joi.object({ length: Joi.number().integer() }),
    handler: ({ body }) => ({ length: (body as string).length }),
  }),
  defineRoute({
    method: 'GET',
    path: '/t/q/:id',
    root: true,
    uses: [],
    summary: 'query',
    tag: 'test',
    params: Joi.object({ id: Joi.string().pattern(/^[a-z]+$/).required() }),
    query: Joi.object({ seed: int(0, 4294967295, 42), p: num(0, 1, 0.5) }),
    response: Joi.object({ query: Joi.object(), params: Joi.object() }),
    handler: ({ query, params }) => ({ query, params }),
  }),
  defineRoute({
    method: 'GET',
    path: '/t/boom',
    root: true,
    uses: [],
    summary: 'throws',
    tag: 'test',
    response: Joi.object(),
    handler: () => {
      throw new Error('secret internals /etc/passwd');
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/t/store-down',
    root: true,
    uses: [],
    summary: 'a domain error no service mapped',
    tag: 'test',
    response: Joi.object(),
    handler: () => {
      throw new StoreUnavailableError('database unreachable', 7);
    },
  }),
];
const traces = new Ring<TraceRecord>(8);
const app = createKoaApp({ routes, jsonLimitBytes: 2048, log: createLogger('silent'), metrics: new Metrics(eventLoop), traces });
const http = supertest(app.callback());

/** The four fields of a response's traceparent header; fails the test when it is missing or malformed. */
function traceparent(res: { headers: Record<string, string | undefined> }): [version: string, trace: string, span: string, flags: string] {
  const m = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(res.headers.traceparent ?? '');
  if (!m) throw new Error(`malformed traceparent: ${res.headers.traceparent}`);
  return [m[1]!, m[2]!, m[3]!, m[4]!];
}

describe('src/http conventions', () => {
  after(() => eventLoop.close());

  it('404 for unknown paths with the FastAPI body', async () => {
    const res = await http.get('/nope');
    expect(res.status).to.equal(404);
    expect(res.text).to.equal('{"detail":"Not Found"}');
  });

  it('405 with Allow for a known path and wrong method', async () => {
    const res = await http.delete('/t/json');
    expect(res.status).to.equal(405);
    expect(res.headers.allow).to.equal('POST, OPTIONS');
    expect(res.body).to.deep.equal({ detail: 'Method Not Allowed' });
  });

  it('422 reports every query and path error together, pydantic-shaped, with the raw input', async () => {
    const res = await http.get('/t/q/ABC?seed=abc&p=2&extra=1');
    expect(res.status).to.equal(422);
    expect(res.body).to.deep.equal({
      detail: [
        { type: 'string_pattern_mismatch', loc: ['path', 'id'], msg: "String should match pattern '^[a-z]+$'", input: 'ABC', ctx: { pattern: '^[a-z]+$' } },
        { type: 'int_parsing', loc: ['query', 'seed'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 'abc' },
        { type: 'less_than_equal', loc: ['query', 'p'], msg: 'Input should be less than or equal to 1', input: '2', ctx: { le: 1 } },
        { type: 'extra_forbidden', loc: ['query', 'extra'], msg: 'Extra inputs are not permitted', input: '1' },
      ],
    });
  });

  it('422 for body fields: missing (input = enclosing object), too long, literal, extra', async () => {
    const res = await http.post('/t/json').send({ n: 11, kind: 'c', zzz: true });
    expect(res.status).to.equal(422);
    expect(res.body.detail).to.deep.equal([
      { type: 'missing', loc: ['body', 'name'], msg: 'Field required', input: { n: 11, kind: 'c', zzz: true } },
      { type: 'less_than_equal', loc: ['body', 'n'], msg: 'Input should be less than or equal to 10', input: 11, ctx: { le: 10 } },
      { type: 'literal_error', loc: ['body', 'kind'], msg: "Input should be 'a' or 'b'", input: 'c', ctx: { expected: "'a' or 'b'" } },
      { type: 'extra_forbidden', loc: ['body', 'zzz'], msg: 'Extra inputs are not permitted', input: true },
    ]);
  });

  it('422 json_invalid for malformed JSON, missing body when there is none', async () => {
    const bad = await http.post('/t/json').set('content-type', 'application/json').send('{"name": ');
    expect(bad.status).to.equal(422);
    expect(bad.body.detail[0]).to.include({ type: 'json_invalid', msg: 'JSON decode error' });
    expect(bad.body.detail[0].loc[0]).to.equal('body');
    const none = await http.post('/t/json');
    expect(none.status).to.equal(422);
    expect(none.body).to.deep.equal({ detail: [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }] });
  });

  it('413 over the body limit and 415 for a wrong content type', async () => {
    const big = await http.post('/t/json').send({ name: 'x'.repeat(5000) });
    expect(big.status).to.equal(413);
    expect(big.body).to.deep.equal({ detail: 'Request body too large: the limit is 2048 bytes' });
    const xmlBig = await http.post('/t/xml').set('content-type', 'application/xml').send(`<a>${'x'.repeat(2000)}</a>`);
    expect(xmlBig.status).to.equal(413);
    const wrong = await http.post('/t/xml').set('content-type', 'application/json').send('{}');
    expect(wrong.status).to.equal(415);
    expect(wrong.body).to.deep.equal({ detail: "Unsupported media type 'application/json': send application/xml, text/xml" });
    const ok = await http.post('/t/xml').set('content-type', 'text/xml').send('<a/>');
    expect(ok.body).to.deep.equal({ length: 4 });
  });

  it('a domain error that reaches the middleware gets the answer of its code, not a 500', async () => {
    const res = await http.get('/t/store-down');
    expect(res.status).to.equal(503);
    expect(res.headers['retry-after']).to.equal('7');
    expect(res.body).to.deep.equal({ detail: 'Ledger store unavailable: database unreachable, retry later' });
  });

  it('500 never leaks internals', async () => {
    const res = await http.get('/t/boom');
    expect(res.status).to.equal(500);
    expect(res.text).to.equal('{"detail":"Internal Server Error"}');
  });

  it('echoes a sane x-request-id; otherwise the trace id names the request', async () => {
    const a = await http.get('/t/q/abc').set('x-request-id', 'abc-123');
    expect(a.headers['x-request-id']).to.equal('abc-123');
    const b = await http.get('/t/q/abc').set('x-request-id', 'bad id <script>');
    expect(b.headers['x-request-id']).to.equal(traceparent(b)[1]);
    const c = await http.get('/t/q/abc');
    expect(c.headers['x-request-id']).to.match(/^[0-9a-f]{32}$/).and.not.equal(b.headers['x-request-id']);
  });

  it('continues an inbound W3C traceparent with a new span, and starts one otherwise', async () => {
    const inbound = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const a = await http.get('/t/q/abc').set('traceparent', inbound);
    const [v, trace, span, flags] = traceparent(a);
    expect([v, trace, flags]).to.deep.equal(['00', '4bf92f3577b34da6a3ce929d0e0e4736', '01']);
    expect(span).to.match(/^[0-9a-f]{16}$/).and.not.equal('00f067aa0ba902b7');
    const zero = await http.get('/t/q/abc').set('traceparent', `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`);
    expect(traceparent(zero)[1]).to.not.equal('0'.repeat(32));
    expect(traces.toArray().some((t) => t.traceparent.includes('4bf92f3577b34da6a3ce929d0e0e4736') && t.route === '/t/q/:id')).to.equal(true);
  });

  it('sets security headers on every answer', async () => {
    for (const res of [await http.get('/t/q/abc'), await http.get('/nope')]) {
      expect(res.headers).to.include({
        'x-content-type-options': 'nosniff',
        'x-frame-options': 'DENY',
        'referrer-policy': 'no-referrer',
        'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
      });
    }
  });
});
