/**
 * Every operation of /openapi.json documents the client errors it can really answer, and the
 * server's answer to a bad request of each kind (an oversized head, an unknown query parameter, a
 * body of another media type, too large or malformed, a path id that names nothing, a write without
 * its token) is a status the document lists for that operation.
 */
import { expect } from 'chai';
import type { Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { createHttpServer } from '../../src/http/server.js';
import type { RouteDef } from '../../src/http/route.js';
import { documentedRoutes } from '../../src/docs/openapi.js';
import { withTestApp, testConfig } from '../helpers/app.js';

type Operation = { responses: Record<string, unknown> };
type Doc = { paths: Record<string, Record<string, Operation>> };

const TOKEN = 'doc-errors-token';
const OVERRIDES = { guard: { writeTokens: TOKEN, writeRatePerS: 0 }, http: { jsonLimitBytes: 1024, xmlLimitBytes: 1024 } };
const specPath = (path: string): string => path.replace(/[:*]([A-Za-z_]\w*)/g, '{$1}');

/** The status line of the one answer to a raw request head (the server closes after it). */
function rawStatus(port: number, head: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => resolve(Number(Buffer.concat(chunks).toString('latin1').split(' ')[1])));
    socket.write(head);
  });
}

describe('/openapi.json: the 4xx of every operation', function () {
  const app = withTestApp(() => OVERRIDES);
  let doc: Doc;
  const op = (r: RouteDef): Operation => doc.paths[specPath(r.path)]![r.method.toLowerCase()]!;
  /** Asserts the status is a 4xx the operation of `r` documents; returns it. */
  const listed = (r: RouteDef, status: number, what: string): number => {
    expect(status, `${r.method} ${r.path} ${what}`).to.be.within(400, 499);
    expect(Object.keys(op(r).responses), `${r.method} ${r.path} ${what} answered ${status}`).to.include(String(status));
    return status;
  };

  before(async () => {
    doc = (await app().http.get('/openapi.json').expect(200)).body as Doc;
  });

  it('every operation lists at least one 4xx, with a body schema of the error catalogue', () => {
    let operations = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, o] of Object.entries(ops)) {
        operations++;
        const fourxx = Object.keys(o.responses).filter((s) => /^4\d\d$/.test(s));
        expect(fourxx.length, `${method} ${path}`).to.be.above(0);
        for (const s of fourxx) {
          const r = o.responses[s] as { $ref?: string; content?: Record<string, { schema: { $ref: string } }> };
          const schema = r.$ref ?? r.content?.['application/json']?.schema.$ref;
          expect(schema, `${method} ${path} ${s}`).to.match(s === '422' ? /\/HTTPValidationError$/ : /\/(ErrorMessage|HeadTooLarge|HeadTimeout|BadHttp)$/);
        }
      }
    }
    expect(operations).to.equal(documentedRoutes(app().routes).length);
  });

  it('a head over guard.maxHeaderBytes is 431 on operations that take no parameters', async () => {
    const config = testConfig(OVERRIDES);
    const server: Server = createHttpServer(app().app.callback(), { guard: config.guard, keepAliveTimeoutMs: 5000 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const bare = documentedRoutes(app().routes).filter((r) => r.method === 'GET' && !r.query && !r.params).slice(0, 8);
      expect(bare.length).to.equal(8);
      for (const r of bare) {
        const head = `GET ${r.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ${'a'.repeat(config.guard.maxHeaderBytes + 1024)}\r\nConnection: close\r\n\r\n`;
        expect(listed(r, await rawStatus(port, head), 'oversized head')).to.equal(431);
      }
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('an unknown query parameter is a listed 422 wherever the operation takes a query', async () => {
    const withQuery = app().routes.filter((r) => r.method === 'GET' && r.query && !/[:*]/.test(r.path) && r.produces !== 'text/event-stream');
    expect(withQuery.length).to.be.above(70);
    for (const r of withQuery) expect(listed(r, (await app().http.get(`${r.path}?zz_not_a_parameter=1`)).status, 'unknown query parameter')).to.equal(422);
  });

  it('a body of another media type (415), over the limit (413) or not the schema (422) is listed on every operation with a body', async () => {
    const withBody = app().routes.filter((r) => r.body);
    expect(withBody.length).to.be.at.least(4);
    const auth = `Bearer ${TOKEN}`;
    for (const r of withBody) {
      const post = () => app().http.post(r.path).set('authorization', auth);
      expect(listed(r, (await post().set('content-type', 'application/x-not-taken').send('x')).status, 'wrong media type')).to.equal(415);
      const type = r.body === 'text' ? (r.bodyTypes ?? ['text/plain'])[0]! : 'application/json';
      const big = r.body === 'text' ? 'x'.repeat(70_000) : JSON.stringify({ pad: 'x'.repeat(70_000) });
      expect(listed(r, (await post().set('content-type', type).send(big)).status, 'oversized body')).to.equal(413);
      const malformed = r.body === 'text' ? '<not-a-document' : '{"track_id": 7}';
      listed(r, (await post().set('content-type', type).send(malformed)).status, 'malformed body');
    }
  });

  it('a path id that names nothing is a listed 404 or 422', async () => {
    const withParams = app().routes.filter((r) => r.params && r.method === 'GET');
    expect(withParams.length).to.be.at.least(8);
    const statuses = new Set<number>();
    for (const r of withParams) {
      const path = r.path.replace(/[:*]([A-Za-z_]\w*)/g, 'zz-names-nothing');
      statuses.add(listed(r, (await app().http.get(path)).status, `GET ${path}`));
    }
    expect([...statuses]).to.include(404);
  });

  it('a write without the configured token is a listed 401', async () => {
    const writes = app().routes.filter((r) => r.write);
    expect(writes.length).to.be.at.least(5);
    for (const r of writes) {
      const res = r.method === 'POST' ? await app().http.post(r.path).send({}) : await app().http.get(r.path);
      expect(listed(r, res.status, 'no token')).to.equal(401);
    }
  });
});

describe('/openapi.json: a kernel past its deadline or over capacity', function () {
  // a 1 ms budget no kernel call meets: admission refuses it (503) or the deadline ends it (504)
  const app = withTestApp(() => ({ pool: { taskDeadlineMs: 1 } }));

  it('answers 503 or 504, and the operation lists the status', async () => {
    const doc = (await app().http.get('/openapi.json').expect(200)).body as Doc;
    const kernels = app().routes.filter((r) => r.kernel && r.path.includes('/mla/'));
    expect(kernels.length).to.be.at.least(1);
    for (const r of kernels) {
      const res = await app().http.get(r.path);
      expect(res.status, r.path).to.be.oneOf([503, 504]);
      expect(Object.keys(doc.paths[specPath(r.path)]!.get!.responses), r.path).to.include(String(res.status));
    }
  });
});
