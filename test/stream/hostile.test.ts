import { expect } from 'chai';
import { request } from 'node:http';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { openSse } from '../helpers/sse.js';
import { until } from '../helpers/until.js';

const STREAM = '/api/svc/v1/stream/verdicts';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('SSE stream against hostile and heavy clients', function () {
  // above the waits' own 60 s limits, so a slow machine fails on the condition it waited for
  this.timeout(180_000);

  describe('viewers', () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp({ stream: { tickMs: 20, heartbeatMs: 60_000, sendBufferBytes: 1024 } });
    });
    after(() => t.close());

    it('HEAD answers the stream headers and is not a viewer (the flight stays off)', async () => {
      const res = await new Promise<{ status: number; type: string | undefined }>((resolve, reject) => {
        const req = request(`${t.baseUrl}${STREAM}`, { method: 'HEAD' }, (r) => {
          r.resume();
          r.on('end', () => resolve({ status: r.statusCode!, type: r.headers['content-type'] }));
        });
        req.on('error', reject);
        req.setTimeout(60_000, () => req.destroy(new Error('HEAD got no answer')));
        req.end();
      });
      expect(res.status).to.equal(200);
      expect(res.type).to.match(/^text\/event-stream/);
      await sleep(100); // a window for a viewer wrongly registered by the HEAD to show
      const health = await t.http.get('/api/svc/v1/health');
      expect(health.status).to.be.oneOf([200, 503]);
      const metrics = await t.http.get('/metrics');
      expect(metrics.text).to.match(/^svc_sse_viewers 0$/m);
    });

    it('a Last-Event-ID newer than the newest event, or malformed, gets event: reset', async () => {
      for (const id of ['999999999', 'abc', '-1']) {
        const r = await openSse(`${t.baseUrl}${STREAM}`, { 'last-event-id': id });
        const [first] = await r.waitFor(1);
        r.close();
        expect(first!.event, id).to.equal('reset');
        expect(JSON.parse(first!.data)).to.have.property('reason');
      }
    });
  });

  describe('the flight near the ledger cap', () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp({ stream: { tickMs: 20 }, ledger: { maxNodes: 60 }, guard: { flightPauseRatio: 0.5 } });
    });
    after(() => t.close());

    it('the flight pauses before the cap, says so on the stream, and real verdicts still have room', async () => {
      const r = await openSse(`${t.baseUrl}${STREAM}`);
      await until('a paused event', () => r.events.some((e) => e.event === 'paused'), 60_000).catch(() => null);
      await sleep(200); // a window of ten ticks in which a flight that did not pause would append
      r.close();
      const paused = r.events.find((e) => e.event === 'paused');
      expect(paused, 'a paused event').to.not.equal(undefined);
      expect(JSON.parse(paused!.data)).to.include({ max_nodes: 60, pause_at: 30 });
      const size = t.provided.ledger.status.size();
      expect(size).to.be.at.most(30);
      const v = await t.http.post('/api/svc/v1/verdict').send({ track_id: 'real-1', lat: 1, lon: 2 });
      expect(v.status).to.equal(200);
    });
  });

  describe('shutdown', () => {
    it('draining ends every stream with a final event: shutdown, and stops the flight first', async () => {
      const t = await buildTestApp({ stream: { tickMs: 50 } });
      try {
        const r = await openSse(`${t.baseUrl}${STREAM}`);
        await r.waitFor(1);
        const ended = new Promise<void>((resolve) => r.res.on('end', () => resolve()));
        t.drain();
        await ended;
        expect(r.events.at(-1)!.event).to.equal('shutdown');
        const size = t.provided.ledger.status.size();
        await sleep(300); // six ticks: at most the tick already signing lands, nothing after it
        const later = t.provided.ledger.status.size();
        expect(later).to.be.at.most(size + 4);
        await sleep(300);
        expect(t.provided.ledger.status.size()).to.equal(later);
      } finally {
        await t.close();
      }
    });
  });
});
