/**
 * Entry alerts end to end: drone verdicts entering a zone, an aircraft of a fake ADS-B upstream
 * entering one (its signed verdict built from its own fields), the webhook, its rate limit, and a
 * dead webhook that costs the verdict path nothing.
 */
import { expect } from 'chai';
import { parsePrometheus, withTestApp, type TestApp } from '../helpers/app.js';
import { refusedUrl, startFakeUpstream, type FakeUpstream } from '../helpers/fake-adsb-upstream.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { until } from '../helpers/until.js';

const API = '/api/svc/v1';
/** The demo no-fly zone's box, as a watched polygon ([lon, lat]); and a circle around the fake C-17. */
const BOX = { name: 'box', polygon: [[-115.175, 36.215], [-115.145, 36.215], [-115.145, 36.24], [-115.175, 36.24]] };
const CIRCLE = { name: 'circle', center: [-77.1, 38.5], radius_m: 5000 };
const OUTSIDE = { lat: 36.5, lon: -115.1 };
const INSIDE = { lat: 36.23, lon: -115.16 };
/** The fake upstream's C-17, as readsb sends it. */
const C17 = { hex: 'ae01c5', type: 'adsb_icao', flight: 'RCH123  ', r: '05-5140', t: 'C17', dbFlags: 1, alt_baro: 32000, gs: 450.2, track: 87.1, lat: 39.5, lon: -77.1, seen_pos: 0.5, seen: 0.2 };

async function verdict(t: TestApp, track_id: string, at: { lat: number; lon: number }) {
  const res = await t.http.post(`${API}/verdict`).send({ track_id, source: 'OpenDroneID', ...at, alt_m: 90, speed_mps: 0 });
  expect(res.status).to.equal(200);
  return res.body as { decision: string; ledger: { index: number } };
}

async function alerts(t: TestApp, after = 0) {
  const res = await t.http.get(`${API}/alerts?after=${after}`);
  expect(res.status).to.equal(200);
  return res.body;
}

