import { expect } from 'chai';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { threadCpuMs } from '../helpers/cpu-time.js';

// Client mistakes and hostile bodies (and slow ones) are bounded 4xx, never 5xx.
describe('hostile request bodies', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ guard: { bodyTimeoutMs: 300 } });
  });
  after(() => t.close());

  const json = (path: string, body: string, headers: Record<string, string> = {}) =>
    t.http.post(path).set({ 'content-type': 'application/json', ...headers }).send(body);

  it('40,000 empty frames answer a small 422 (the 64-frame limit first), in well under a second of CPU', async () => {
    // the app runs on this thread: its CPU time is the cost, whatever else the machine does
    const started = threadCpuMs();
    const res = await json('/api/svc/v1/edge/3d', JSON.stringify({ frames: Array.from({ length: 40_000 }, () => ({})) }));
    const ms = threadCpuMs() - started;
    expect(res.status).to.equal(422);
    expect(res.text.length).to.be.below(4096);
    expect(res.body.detail).to.have.length(1);
    expect(res.body.detail[0]).to.include({ type: 'too_long' });
    expect(res.body.detail[0].ctx).to.deep.equal({ field_type: 'List', max_length: 64, actual_length: 40_000 });
    expect(ms).to.be.below(1000);
    // 87,000 frames overflowed joi's stack (500) before
    const more = await json('/api/svc/v1/edge/3d', `{"frames":[${Array(87_000).fill('{}').join(',')}]}`);
    expect(more.status).to.equal(422);
  });

  it('many issues within the limit are capped, each echoed input bounded', async () => {
    const long = 'x'.repeat(600);
    const frames = Array.from({ length: 64 }, () => ({ track_id: long, lat: long, lon: long, alt_m: long }));
    const res = await json('/api/svc/v1/edge/3d', JSON.stringify({ frames }));
    expect(res.status).to.equal(422);
    const detail = res.body.detail as { type: string; input: unknown; ctx?: { total?: number } }[];
    expect(detail.length).to.be.at.most(33);
    expect(detail.at(-1)).to.include({ type: 'too_many_errors' });
    expect(detail.at(-1)!.ctx!.total).to.equal(256);
    for (const d of detail) expect(JSON.stringify(d.input ?? null).length).to.be.below(1024);
    expect(res.text.length).to.be.below(32 * 1024);
  });

  it('JSON nested 5,000 deep is a JSON 422, not a text 500', async () => {
    const deep = `{"track_id":"a","lat":1,"lon":1,"x":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    const res = await json('/api/svc/v1/verdict', deep);
    expect(res.status).to.equal(422);
    expect(res.type).to.equal('application/json');
    expect(res.body.detail[0]).to.include({ type: 'json_invalid' });
    const metrics = await t.http.get('/metrics');
    expect(metrics.text).to.not.match(/http_requests_total\{[^}]*status="500"/);
  });

  it('corrupt gzip, deflate and br bodies are 400; an unknown encoding is 415', async () => {
    for (const enc of ['gzip', 'deflate', 'br']) {
      const res = await json('/api/svc/v1/verdict', 'definitely not compressed', { 'content-encoding': enc });
      expect(res.status, enc).to.equal(400);
      expect(res.body.detail).to.match(/could not be decoded/);
    }
    // (supertest re-serialises a Buffer sent as JSON, so fetch sends the real gzip bytes)
    const good = await fetch(`${t.baseUrl}/api/svc/v1/verdict`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify({ track_id: 'gz-1', lat: 1, lon: 2 })),
    });
    expect(good.status).to.equal(200);
    const odd = await json('/api/svc/v1/verdict', '{}', { 'content-encoding': 'zstd-ish' });
    expect(odd.status).to.equal(415);
  });

  it('numeric strings in JSON bodies are wrong types (422), as README says', async () => {
    const res = await t.http.post('/api/svc/v1/verdict').send({ track_id: 'a', lat: ' 36.1 ', lon: '2', id_authenticated: 'yes' });
    expect(res.status).to.equal(422);
    expect(res.body.detail.map((d: { type: string; loc: unknown[] }) => `${d.type}@${d.loc.join('.')}`)).to.deep.equal([
      'float_type@body.lat',
      'float_type@body.lon',
      'bool_type@body.id_authenticated',
    ]);
  });

  it('?__proto__=1 is 422 extra_forbidden like every other unknown key (query and body)', async () => {
    const q = await t.http.get('/api/svc/v1/ssm/scan?__proto__=1');
    expect(q.status).to.equal(422);
    expect(q.body.detail[0]).to.deep.include({ type: 'extra_forbidden', loc: ['query', '__proto__'] });
    const b = await json('/api/svc/v1/verdict', '{"track_id":"a","lat":1,"lon":1,"__proto__":{"x":1}}');
    expect(b.status).to.equal(422);
    expect(b.body.detail[0]).to.deep.include({ type: 'extra_forbidden', loc: ['body', '__proto__'] });
  });

  it('invalid UTF-8 in CoT XML is refused (400), not stored as U+FFFD', async () => {
    const xml = Buffer.concat([
      Buffer.from('<event version="2.0" uid="bad-utf8" type="a-u-A" how="m-g" time="2026-01-01T00:00:00Z" start="2026-01-01T00:00:00Z" stale="2026-01-01T00:05:00Z"><point lat="1" lon="1" hae="0" ce="1" le="1"/><detail><remarks>'),
      Buffer.from([0xc3, 0x28, 0xff]),
      Buffer.from('</remarks></detail></event>'),
    ]);
    const res = await t.http.post('/api/svc/v1/cot/ingest').set('content-type', 'application/xml').send(xml);
    expect(res.status).to.equal(400);
    expect(res.body.detail).to.match(/UTF-8/);
    const one = await t.http.get('/api/svc/v1/cot/export/bad-utf8');
    expect(one.status).to.equal(404);
  });

  it('a body trickling slower than the body timeout gets 408 and the connection is closed', async () => {
    const port = new URL(t.baseUrl).port;
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1');
      let data = '';
      socket.on('data', (d) => (data += d.toString()));
      socket.on('close', () => resolve(data));
      socket.on('error', reject);
      socket.write('POST /api/svc/v1/verdict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"tr');
      const drip = setInterval(() => (socket.writable ? socket.write(' ') : clearInterval(drip)), 50);
      socket.on('close', () => clearInterval(drip));
      setTimeout(() => socket.destroy(), 60_000).unref();
    });
    expect(answer).to.match(/^HTTP\/1\.1 408/);
    expect(answer).to.match(/connection: close/i);
    // the configured 300 ms timeout answered, not the 100 bytes arriving (they take 5 s) nor a default
    expect(answer).to.include('Request body not received within 300 ms');
  });
});
