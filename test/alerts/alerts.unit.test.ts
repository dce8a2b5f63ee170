/** The pieces of the alerts: edge detection and debounce, the aircraft frame, the buckets, the zones, the config. */
import { expect } from 'chai';
import { EntryTracker } from '../../src/alerts/entry-tracker.js';
import { aircraftFrame, AlertService, FT_TO_M, KT_TO_MPS } from '../../src/alerts/alert-service.js';
import { TokenBucket } from '../../src/alerts/token-bucket.js';
import { Zones } from '../../src/alerts/zones.js';
import { Webhook } from '../../src/alerts/webhook.js';
import { loadConfig } from '../../src/config/load.js';
import { DEMO_NO_FLY_ZONES } from '../../src/ledger/ledger.config.js';
import type { AdsbAircraft } from '../../src/isomorphic/wire/adsb.js';
import { haversineM } from '../../src/lib/geo.js';

const AIRCRAFT: AdsbAircraft = {
  hex: 'ae01c5', non_icao: false, callsign: 'RCH123', registration: '05-5140', type_code: 'C17', type_desc: null, military: true, lat: 38.5, lon: -77.1,
  position_age_s: 0.5, position_time: null, on_ground: false, alt_baro_ft: 32000, alt_geom_ft: 32575, ground_speed_kt: 450.2, track_deg: 87.1,
  vertical_rate_fpm: -64, squawk: '1234', emergency: null, category: 'A5', position_source: 'adsb_icao', nac_p: 9, seen_s: 0.2, provider: 'fake',
};

describe('src/alerts', () => {
  describe('EntryTracker', () => {
    it('is edge-triggered: unknown or outside to inside enters, staying inside does not', () => {
      const t = new EntryTracker(0);
      expect(t.observe('a', ['z'], 0)).to.deep.equal(['z']);
      t.alerted('a', 'z', 0);
      expect(t.observe('a', ['z'], 1)).to.deep.equal([]);
      expect(t.observe('a', ['z', 'y'], 2)).to.deep.equal(['y']);
      expect(t.observe('a', [], 3)).to.deep.equal([]);
      expect(t.observe('a', ['z'], 4)).to.deep.equal(['z']);
    });

    it('a re-entry within the debounce of the last alert is not an entry; after it, it is', () => {
      const t = new EntryTracker(30_000);
      expect(t.observe('a', ['z'], 1000)).to.deep.equal(['z']);
      t.alerted('a', 'z', 1000);
      t.observe('a', [], 2000);
      expect(t.observe('a', ['z'], 30_999)).to.deep.equal([]);
      // still inside: nothing, though the debounce has passed
      expect(t.observe('a', ['z'], 40_000)).to.deep.equal([]);
      t.observe('a', [], 41_000);
      expect(t.observe('a', ['z'], 42_000)).to.deep.equal(['z']);
    });

    it('forget makes the next sighting inside an entry again; keepOnly forgets targets not seen', () => {
      const t = new EntryTracker(0);
      t.observe('a', ['z'], 0);
      t.forget('a', 'z');
      expect(t.observe('a', ['z'], 1)).to.deep.equal(['z']);
      t.keepOnly(['a'], new Set());
      expect(t.observe('a', ['z'], 2)).to.deep.equal(['z']);
    });
  });

  describe('aircraftFrame', () => {
    it('takes only the aircraft\u2019s own fields, converted, and the snapshot\u2019s time', () => {
      const at = Date.UTC(2026, 10, 29, 6, 0, 0);
      expect(aircraftFrame(AIRCRAFT, at)).to.deep.equal({
        track_id: 'ae01c5', source: 'ADS-B', lat: 38.5, lon: -77.1, alt_m: 32000 * FT_TO_M, speed_mps: 450.2 * KT_TO_MPS, heading_deg: 87.1, ts_utc: '2026-11-29T06:00:00.000Z',
      });
    });

    it('leaves out what was not reported, and what a frame cannot carry; never rssi, authentication or counts', () => {
      const f = aircraftFrame({ ...AIRCRAFT, alt_baro_ft: null, ground_speed_kt: 900, track_deg: null }, 0);
      expect(f).to.deep.equal({ track_id: 'ae01c5', source: 'ADS-B', lat: 38.5, lon: -77.1, ts_utc: '1970-01-01T00:00:00.000Z' });
    });
  });

  describe('TokenBucket', () => {
    it('holds perMinute tokens and refills at perMinute a minute', () => {
      let now = 0;
      const b = new TokenBucket(6, () => now);
      expect(Array.from({ length: 7 }, () => b.take())).to.deep.equal([true, true, true, true, true, true, false]);
      now = 9_999;
      expect(b.take()).to.equal(false);
      now = 10_000;
      expect(b.take()).to.equal(true);
    });
  });

  describe('Zones', () => {
    it('the default is the ledger\u2019s no-fly zones, [lat, lon] swapped to [lon, lat]', () => {
      const z = Zones.from(null, DEMO_NO_FLY_ZONES);
      expect(z.list).to.deep.equal([{ name: 'nfz-demo-1', polygon: DEMO_NO_FLY_ZONES[0]!.polygon.map(([lat, lon]) => [lon, lat]) }]);
      expect(z.containing({ lat: 36.23, lon: -115.16 })).to.deep.equal(['nfz-demo-1']);
      expect(z.containing({ lat: 36.5, lon: -115.1 })).to.deep.equal([]);
    });

    it('a circle contains what is within its radius on the sphere', () => {
      const z = Zones.from([{ name: 'c', center: [-77.1, 38.5], radius_m: 1000 }], []);
      const north = (m: number) => ({ lat: 38.5 + (m / 6_371_008.8) * (180 / Math.PI), lon: -77.1 });
      expect(haversineM(north(999), { lat: 38.5, lon: -77.1 })).to.be.closeTo(999, 1e-6);
      expect(z.containing(north(999))).to.deep.equal(['c']);
      expect(z.containing(north(1001))).to.deep.equal([]);
    });
  });

  describe('Webhook', () => {
    it('hands an alert over without starting the request in the caller\u2019s turn', async () => {
      const hook = new Webhook({ url: 'http://127.0.0.1:9/x', perMinute: 1, timeoutMs: 200, inFlightMax: 1 });
      hook.send({ a: 1 });
      expect(hook.busy).to.equal(1);
      hook.send({ a: 2 });
      expect(hook.counts).to.deep.equal({ sent: 0, failed: 0, dropped_rate_limited: 0, dropped_busy: 1 });
      await hook.close();
      expect(hook.counts.failed).to.equal(1);
    });
  });

  describe('config', () => {
    it('SVC_ALERT_ZONES is a JSON list of polygons and circles', () => {
      const zones = [{ name: 'p', polygon: [[0, 0], [1, 0], [1, 1]] }, { name: 'c', center: [2, 3], radius_m: 50 }];
      const c = loadConfig({ env: { NODE_ENV: 'test', SVC_ALERT_ZONES: JSON.stringify(zones), SVC_ALERT_WEBHOOK_URL: 'https://example.org/hook', SVC_ALERT_WEBHOOK_PER_MIN: '3' } });
      expect(c.alerts).to.deep.include({ zones, webhookUrl: 'https://example.org/hook', webhookPerMin: 3, webhookTimeoutMs: 3000, ringSize: 500 });
    });

    it('refuses a zone list that is not JSON, a bad zone, and a webhook that is not http(s), naming the variable', () => {
      expect(() => loadConfig({ env: { NODE_ENV: 'test', SVC_ALERT_ZONES: '[{' } })).to.throw(/alerts\.zones \(env SVC_ALERT_ZONES\)/);
      expect(() => loadConfig({ env: { NODE_ENV: 'test', SVC_ALERT_ZONES: '[{"name":"x","center":[200,0],"radius_m":5}]' } })).to.throw(/SVC_ALERT_ZONES/);
      expect(() => loadConfig({ env: { NODE_ENV: 'test', SVC_ALERT_WEBHOOK_URL: 'ftp://example.org/' } })).to.throw(/SVC_ALERT_WEBHOOK_URL/);
    });
  });
});