describe('entry alerts', () => {
  describe('drones, aircraft and a webhook that answers', () => {
    let fake: FakeUpstream;
    let hook: WebhookReceiver;
    before(async () => {
      fake = await startFakeUpstream({ mode: 'ok', aircraft: [C17] });
      hook = await startWebhookReceiver();
    });
    const app = withTestApp(() => ({
      stream: { flight: 'off' },
      adsb: { providers: [{ name: 'fake', url: fake.url }], minIntervalMs: 0, timeoutMs: 1000, freshMs: 100 },
      alerts: { zones: [BOX, CIRCLE], webhookUrl: hook.url, webhookPerMin: 100 },
    }));
    after(async () => {
      await hook.close();
      await fake.close();
    });

    it('a drone outside then inside a zone: exactly one alert, carrying that verdict\u2019s index and decision', async () => {
      const out = await verdict(app(), 'D1', OUTSIDE);
      expect((await alerts(app())).alerts).to.deep.equal([]);
      const into = await verdict(app(), 'D1', INSIDE);
      const body = await alerts(app());
      expect(body.alerts).to.have.length(1);
      const a = body.alerts[0];
      expect(a).to.deep.equal({ seq: 1, kind: 'drone', target_id: 'D1', zone: 'box', entered_at: a.entered_at, lat: INSIDE.lat, lon: INSIDE.lon, alt_m: 90, ledger_index: into.ledger.index, decision: into.decision, simulated: false });
      expect(into.ledger.index).to.equal(out.ledger.index + 1);
      const node = (await app().http.get(`${API}/receipt/export?index=${a.ledger_index}`)).body;
      expect(node.export_state).to.equal('SIGNED_VERIFIED');
      expect(Date.parse(a.entered_at)).to.equal(Date.parse(JSON.parse(Buffer.from(node.payload_b64, 'base64').toString()).ts_utc));
      expect(body.next_after).to.equal(1);
      expect(body.zones).to.deep.equal([BOX, CIRCLE]);
    });

    it('staying inside raises nothing more', async () => {
      await verdict(app(), 'D1', INSIDE);
      await verdict(app(), 'D1', { lat: 36.22, lon: -115.15 });
      expect((await alerts(app(), 1)).alerts).to.deep.equal([]);
    });

    it('the webhook received the alert\u2019s body', async () => {
      const first = (await alerts(app())).alerts[0];
      await until('the webhook delivery', () => hook.bodies.length >= 1);
      expect(hook.bodies).to.deep.equal([first]);
      expect((await alerts(app())).webhook).to.deep.equal({ configured: true, sent: 1, failed: 0, dropped_rate_limited: 0, dropped_busy: 0 });
    });

    it('an aircraft entering a zone: one alert whose signed verdict is built from that aircraft\u2019s fields alone', async () => {
      // first snapshot: the aircraft 111 km north of the circle
      const before = (await app().http.get(`${API}/adsb`)).body;
      expect(before.aircraft.map((x: { hex: string }) => x.hex)).to.deep.equal(['ae01c5']);
      const seq = (await alerts(app())).next_after;
      expect((await alerts(app(), seq)).alerts).to.deep.equal([]);
      fake.aircraft = [{ ...C17, lat: 38.5 }];
      const [a] = await until('the aircraft alert', async () => {
        await app().http.get(`${API}/adsb`);
        await app().provided.alerts.service.settled();
        const got = (await alerts(app(), seq)).alerts;
        return got.length ? got : null;
      });
      const snapshotAt = Date.parse(a.entered_at);
      expect(a).to.deep.equal({ seq: seq + 1, kind: 'aircraft', target_id: 'ae01c5', zone: 'circle', entered_at: a.entered_at, lat: 38.5, lon: -77.1, alt_m: 32000 * 0.3048, ledger_index: a.ledger_index, decision: a.decision, simulated: false });
      const exp = (await app().http.get(`${API}/receipt/export?index=${a.ledger_index}`)).body;
      expect(exp.export_state).to.equal('SIGNED_VERIFIED');
      expect(exp.verification.verified).to.equal(true);
      const signed = JSON.parse(Buffer.from(exp.payload_b64, 'base64').toString('utf8'));
      expect(signed.subject.track_id).to.equal('ae01c5');
      expect(signed.payload.decision).to.equal(a.decision);
      // the frame the verdict decided: the aircraft's own fields and the snapshot's time, nothing else
      const window = (await app().http.get(`${API}/ledger/verdicts?minutes=1`)).body;
      const item = window.items.find((i: { ledger: { index: number } }) => i.ledger.index === a.ledger_index);
      expect(item.frame).to.deep.equal({ track_id: 'ae01c5', source: 'ADS-B', lat: 38.5, lon: -77.1, alt_m: 32000 * 0.3048, speed_mps: 450.2 * 0.514444, heading_deg: 87.1, ts_utc: new Date(snapshotAt).toISOString() });
      // the aircraft's own verdict is not taken for a drone entering the zone
      expect((await alerts(app(), seq)).alerts).to.have.length(1);
      // staying inside at the next snapshot raises nothing
      const fetched = Date.parse((await app().http.get(`${API}/adsb`)).body.fetched_at);
      await until('a newer snapshot', async () => Date.parse((await app().http.get(`${API}/adsb`)).body.fetched_at) > fetched);
      await app().provided.alerts.service.settled();
      expect((await alerts(app(), seq)).alerts).to.have.length(1);
    });

    it('counts alerts by kind and deliveries by outcome on /metrics', async () => {
      await until('both deliveries', () => hook.bodies.length >= 2);
      const m = parsePrometheus((await app().http.get('/metrics')).text);
      const value = (name: string, labels: Record<string, string>) => m.get(name)!.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))!.value;
      expect(value('svc_alerts_raised_total', { kind: 'drone' })).to.equal(1);
      expect(value('svc_alerts_raised_total', { kind: 'aircraft' })).to.equal(1);
      expect(value('svc_alert_webhook_deliveries_total', { outcome: 'sent' })).to.equal(2);
      expect(value('svc_alert_webhook_deliveries_total', { outcome: 'failed' })).to.equal(0);
    });

    for (const q of ['after=-1', 'after=1.5', 'limit=0', 'limit=501', 'limit=x', 'seq=1']) {
      it(`answers 422 with the validation body for ${q}`, async () => {
        const res = await app().http.get(`${API}/alerts?${q}`);
        expect(res.status).to.equal(422);
        expect(res.body.detail[0].loc).to.deep.equal(['query', q.split('=')[0]]);
      });
    }
  });

  describe('the webhook rate limit', () => {
    let hook: WebhookReceiver;
    before(async () => {
      hook = await startWebhookReceiver();
    });
    const app = withTestApp(() => ({ stream: { flight: 'off' }, adsb: { enabled: false }, alerts: { webhookUrl: hook.url, webhookPerMin: 2 } }));
    after(() => hook.close());

    it('drops what exceeds the bucket and counts it, never queues it', async () => {
      // the default zones: the ledger's no-fly zone nfz-demo-1
      for (const id of ['R1', 'R2', 'R3']) await verdict(app(), id, INSIDE);
      const body = await alerts(app());
      expect(body.alerts.map((a: { target_id: string; zone: string }) => [a.target_id, a.zone])).to.deep.equal([['R1', 'nfz-demo-1'], ['R2', 'nfz-demo-1'], ['R3', 'nfz-demo-1']]);
      await until('two deliveries', async () => (await alerts(app())).webhook.sent === 2);
      expect((await alerts(app())).webhook).to.deep.equal({ configured: true, sent: 2, failed: 0, dropped_rate_limited: 1, dropped_busy: 0 });
      expect(hook.bodies.map((b) => (b as { target_id: string }).target_id)).to.deep.equal(['R1', 'R2']);
      expect(body.zones).to.deep.equal([{ name: 'nfz-demo-1', polygon: [[-115.175, 36.215], [-115.145, 36.215], [-115.145, 36.24], [-115.175, 36.24]] }]);
    });
  });

  describe('a dead webhook (connection refused)', () => {
    let url: string;
    before(async () => {
      url = (await refusedUrl()).replace('/v2/mil', '/hook');
    });
    const app = withTestApp(() => ({ stream: { flight: 'off' }, adsb: { enabled: false }, alerts: { webhookUrl: url } }));

    it('costs the verdict path nothing, and is counted as failed', async () => {
      // the same verdict with no alert to deliver: its time is what an answer costs here
      await verdict(app(), 'W0', OUTSIDE);
      let started = performance.now();
      await verdict(app(), 'W0', OUTSIDE);
      const plain = performance.now() - started;
      started = performance.now();
      const into = await verdict(app(), 'W1', INSIDE);
      const alerting = performance.now() - started;
      const body = await alerts(app());
      expect(body.alerts.map((a: { ledger_index: number }) => a.ledger_index)).to.deep.equal([into.ledger.index]);
      // the delivery starts on a later turn of the event loop: the answer never waits for it
      expect(alerting).to.be.below(plain + 250);
      await until('the failed delivery', async () => (await alerts(app())).webhook.failed === 1);
      expect((await alerts(app())).webhook).to.deep.equal({ configured: true, sent: 0, failed: 1, dropped_rate_limited: 0, dropped_busy: 0 });
    });
  });
});
