/**
 * Write quotas count what a write costs (ledger nodes), per token and, for anonymous writes, per
 * client address (behind a trusted proxy, the forwarded one); an anonymous viewer cannot start the
 * simulated flight when write tokens are set; `Authorization` is read as RFC 9110/6750 allow; a
 * write the guard refuses is counted under its route in the request metrics.
 */
import { expect } from 'chai';
import { request } from 'node:http';
import { loadConfig } from '../../src/config/load.js';
import { addressKey, ClientAddresses } from '../../src/http/client-address.js';
import { bearerToken, WriteRateLimiter } from '../../src/http/write-guard.js';
import { buildTestApp, parsePrometheus, withTestApp, type TestApp } from '../helpers/app.js';
import { openSse } from '../helpers/sse.js';

const VERDICT = '/api/svc/v1/verdict';
const EDGE = '/api/svc/v1/edge/3d';
const frame = (id: string, lat = 1) => ({ track_id: id, lat, lon: 2 });
const batch = (n: number, tag: string) => ({ frames: Array.from({ length: n }, (_, i) => frame(`${tag}${i}`, 1 + i * 1e-4)) });

interface Answer {
  status: number;
  retryAfter: string | undefined;
}

/** A JSON POST from a chosen local address (the service sees it as the peer). */
function postFrom(t: TestApp, localAddress: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const url = new URL(path, t.baseUrl);
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', localAddress, agent: false, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'] }));
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

