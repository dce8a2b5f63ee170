import { expect } from 'chai';
import { Writable } from 'node:stream';
import pino from 'pino';
import supertest from 'supertest';
import { buildApp } from '../../src/app.js';
import { parseTokens, tokenMatches, WriteRateLimiter } from '../../src/http/write-guard.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { LedgerWriter } from '../../src/ledger/writer.js';
import { MemoryStore } from '../../src/ledger/store/memory-store.js';
import type { Signer } from '../../src/ledger/signer.js';
import { evaluate } from '../../src/verdicts/evaluate.js';
import { VerdictService } from '../../src/verdicts/verdict-service.js';
import { buildTestApp, testConfig } from '../helpers/app.js';
import { until } from '../helpers/until.js';

const frame = (id: string, lat = 1) => ({ track_id: id, lat, lon: 2 });

describe('write guard, shedding and health', function () {

  describe('write tokens', () => {
    let t: Awaited<ReturnType<typeof buildTestApp>>;
    before(async () => {
      t = await buildTestApp({ guard: { writeTokens: 'alpha-token, beta-token', writeRatePerS: 0 } });
    });
    after(() => t.close());

    it('write routes need a configured bearer token (401 + WWW-Authenticate otherwise); reads and verify do not', async () => {
      const none = await t.http.post('/api/svc/v1/verdict').send(frame('w1'));
      expect(none.status).to.equal(401);
      expect(none.headers['www-authenticate']).to.match(/^Bearer/);
      expect((await t.http.post('/api/svc/v1/verdict').set('authorization', 'Bearer alpha').send(frame('w1'))).status).to.equal(401);
      expect((await t.http.post('/api/svc/v1/cot/ingest').set('content-type', 'application/xml').send('<event/>')).status).to.equal(401);
      expect((await t.http.post('/api/svc/v1/edge/3d').send({ frames: [frame('w1')] })).status).to.equal(401);
      expect((await t.http.get('/api/svc/v1/readiness/refresh')).status).to.equal(401);
      const ok = await t.http.post('/api/svc/v1/verdict').set('authorization', 'Bearer beta-token').send(frame('w1'));
      expect(ok.status).to.equal(200);
      expect((await t.http.get('/api/svc/v1/receipt/export')).status).to.equal(200);
      expect((await t.http.post('/khipu/verify').send({})).status).to.equal(422);
    });

    it('tokens are kept as SHA-256 digests and compared whole', () => {
      const digests = parseTokens(' a , bb ,');
      expect(digests).to.have.length(2);
      for (const d of digests) expect(d.length).to.equal(32);
      expect(tokenMatches('bb', digests)).to.equal(true);
      expect(tokenMatches('b', digests)).to.equal(false);
      expect(tokenMatches('bb ', digests)).to.equal(false);
    });
  });

  describe('per-client write rate limit', () => {
    it('a token bucket per client: burst, then 429 + Retry-After; other clients unaffected', () => {
      let now = 0;
      const limiter = new WriteRateLimiter(2, 3, () => now);
      expect([1, 2, 3, 4].map(() => limiter.take('a'))).to.deep.equal([0, 0, 0, 0.5]);
      expect(limiter.take('b')).to.equal(0);
      now = 500;
      expect(limiter.take('a')).to.equal(0);
      expect(limiter.take('a')).to.be.greaterThan(0);
    });

    it('POST /verdict answers 429 with Retry-After beyond the per-address limit', async () => {
      expect(testConfig({ env: 'production' }).guard).to.not.equal(undefined);
      const t = await buildTestApp({ guard: { addressWriteRatePerS: 1, addressWriteBurst: 3 } });
      try {
        const codes: number[] = [];
        let retry: string | undefined;
        for (let i = 0; i < 6; i++) {
          const r = await t.http.post('/api/svc/v1/verdict').send(frame(`r${i}`));
          codes.push(r.status);
          if (r.status === 429) retry = r.headers['retry-after'];
        }
        expect(codes.slice(0, 3)).to.deep.equal([200, 200, 200]);
        expect(codes.filter((c) => c === 429).length).to.be.at.least(2);
        expect(Number(retry)).to.be.at.least(1);
        expect(t.provided.ledger.status.size()).to.be.at.most(4);
      } finally {
        await t.close();
      }
    });
  });

  it('the write quotas are off by default and set by the operator (test/hostile/quotas.test.ts)', async () => {
    const { loadConfig } = await import('../../src/config/load.js');
    const prod = loadConfig({ env: { NODE_ENV: 'production', SVC_WRITE_RATE_PER_S: '50', SVC_ADDRESS_WRITE_RATE_PER_S: '20' } });
    expect(prod.guard.writeRatePerS).to.equal(50);
    expect(prod.guard.addressWriteRatePerS).to.equal(20);
    expect(prod.guard.writeBurst).to.be.greaterThan(0);
    expect(prod.guard.addressWriteBurst).to.be.greaterThan(0);
  });

  it('shed requests are counted and logged as one summary, not one error line each', async () => {
    const lines: { msg: string; level: number; total?: number }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
        cb();
      },
    });
    const log = pino({ level: 'warn' }, sink);
    const built = await buildApp(testConfig({ pool: { threads: 1, maxQueue: 1 }, guard: { shedLogIntervalMs: 300 } }), { log });
    try {
      const http = supertest(built.app.callback());
      await built.services.pool.ready();
      const started = performance.now();
      const res = await Promise.all(Array.from({ length: 30 }, () => http.get('/api/svc/v1/mla/latent-compress?seq_len=256&n_heads=16&d_head=64&d_latent=256')));
      const shed = res.filter((r) => r.status === 503).length;
      expect(shed).to.be.greaterThan(10);
      const elapsedMs = performance.now() - started;
      // a loaded machine may also answer some at their deadline (504): shed too, and summarised
      const late = res.filter((r) => r.status === 504).length;
      const summarised = (): number => lines.filter((l) => l.msg === 'requests shed').reduce((n, l) => n + (l.total ?? 0), 0);
      // the last interval's summary is written when its 300 ms are up
      await until('the summaries to cover every shed answer', () => summarised() >= shed + late).catch(() => null);
      expect(lines.filter((l) => l.msg === 'request failed')).to.have.length(0);
      expect(lines.filter((l) => l.msg === 'request')).to.have.length(0);
      const summaries = lines.filter((l) => l.msg === 'requests shed');
      // at most one line per 300 ms interval, however many requests were shed
      expect(summaries.length).to.be.within(1, Math.ceil(elapsedMs / 300) + 1);
      expect(summarised()).to.equal(shed + late);
      const metrics = (await http.get('/metrics')).text;
      expect(metrics).to.match(new RegExp(`^svc_requests_shed_total\\{code="QUEUE_FULL"\\} ${shed}$`, 'm'));
    } finally {
      await built.close();
    }
  });

  it('a verdict that fails at signing does not update its track history', async () => {
    let fail = true;
    const signer = {
      signReceipt: async () => (fail ? Promise.reject(new Error('signing failed')) : { payload: Buffer.from('{}'), paeSha256: Buffer.alloc(32, 2), sig: Buffer.alloc(72, 1) }),
    } as unknown as Signer;
    const ledger = new Ledger(10);
    const svc = new VerdictService(ledger, new LedgerWriter(ledger, new MemoryStore(), { groupMax: 64, waitMs: 0, queueMax: 64, retryAfterS: 1 }), signer, 'k', [], 1);
    const nowMs = Date.parse('2026-01-01T00:00:00Z');
    const first = { track_id: 'trk', lat: 10, lon: 10, speed_mps: 10, heading_deg: 0 };
    let threw = false;
    try {
      await svc.decide(first, { nowMs });
    } catch {
      threw = true;
    }
    expect(threw).to.equal(true);
    fail = false;
    const second = { track_id: 'trk', lat: 10.0001, lon: 10, speed_mps: 10, heading_deg: 0 };
    const v = await svc.decide(second, { nowMs: nowMs + 1000 });
    // scored as the track's first fix: the refused one was never recorded
    expect(v.evaluation.axes).to.deep.equal(evaluate(second, [], undefined, nowMs + 1000).axes);
  });

  it('/health reports a long event-loop stall even when the p99 hides it', async () => {
    const t = await buildTestApp();
    try {
      await new Promise((r) => setTimeout(r, 1500)); // a window of normal samples
      const end = performance.now() + 1200;
      while (performance.now() < end) {
        // one synchronous 1.2 s block
      }
      // the watchdog notices on its next tick
      await until('the stall on /health', async () => (await t.http.get('/api/svc/v1/health')).body.checks['event-loop:delay'].observedValue >= 1000).catch(() => null);
      const check = (await t.http.get('/api/svc/v1/health')).body.checks['event-loop:delay'];
      expect(check.status).to.equal('warn');
      expect(check.observedValue).to.be.at.least(1000);
    } finally {
      await t.close();
    }
  });

  it('/metrics passes the promtool lint rules it broke (no *_total gauges, no quantile label outside summaries, counters end in _total)', async () => {
    const t = await buildTestApp();
    try {
      await t.http.get('/api/svc/v1/ssm/scan?seq_len=8');
      const text = (await t.http.get('/metrics')).text;
      const types = new Map<string, string>();
      for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) types.set(m[1]!, m[2]!);
      const problems: string[] = [];
      for (const [name, type] of types) {
        if (type !== 'counter' && name.endsWith('_total')) problems.push(`${name}: non-counter metrics should not have "_total" suffix`);
        if (type === 'counter' && !name.endsWith('_total')) problems.push(`${name}: counter metrics should have "_total" suffix`);
      }
      for (const m of text.matchAll(/^([a-zA-Z_:][a-zA-Z0-9_:]*)\{[^}]*\bquantile="/gm)) {
        const base = m[1]!.replace(/_(sum|count)$/, '');
        if (types.get(base) !== 'summary' && types.get(m[1]!) !== 'summary') problems.push(`${m[1]}: non-summary metric with a "quantile" label`);
      }
      expect(problems).to.deep.equal([]);
      expect(types.get('svc_pool_completed_tasks_total')).to.equal('counter');
    } finally {
      await t.close();
    }
  });
});
