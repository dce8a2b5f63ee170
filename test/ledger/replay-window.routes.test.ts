/**
 * GET /ledger/verdicts: the verdicts of the last N minutes, each exactly the SSE `verdict` event's
 * data for its node, whose receipt is the one /receipt/export serves for the same index.
 */
import { expect } from 'chai';
import { rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTestApp, withTestApp, type TestApp } from '../helpers/app.js';
import { openSse } from '../helpers/sse.js';
import type { TelemetryFrame } from '../../src/verdicts/telemetry.js';

const API = '/api/svc/v1';
const MIN = 60_000;

const frame = (track_id: string, lat = 36.5): TelemetryFrame => ({ track_id, source: 'OpenDroneID', lat, lon: -115.1, alt_m: 90, speed_mps: 0 });

/** Appends verdicts decided at the given times (ms), in this order. */
async function decidedAt(t: TestApp, times: number[], prefix: string): Promise<number[]> {
  const out: number[] = [];
  for (const [k, nowMs] of times.entries()) out.push((await t.provided.verdicts.verdicts.decide(frame(`${prefix}${k}`), { nowMs })).node.index);
  return out;
}

describe('GET /api/svc/v1/ledger/verdicts', () => {
  describe('in memory mode, with verdicts just outside, just inside and well inside the window', () => {
    const app = withTestApp({ stream: { flight: 'off' } });
    let outside: number[];
    let inside: number[];
    before(async () => {
      const now = Date.now();
      // 30 s either side of the 10-minute edge: far more than a request takes
      outside = await decidedAt(app(), [now - 20 * MIN, now - 10 * MIN - 30_000], 'OLD');
      inside = await decidedAt(app(), [now - 10 * MIN + 30_000, now - MIN, now - 1000, now, now], 'NEW');
    });

    it('sends the receipts of the last 10 minutes in ledger order, the node just outside excluded', async () => {
      const res = await app().http.get(`${API}/ledger/verdicts`);
      expect(res.status).to.equal(200);
      const b = res.body;
      expect(b).to.deep.include({ schema: 'svc.verdict-window/v1', minutes: 10, limit: 2000, count: inside.length, truncated: false, first_index: inside[0], last_index: inside.at(-1), ledger_size: inside.at(-1)! + 1 });
      expect(b.items.map((i: { ledger: { index: number } }) => i.ledger.index)).to.deep.equal(inside);
      expect(Date.parse(b.to_ts_utc) - Date.parse(b.from_ts_utc)).to.equal(10 * MIN);
      expect(b.items.map((i: { track_id: string }) => i.track_id)).to.deep.equal(['NEW0', 'NEW1', 'NEW2', 'NEW3', 'NEW4']);
      expect(outside.every((i) => i < inside[0]!)).to.equal(true);
    });

    it('a wider window takes the node that was just outside, and only the one inside 11 minutes', async () => {
      const res = await app().http.get(`${API}/ledger/verdicts?minutes=11`);
      expect(res.body.items.map((i: { ledger: { index: number } }) => i.ledger.index)).to.deep.equal([outside[1], ...inside]);
    });

    it('each item is the SSE event data for its node, and carries the receipt /receipt/export serves', async () => {
      const { items } = (await app().http.get(`${API}/ledger/verdicts`)).body as { items: { ledger: { index: number }; receipt: { dsse: unknown; payload_b64: string; keyid: string } }[] };
      const sse = await openSse(`${app().baseUrl}${API}/stream/verdicts`, { 'last-event-id': String(inside[0]! - 1) });
      try {
        const events = await sse.waitFor(inside.length);
        expect(events.map((e) => Number(e.id))).to.deep.equal(inside);
        expect(items).to.deep.equal(events.map((e) => JSON.parse(e.data)));
      } finally {
        sse.close();
      }
      for (const item of items) {
        const exp = (await app().http.get(`${API}/receipt/export?index=${item.ledger.index}`)).body;
        expect(exp).to.deep.include({ node_index: item.ledger.index, export_state: 'SIGNED_VERIFIED' });
        expect(item.receipt.dsse).to.deep.equal(exp.dsse);
        expect(item.receipt.payload_b64).to.equal(exp.payload_b64);
        expect(item.receipt.keyid).to.equal(exp.keyid);
      }
    });

    it('truncation keeps the newest `limit`, still in ledger order', async () => {
      const res = await app().http.get(`${API}/ledger/verdicts?limit=2`);
      expect(res.body).to.deep.include({ count: 2, truncated: true, limit: 2, first_index: inside.at(-2), last_index: inside.at(-1) });
      expect(res.body.items.map((i: { ledger: { index: number } }) => i.ledger.index)).to.deep.equal(inside.slice(-2));
      const exact = await app().http.get(`${API}/ledger/verdicts?limit=${inside.length}`);
      expect(exact.body).to.deep.include({ count: inside.length, truncated: false });
    });

    for (const q of ['minutes=0', 'minutes=61', 'minutes=1.5', 'minutes=ten', 'limit=0', 'limit=5001', 'limit=', 'since=1']) {
      it(`answers 422 with the validation body for ${q}`, async () => {
        const res = await app().http.get(`${API}/ledger/verdicts?${q}`);
        expect(res.status).to.equal(422);
        const name = q.split('=')[0];
        expect(res.body.detail).to.be.an('array').with.length(1);
        expect(res.body.detail[0].loc).to.deep.equal(['query', name]);
        expect(res.body.detail[0].msg).to.be.a('string');
      });
    }
  });

  describe('an empty ledger', () => {
    const app = withTestApp({ stream: { flight: 'off' } });
    it('answers an empty window, nothing made up', async () => {
      const res = await app().http.get(`${API}/ledger/verdicts?minutes=1`);
      expect(res.body).to.deep.include({ count: 0, truncated: false, first_index: null, last_index: null, ledger_size: 0, items: [] });
    });
  });

  describe('in file mode, after a restart (the nodes read back from the records file)', () => {
    let dir: string;
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'svc-window-'));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('sends the same items as before the restart', async () => {
      const config = { stream: { flight: 'off' }, ledger: { mode: 'file', dataDir: join(dir, 'data'), fsckAtStart: false } };
      const first = await buildTestApp(config);
      let before: unknown;
      try {
        const now = Date.now();
        await decidedAt(first, [now - 30 * MIN, now - 2 * MIN, now - MIN, now], 'F');
        before = (await first.http.get(`${API}/ledger/verdicts?minutes=5`)).body;
      } finally {
        await first.close();
      }
      const second = await buildTestApp(config);
      try {
        const after = (await second.http.get(`${API}/ledger/verdicts?minutes=5`)).body;
        const strip = (b: { items: unknown[]; count: number; first_index: number }) => ({ items: b.items, count: b.count, first_index: b.first_index });
        expect(strip(after)).to.deep.equal(strip(before as never));
        expect(after.count).to.equal(3);
        expect(after.first_index).to.equal(1);
      } finally {
        await second.close();
      }
    });
  });
});
