/**
 * pool.warmup (off in config/test.json, on by default): each kernel thread runs every kernel at its
 * defaults (pool.warmupPasses times; two here, to keep the test short) before it answers anything,
 * and the service is not ready (/health 503) until every thread has.
 */
import { expect } from 'chai';
import { KERNELS } from '../../workers/registry.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

describe('warm workers (pool.warmup)', function () {
  this.timeout(180_000);

  describe('on', () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp({ pool: { warmup: true, warmupPasses: 2 } });
    });
    after(() => t.close());

    it('/health is 503 "starting" until every thread has run every kernel, then passes; each thread reports all of them', async () => {
      const early = await t.http.get('/api/svc/v1/health');
      expect(early.status).to.equal(503);
      expect(early.body.checks['worker-pool:utilization']).to.deep.include({ status: 'fail' });
      expect(early.body.checks['worker-pool:utilization'].output).to.match(/^starting: .*running every kernel once/);
      expect(t.services.pool.started).to.equal(false);

      await t.services.pool.ready();
      expect(t.services.pool.started).to.equal(true);
      const warm = t.services.pool.warmup();
      expect(warm.enabled).to.equal(true);
      expect(warm.threads.map((w) => w.threadId).sort()).to.deep.equal(t.services.pool.threadIds().sort());
      for (const w of warm.threads) {
        expect(w.failed).to.deep.equal([]);
        expect(w.kernels).to.equal(KERNELS.length);
        expect(w.passes).to.equal(2);
        expect(w.ms).to.be.greaterThan(0);
      }
      await new Promise((r) => setTimeout(r, 60)); // past the /health cache window
      const ready = await t.http.get('/api/svc/v1/health');
      expect(ready.status).to.equal(200);
      expect(ready.body.checks['worker-pool:utilization']).to.deep.include({ status: 'pass' });
    });
  });

  describe('off (the test default)', () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp();
    });
    after(() => t.close());

    it('threads start without running any kernel', async () => {
      await t.services.pool.ready();
      const warm = t.services.pool.warmup();
      expect(warm.enabled).to.equal(false);
      expect(warm.threads).to.have.length(2);
      for (const w of warm.threads) expect(w).to.deep.include({ kernels: 0, passes: 0, failed: [] });
    });
  });
});