/** Resolves once `cond` holds, checking on every turn of the event loop (rejects after `ms`). */
async function until(what: string, cond: () => boolean, ms = 60_000): Promise<void> {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

describe('hostile clients: write quotas count what they cost', function () {

  describe('the bucket', () => {
    it('a write costing more than is left is refused whole, with the wait for its deficit; nothing is taken', () => {
      let now = 0;
      const limiter = new WriteRateLimiter(10, 100, () => now);
      expect(limiter.take('a', 64)).to.equal(0);
      // 36 left: a 64-node batch lacks 28 nodes, 2.8 s at 10/s
      expect(limiter.take('a', 64)).to.be.closeTo(2.8, 1e-9);
      expect(limiter.take('a', 36)).to.equal(0);
      expect(limiter.take('a', 1)).to.be.closeTo(0.1, 1e-9);
      now = 2800;
      expect(limiter.take('b', 64)).to.equal(0);
      expect(limiter.take('a', 28)).to.equal(0);
    });

    it('a write costing more than the whole burst passes from a full bucket and leaves a debt paid at the rate', () => {
      let now = 0;
      const limiter = new WriteRateLimiter(10, 16, () => now);
      expect(limiter.take('a', 64)).to.equal(0);
      // -48 after it: one more node needs 49 at 10/s
      expect(limiter.take('a', 1)).to.be.closeTo(4.9, 1e-9);
      now = 4900;
      expect(limiter.take('a', 1)).to.equal(0);
      expect(limiter.wait('a')).to.be.greaterThan(0);
    });
  });

  describe('anonymous writes, per client address', () => {
    const app = withTestApp({ guard: { addressWriteRatePerS: 0.1, addressWriteBurst: 10 } });

    it('a 64-frame-style batch costs its frames: a second batch over the budget is 429 with the deficit, a verdict still fits', async () => {
      const t = app();
      const before = t.provided.ledger.status.size();
      const first = await t.http.post(EDGE).send(batch(8, 'b'));
      expect(first.status).to.equal(200);
      expect(t.provided.ledger.status.size()).to.equal(before + 8);
      // 2 nodes left; 8 more lack 6, 60 s at 0.1/s
      const second = await t.http.post(EDGE).send(batch(8, 'c'));
      expect(second.status).to.equal(429);
      expect(Number(second.headers['retry-after'])).to.be.within(55, 60);
      expect(t.provided.ledger.status.size()).to.equal(before + 8);
      expect((await t.http.post(VERDICT).send(frame('v1'))).status).to.equal(200);
      expect((await t.http.post(VERDICT).send(frame('v2'))).status).to.equal(200);
      const over = await t.http.post(VERDICT).send(frame('v3'));
      expect(over.status).to.equal(429);
      expect(Number(over.headers['retry-after'])).to.be.within(1, 10);
      expect(t.provided.ledger.status.size()).to.equal(before + 10);
    });

    it('a client with no room left is refused before its batch is read', async () => {
      const t = app();
      const res = await t.http.post(EDGE).send(batch(1, 'd'));
      expect(res.status).to.equal(429);
    });

    it('other addresses have their own budget', async () => {
      const t = app();
      expect((await postFrom(t, '127.0.0.4', EDGE, batch(10, 'e'))).status).to.equal(200);
      expect((await postFrom(t, '127.0.0.5', VERDICT, frame('f1'))).status).to.equal(200);
      expect((await postFrom(t, '127.0.0.4', VERDICT, frame('f2'))).status).to.equal(429);
    });
  });

  describe('write tokens: a bucket per token, no per-address limit', () => {
    const app = withTestApp({ guard: { writeTokens: 'alpha-token,beta-token', writeRatePerS: 0.01, writeBurst: 3, addressWriteRatePerS: 0.01, addressWriteBurst: 1 } });

    it('each token has its own budget, counted in nodes; the shared address is not limited', async () => {
      const t = app();
      const as = (token: string) => ({ authorization: `Bearer ${token}` });
      expect((await t.http.post(EDGE).set(as('alpha-token')).send(batch(2, 'g'))).status).to.equal(200);
      expect((await t.http.post(VERDICT).set(as('alpha-token')).send(frame('g9'))).status).to.equal(200);
      const spent = await t.http.post(VERDICT).set(as('alpha-token')).send(frame('g10'));
      expect(spent.status).to.equal(429);
      // beta, from the same address (whose own limit would allow one write), still has all three
      for (const id of ['h1', 'h2', 'h3']) expect((await t.http.post(VERDICT).set(as('beta-token')).send(frame(id))).status).to.equal(200);
      expect((await t.http.post(VERDICT).set(as('beta-token')).send(frame('h4'))).status).to.equal(429);
      expect((await t.http.post(VERDICT).send(frame('h5'))).status).to.equal(401);
    });
  });

  describe('behind a trusted proxy', () => {
    const app = withTestApp({ guard: { addressWriteRatePerS: 0.01, addressWriteBurst: 2, trustProxy: ['127.0.0.1'] } });

    it('X-Forwarded-For from an untrusted peer is ignored: every spoofed address shares the peer\'s budget', async () => {
      const t = app();
      const codes: number[] = [];
      for (const spoof of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) codes.push((await postFrom(t, '127.0.0.2', VERDICT, frame(`s-${spoof}`), { 'x-forwarded-for': spoof })).status);
      expect(codes).to.deep.equal([200, 200, 429]);
    });

    it('from a trusted peer the right-most untrusted X-Forwarded-For address is the client', async () => {
      const t = app();
      const via = (xff: string, id: string) => postFrom(t, '127.0.0.1', VERDICT, frame(id), { 'x-forwarded-for': xff });
      expect((await via('10.9.9.1, 10.0.0.1', 'p1')).status).to.equal(200);
      expect((await via('10.9.9.2, 10.0.0.1', 'p2')).status).to.equal(200);
      // the left entries are the client's own words: changing them buys nothing
      expect((await via('10.9.9.3, 10.0.0.1', 'p3')).status).to.equal(429);
      expect((await via('10.0.0.2', 'p4')).status).to.equal(200);
      // the proxy's own budget was never touched
      expect((await postFrom(t, '127.0.0.1', VERDICT, frame('p5'))).status).to.equal(200);
    });

    it('the forwarded chain is read past trusted hops, ports and brackets; a chain it cannot read counts against the proxy', () => {
      const c = new ClientAddresses(['127.0.0.1', '10.8.0.0/16', '::1']);
      expect(c.of('127.0.0.1', '10.0.0.7, 10.8.3.4')).to.equal('10.0.0.7');
      expect(c.of('::ffff:127.0.0.1', '1.2.3.4:5678')).to.equal('1.2.3.4');
      expect(c.of('::1', '[2001:db8:1:2:3::9]:443')).to.equal('2001:db8:1:2::/64');
      expect(c.of('127.0.0.1', '10.0.0.7, garbage')).to.equal('127.0.0.1');
      expect(c.of('127.0.0.1', '10.8.0.1, 10.8.0.2')).to.equal('10.8.0.1');
      expect(c.of('127.0.0.2', '10.0.0.7')).to.equal('127.0.0.2');
      expect(new ClientAddresses([]).of('127.0.0.1', '10.0.0.7')).to.equal('127.0.0.1');
    });

    it('IPv6 clients count by their /64, IPv4-mapped peers as IPv4', () => {
      expect(addressKey('2001:db8:0:1::5')).to.equal(addressKey('2001:0db8:0000:0001:ffff:1:2:3'));
      expect(addressKey('2001:db8:0:1::5')).to.not.equal(addressKey('2001:db8:0:2::5'));
      expect(addressKey('::ffff:127.0.0.2')).to.equal('127.0.0.2');
      expect(addressKey('::1')).to.equal('0:0:0:0::/64');
    });

    it('SVC_TRUST_PROXY takes a comma-separated list, and refuses what is no address', () => {
      const cfg = loadConfig({ env: { NODE_ENV: 'test', SVC_TRUST_PROXY: '10.0.0.5, 10.1.0.0/16,::1' } });
      expect(cfg.guard.trustProxy).to.deep.equal(['10.0.0.5', '10.1.0.0/16', '::1']);
      expect(loadConfig({ env: { NODE_ENV: 'test' } }).guard.trustProxy).to.deep.equal([]);
      expect(() => loadConfig({ env: { NODE_ENV: 'test', SVC_TRUST_PROXY: 'proxy.local' } })).to.throw(/guard\.trustProxy \(env SVC_TRUST_PROXY\)/);
    });
  });

  describe('the defaults let one client reach the service\'s capacity', () => {
    const prod = loadConfig({ env: { NODE_ENV: 'production' } });
    const quotas = {
      writeRatePerS: prod.guard.writeRatePerS,
      writeBurst: prod.guard.writeBurst,
      addressWriteRatePerS: prod.guard.addressWriteRatePerS,
      addressWriteBurst: prod.guard.addressWriteBurst,
    };
    const app = withTestApp({ guard: quotas });

    it('no default quota binds below ~12,000 verdicts/s (the measured capacity): each is off or above it', () => {
      for (const rate of [quotas.writeRatePerS, quotas.addressWriteRatePerS]) expect(rate === 0 || rate >= 12_000, String(rate)).to.equal(true);
    });

    it('one address writing as fast as it can, verdicts and full batches, gets no 429', async function () {
      // 488 writes: seconds on a quiet machine, minutes on a loaded one
      this.timeout(300_000);
      const t = app();
      const codes = new Map<number, number>();
      const note = (s: number) => codes.set(s, (codes.get(s) ?? 0) + 1);
      await Promise.all(
        Array.from({ length: 8 }, async (_, lane) => {
          for (let i = 0; i < 60; i++) note((await t.http.post(VERDICT).send(frame(`cap-${lane}-${i}`))).status);
          note((await t.http.post(EDGE).send(batch(64, `capb-${lane}-`))).status);
        }),
      );
      expect(Object.fromEntries(codes)).to.deep.equal({ 200: 8 * 61 });
    });
  });

  describe('an anonymous viewer does not start the simulated flight when write tokens are set', () => {
    const app = withTestApp({ guard: { writeTokens: 'alpha-token' }, stream: { tickMs: 20, heartbeatMs: 60_000 } });

    it('it may watch; a viewer bearing a token starts the flight, and it stops when that viewer leaves', async () => {
      const t = app();
      const flight = t.provided.stream.flight;
      const stream = `${t.baseUrl}/api/svc/v1/stream/verdicts`;
      const anon = await openSse(stream);
      const wrong = await openSse(stream, { authorization: 'Bearer not-a-token' });
      try {
        expect(anon.res.statusCode).to.equal(200);
        expect(wrong.res.statusCode).to.equal(200);
        // the flight would have started while these viewers' headers were written
        expect(flight.running).to.equal(false);
        const owner = await openSse(stream, { authorization: 'bearer alpha-token' });
        expect(flight.running).to.equal(true);
        // the anonymous viewer sees the flight's verdicts
        await anon.waitFor(1);
        owner.close();
        await until('the flight to stop', () => !flight.running);
      } finally {
        anon.close();
        wrong.close();
      }
    });

    it('without write tokens any viewer starts it, as before', async () => {
      const t = await buildTestApp({ stream: { tickMs: 20, heartbeatMs: 60_000 } });
      try {
        const viewer = await openSse(`${t.baseUrl}/api/svc/v1/stream/verdicts`);
        expect(t.provided.stream.flight.running).to.equal(true);
        await viewer.waitFor(1);
        viewer.close();
        await until('the flight to stop', () => !t.provided.stream.flight.running);
      } finally {
        await t.close();
      }
    });
  });

  describe('Authorization: the scheme in any case, spaces or tabs before the token', () => {
    const app = withTestApp({ guard: { writeTokens: 'alpha-token' } });

    it('parses as RFC 9110 and RFC 6750 allow', () => {
      expect(bearerToken('Bearer alpha-token')).to.equal('alpha-token');
      expect(bearerToken('bearer alpha-token')).to.equal('alpha-token');
      expect(bearerToken('BEARER \t  alpha-token')).to.equal('alpha-token');
      expect(bearerToken('Bearer')).to.equal(null);
      expect(bearerToken('Bearer alpha token')).to.equal(null);
      expect(bearerToken('Basic alpha-token')).to.equal(null);
      expect(bearerToken('Bearer=alpha-token')).to.equal(null);
      expect(bearerToken(undefined)).to.equal(null);
    });

    it('a lower-case scheme and extra whitespace are accepted by the write routes', async () => {
      const t = app();
      for (const header of ['bearer alpha-token', 'BEARER   alpha-token', 'Bearer \talpha-token']) {
        expect((await t.http.post(VERDICT).set('authorization', header).send(frame('auth'))).status, header).to.equal(200);
      }
      expect((await t.http.post(VERDICT).set('authorization', 'Bearer alpha-token2').send(frame('auth'))).status).to.equal(401);
    });
  });

  describe('request metrics', () => {
    const app = withTestApp({ guard: { addressWriteRatePerS: 0.01, addressWriteBurst: 1 } });

    it('a rate-limited write is counted under its route, not as unmatched', async () => {
      const t = app();
      expect((await t.http.post(VERDICT).send(frame('m1'))).status).to.equal(200);
      expect((await t.http.post(VERDICT).send(frame('m2'))).status).to.equal(429);
      expect((await t.http.post(EDGE).send(batch(1, 'm'))).status).to.equal(429);
      const series = parsePrometheus((await t.http.get('/metrics')).text).get('http_requests_total') ?? [];
      const limited = series.filter((s) => s.labels.status === '429');
      expect(limited.map((s) => [s.labels.method, s.labels.route, s.value]).sort()).to.deep.equal([
        ['POST', EDGE, 1],
        ['POST', VERDICT, 1],
      ]);
    });
  });
});