describe('src/alerts/alert-service bounds', () => {
  const cfg = { zones: null, ringSize: 3, maxPerSnapshot: 2, maxPerMinute: 4, debounceMs: 0, webhookUrl: null, webhookPerMin: 6, webhookTimeoutMs: 3000, webhookInFlightMax: 8 };
  const noop = { raised: () => {}, suppressed: () => {}, delivery: () => {} };
  const log = { warn: () => {} };
  const zones = Zones.from([{ name: 'c', center: [-77.1, 38.5], radius_m: 50_000 }], []);

  /** Verdicts that append at 100, 101, … (the decided frames kept). */
  function fakeVerdicts() {
    const decided: unknown[] = [];
    let next = 100;
    return {
      decided,
      decideAll: async (frames: readonly { track_id: string }[]) => {
        decided.push(...frames);
        return frames.map((frame) => ({ frame, node: { index: next++, tsUtc: new Date(0).toISOString() }, evaluation: { decision: 'REVIEW' }, simulated: false })) as never;
      },
    };
  }

  it('per snapshot: at most maxPerSnapshot aircraft are decided, the rest counted, none queued', async () => {
    const v = fakeVerdicts();
    const s = new AlertService({ cfg, zones, verdicts: v, webhook: null, metrics: noop, log });
    const ac = (hex: string) => ({ ...AIRCRAFT, hex });
    s.onSnapshot({ aircraft: [ac('a1'), ac('a2'), ac('a3')], fetchedAtMs: 0 } as never);
    await s.settled();
    expect(s.after(0, 10).map((a) => [a.target_id, a.ledger_index])).to.deep.equal([['a1', 100], ['a2', 101]]);
    expect(v.decided).to.have.length(2);
    expect(s.suppressed).to.deep.equal({ per_snapshot: 1, per_minute: 0, not_recorded: 0 });
    // the same aircraft at the next snapshot: still inside, nothing new
    s.onSnapshot({ aircraft: [ac('a1'), ac('a2'), ac('a3')], fetchedAtMs: 1 } as never);
    await s.settled();
    expect(s.after(2, 10)).to.deep.equal([]);
  });

  it('per minute: alerts beyond maxPerMinute are counted; the ring keeps the newest ringSize', async () => {
    const s = new AlertService({ cfg, zones, verdicts: fakeVerdicts(), webhook: null, metrics: noop, log, now: () => 0 });
    for (let i = 0; i < 6; i++) s.onVerdict({ frame: { track_id: `d${i}`, lat: 38.5, lon: -77.1 }, node: { index: i, tsUtc: new Date(0).toISOString() }, evaluation: { decision: 'DENY' }, simulated: false } as never);
    expect(s.suppressed.per_minute).to.equal(2);
    expect(s.newestSeq).to.equal(4);
    expect(s.after(0, 10).map((a) => a.seq)).to.deep.equal([2, 3, 4]);
  });
});
