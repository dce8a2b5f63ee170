import { request } from 'node:http';
import { expect } from 'chai';
import fc from 'fast-check';
import { killService, mainThreadCpuMs, settled, startService, type ServiceProcess } from '../helpers/service-process.js';
import { countQueryParams, MAX_QUERY_PARAMS, parseQuery } from '../../src/http/query.js';
import { cpuMsOf } from '../helpers/cpu-time.js';


function get(base: string, path: string): Promise<{ status: number; body: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(base + path, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body, ms: performance.now() - started }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('hostile: query strings are parsed in linear time with a bounded parameter count', function () {
  // the real entry point under tsx: seconds to start on a quiet machine, a minute or more on a loaded one
  this.timeout(300_000);
  // the real entry point: its head limit lets a 64 KB query through, as in production
  let svc: ServiceProcess;
  let base: string;
  before(async () => {
    svc = await startService();
    base = svc.base;
    await settled(svc);
  });
  after(async () => {
    if (svc) await killService(svc);
  });

  const flood = `?${'a&'.repeat(32_000)}`; // 64 KB, inside the head limit

  it('a 64 KB query of 32,000 repeated keys is refused with a JSON 422 for < 20 ms of main-thread CPU', async () => {
    // the least of three tries: a busy machine can only add to one try, a quadratic parse costs seconds every time
    let best = Infinity;
    for (let i = 0; i < 3; i++) {
      const before = mainThreadCpuMs(svc);
      const res = await get(base, `/api/svc/v1/health${flood}`);
      best = Math.min(best, mainThreadCpuMs(svc) - before);
      expect(res.status).to.equal(422);
      expect(JSON.parse(res.body)).to.deep.equal({
        detail: [{ type: 'too_many_parameters', loc: ['query'], msg: `Query should have at most ${MAX_QUERY_PARAMS} parameters, not 32000`, input: null, ctx: { max_parameters: MAX_QUERY_PARAMS, actual: 32000 } }],
      });
    }
    expect(best).to.be.below(20);
  });

  it('a concurrent /health answers within 100 ms of main-thread work while such queries arrive', async () => {
    // what /health can wait for is the main thread's work meanwhile: its CPU time, which a busy
    // machine does not inflate as it does the wall time
    let best = Infinity;
    for (let i = 0; i < 3; i++) {
      const before = mainThreadCpuMs(svc);
      const floods = [get(base, `/api/svc/v1/doctrine${flood}`), get(base, `/api/svc/v1/ledger/head${flood}`)];
      const health = await get(base, '/api/svc/v1/health');
      await Promise.all(floods);
      expect(health.status).to.be.oneOf([200, 503]);
      best = Math.min(best, mainThreadCpuMs(svc) - before);
    }
    expect(best, 'ms of main-thread CPU for two floods and a /health').to.be.below(100);
  });

  it('at the bound the query is parsed; one over is refused', async () => {
    const at = Array.from({ length: MAX_QUERY_PARAMS }, (_, i) => `k${i}=1`).join('&');
    const res = await get(base, `/api/svc/v1/fleet/vessels?${at}`);
    // unknown keys are 422 extra_forbidden: the parse went through to validation
    expect(res.status).to.equal(422);
    expect((JSON.parse(res.body) as { detail: { type: string }[] }).detail[0]!.type).to.equal('extra_forbidden');
    const over = await get(base, `/api/svc/v1/fleet/vessels?${at}&one=more`);
    expect((JSON.parse(over.body) as { detail: { type: string }[] }).detail[0]!.type).to.equal('too_many_parameters');
  });

  // a request line is ASCII (Node refuses raw non-ASCII in a URL with 400): queries of ASCII, with
  // every byte escape and malformed ones
  it('decodes every name and value as URLSearchParams does (generated queries)', () => {
    const piece = fc.stringMatching(/^[a-zA-Z0-9%+=&._~!$'()*,;:@/?-]{0,12}$/);
    const byteEscape = fc.integer({ min: 0, max: 255 }).map((b) => `%${b.toString(16).padStart(2, '0')}`);
    const qs = fc.array(fc.oneof(piece, byteEscape, fc.constantFrom('%', '%zz', '%E2%82', '%ED%A0%80', '+', '=', '&')), { maxLength: 20 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(qs, (q) => {
        // no prototype: a generated name such as `valueOf` must not find Object's method
        const expected: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
        for (const [k, v] of new URLSearchParams(q)) {
          const held = expected[k];
          expected[k] = held === undefined ? v : typeof held === 'string' ? [held, v] : [...held, v];
        }
        expect({ ...parseQuery(q, Infinity) }).to.deep.equal({ ...expected });
      }),
      { numRuns: 2000 },
    );
  });

  it('parses like URLSearchParams: repeated keys in order, empty pieces skipped, no prototype', () => {
    const q = parseQuery('a=1&&b=x%20y&a=2&a=3&__proto__=p&c');
    expect({ ...q }).to.deep.equal({ a: ['1', '2', '3'], b: 'x y', ['__proto__']: 'p', c: '' });
    expect(Object.getPrototypeOf(q)).to.equal(null);
    expect({ ...parseQuery('valueOf=1&constructor&toString=a&toString=b') }).to.deep.equal({ valueOf: '1', constructor: '', toString: ['a', 'b'] });
    expect(countQueryParams('&&a&&b&')).to.equal(2);
    expect(countQueryParams('')).to.equal(0);
  });

  it('the parse is linear: 4x the pieces cost at most ~4x (well under the 16x of a quadratic parse)', () => {
    const cost = (n: number): number => {
      const qs = 'a&'.repeat(n);
      let best = Infinity;
      // CPU time of 80 parses (~100 ms at 20,000 pieces, well above the CPU clock's tick), least of
      // three: a busy machine can only add to a try, and adds little to CPU time
      for (let i = 0; i < 3; i++) {
        const { ms } = cpuMsOf(() => {
          for (let k = 0; k < 80; k++) parseQuery(qs, Infinity);
        });
        best = Math.min(best, ms);
      }
      return best;
    };
    cost(20_000);
    expect(cost(80_000) / cost(20_000)).to.be.below(8);
  });
});
