/**
 * `stream.flight`: `off` leaves the stream and the ledger to real verdicts even with a viewer
 * connected; `always` flies with nobody watching and keeps flying when a viewer leaves.
 * (`on-demand`, the default, is covered by stream.test.ts.)
 */
import { expect } from 'chai';
import { buildTestApp, parsePrometheus, type TestApp } from '../helpers/app.js';
import { openSse } from '../helpers/sse.js';
import { until } from '../helpers/until.js';

const API = '/api/svc/v1';
const STREAM = `${API}/stream/verdicts`;

const ledgerSize = async (t: TestApp): Promise<number> => (await t.http.get(`${API}/ledger/readiness`)).body.integrity.nodes as number;

/** svc_verdicts_total summed over decisions, by its `simulated` label. */
async function verdictsBySimulated(t: TestApp): Promise<{ simulated: number; real: number }> {
  const series = parsePrometheus((await t.http.get('/metrics')).text).get('svc_verdicts_total') ?? [];
  const sum = (simulated: string): number => series.filter((s) => s.labels.simulated === simulated).reduce((acc, s) => acc + s.value, 0);
  return { simulated: sum('true'), real: sum('false') };
}

describe('stream.flight', function () {
  // above the waits' own 60 s limits, so a slow machine fails on the condition it waited for
  this.timeout(180_000);

  describe('off', () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp({ stream: { flight: 'off', tickMs: 50, heartbeatMs: 100 } });
    });
    after(() => t.close());

    it('a connected viewer starts no flight: its first and only event is the real verdict posted after it connected', async () => {
      const viewer = await openSse(`${t.baseUrl}${STREAM}`);
      try {
        // five heartbeats are ten 50 ms ticks in which an on-demand flight, started by this viewer, appends 4 verdicts each
        await until('five heartbeats on the open stream', () => viewer.comments.filter((c) => c === ': ping').length >= 5, 60_000);
        expect(viewer.events).to.deep.equal([]);
        const before = await ledgerSize(t);
        const posted = await t.http.post(`${API}/verdict`).send({ track_id: 'REAL-1', lat: 36.1, lon: -115.2 });
        expect(posted.status).to.equal(200);
        const [event] = await viewer.waitFor(1);
        expect(Number(event!.id)).to.equal(posted.body.ledger.index);
        expect(JSON.parse(event!.data)).to.deep.include({ track_id: 'REAL-1', simulated: false });
        // two more heartbeats after the verdict: an event published behind it would have arrived first
        const pings = viewer.comments.filter((c) => c === ': ping').length;
        await until('two heartbeats after the verdict', () => viewer.comments.filter((c) => c === ': ping').length >= pings + 2, 60_000);
        expect(viewer.events.map((e) => e.id)).to.deep.equal([event!.id]);
        expect(await ledgerSize(t)).to.equal(before + 1);
        expect(await verdictsBySimulated(t)).to.deep.equal({ simulated: 0, real: 1 });
      } finally {
        viewer.close();
      }
    });
  });

  describe('always', () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp({ stream: { flight: 'always', tickMs: 50, heartbeatMs: 100 } });
    });
    after(() => t.close());

    it('flies with no viewer: the ledger fills with simulated verdicts while nobody watches', async () => {
      await until('8 simulated verdicts in the ledger', async () => (await ledgerSize(t)) >= 8, 60_000);
      expect(parsePrometheus((await t.http.get('/metrics')).text).get('svc_sse_viewers')![0]!.value).to.equal(0);
      const counts = await verdictsBySimulated(t);
      expect(counts.real).to.equal(0);
      expect(counts.simulated).to.be.at.least(8);
      // what the ledger holds is the flight's: every recent verdict is simulated
      const window = (await t.http.get(`${API}/ledger/verdicts`)).body as { items: { simulated: boolean }[] };
      expect(window.items.length).to.be.at.least(8);
      expect(window.items.every((i) => i.simulated)).to.equal(true);
    });

    it('keeps flying after a viewer leaves', async () => {
      const viewer = await openSse(`${t.baseUrl}${STREAM}`);
      await viewer.waitFor(4);
      viewer.close();
      await until('no viewer left', async () => parsePrometheus((await t.http.get('/metrics')).text).get('svc_sse_viewers')![0]!.value === 0, 60_000);
      const atLeave = await ledgerSize(t);
      await until('the ledger to grow by 8 with no viewer', async () => (await ledgerSize(t)) >= atLeave + 8, 60_000);
      expect((await verdictsBySimulated(t)).real).to.equal(0);
    });
  });
});
