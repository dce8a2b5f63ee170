import { expect } from 'chai';
import { routeSamples } from '../../bench/route-samples.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { loopBlockDuring } from '../helpers/loop-block.js';

/** A main-thread task over ~50 ms (the long-task threshold) holds up every other request: a defect. */
const BLOCK_MS = 50;

async function blockOf(t: TestApp, target: string): Promise<{ status: number; blockMs: number; gcMs: number }> {
  let status = 0;
  const r = await loopBlockDuring(async () => {
    // a hang, not a speed: a loaded machine answers well within it
    const res = await fetch(t.baseUrl + target, { signal: AbortSignal.timeout(60_000) });
    status = res.status;
    await res.arrayBuffer();
  });
  return { status, ...r };
}

describe('no GET route blocks the main thread for over 50 ms, first call included', function () {
  this.timeout(120_000);

  // the views that walk the route table described every route's schema (joi's describe()
  // validates each description) and built their model on the first call: 80–230 ms in one task
  for (const target of ['/api/svc/v1/attack-surface/graph', '/api/svc/v1/posture/drift']) {
    it(`the first ${target} on a fresh app`, async () => {
      const t = await buildTestApp({}, { checkResponses: false }); // the main thread alone, without the test-only response check
      try {
        const first = await blockOf(t, target);
        expect(first.status).to.equal(200);
        expect(first.blockMs, `GC up to ${first.gcMs.toFixed(1)} ms`).to.be.below(BLOCK_MS);
      } finally {
        await t.close();
      }
    });
  }

  it('the first and a repeated call of every other GET route (kernels run in the pool and are left out)', async () => {
    const t = await buildTestApp({}, { checkResponses: false }); // the main thread alone, without the test-only response check
    try {
      const targets = (await routeSamples(t.routes, t.baseUrl)).filter((p) => !t.routes.some((r) => r.tag === 'kernels' && p.startsWith(r.path) && (p.length === r.path.length || p[r.path.length] === '?')));
      expect(targets.length).to.be.above(40);
      const over: string[] = [];
      for (const target of targets) {
        for (const call of ['first', 'again']) {
          const r = await blockOf(t, target);
          expect(r.status, target).to.be.below(500);
          if (r.blockMs >= BLOCK_MS) over.push(`${call} ${target}: ${r.blockMs.toFixed(1)} ms`);
        }
      }
      expect(over).to.deep.equal([]);
    } finally {
      await t.close();
    }
  });
});
