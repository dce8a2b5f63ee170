// The globe's pure tools, in Node: scale, fit and rings (measure.ts), units, land clipping, MGRS,
// entry watches, the feed-down banner, and the in-browser verdict check (WebCrypto is in Node too).
import { expect } from 'chai';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { geoDistance } from 'd3-geo';
import { View } from '../../src/ui/client/globe/view.js';
import { arc, boundingCap, EARTH_RADIUS_M, metresPerPixel, niceFloor, ring, ringRadii, scaleBar, zoomForCap } from '../../src/ui/client/globe/measure.js';
import { altIn, cotMetres, fmtAlt, fmtDistance, fmtSpeed, loadUnits, saveUnits } from '../../src/ui/client/common/units.js';
import { clipRing, viewBox } from '../../src/ui/client/globe/land.js';
import { fmtPosition, mgrsOf, utcClock } from '../../src/ui/client/globe/position.js';
import { insidePolygon, Watcher, zoneSite, type Zone } from '../../src/ui/client/globe/watch.js';
import { feedDown } from '../../src/ui/client/common/honesty.js';
import { canonicalFlat, derToRaw, pae, VerdictVerifier, type SignedVerdict } from '../../src/ui/client/globe/verify.js';
import { buildReplay, replayAt, type ReplayVerdict } from '../../src/ui/client/globe/replay.js';
import type { AdsbAnswer } from '../../src/isomorphic/wire/adsb.js';

/** UTM easting and northing by the transverse Mercator series of Snyder (1987), eqs. 8-9 to 8-10. */
function utm(lon: number, lat: number): { zone: number; e: number; n: number } {
  const a = 6378137;
  const f = 1 / 298.257223563;
  const e2 = f * (2 - f);
  const ep2 = e2 / (1 - e2);
  const k0 = 0.9996;
  const zone = Math.floor((lon + 180) / 6) + 1;
  const phi = (lat * Math.PI) / 180;
  const dl = ((lon - ((zone - 1) * 6 - 180 + 3)) * Math.PI) / 180;
  const N = a / Math.sqrt(1 - e2 * Math.sin(phi) ** 2);
  const T = Math.tan(phi) ** 2;
  const C = ep2 * Math.cos(phi) ** 2;
  const A = Math.cos(phi) * dl;
  const M =
    a *
    ((1 - e2 / 4 - (3 * e2 ** 2) / 64 - (5 * e2 ** 3) / 256) * phi -
      ((3 * e2) / 8 + (3 * e2 ** 2) / 32 + (45 * e2 ** 3) / 1024) * Math.sin(2 * phi) +
      ((15 * e2 ** 2) / 256 + (45 * e2 ** 3) / 1024) * Math.sin(4 * phi) -
      ((35 * e2 ** 3) / 3072) * Math.sin(6 * phi));
  const e = k0 * N * (A + ((1 - T + C) * A ** 3) / 6 + ((5 - 18 * T + T * T + 72 * C - 58 * ep2) * A ** 5) / 120) + 500000;
  let n = k0 * (M + N * Math.tan(phi) * (A ** 2 / 2 + ((5 - T + 9 * C + 4 * C * C) * A ** 4) / 24 + ((61 - 58 * T + T * T + 600 * C - 330 * ep2) * A ** 6) / 720));
  if (lat < 0) n += 10_000_000;
  return { zone, e, n };
}

describe('globe tools (pure browser modules)', () => {
  describe('scale bar, fit and range rings', () => {
    it('the scale bar is a round distance whose length matches the projection at the centre within 0.1 %', () => {
      for (const zoom of [1, 7.3, 60, 900, 16_000]) {
        const view = new View({ lon: -115.1, lat: 36.2, zoom });
        view.resize(1440, 900);
        const bar = scaleBar(metresPerPixel(view.radius), 200, 'metric');
        expect(bar.px).to.be.at.most(200).and.above(200 / 5 - 1e-9);
        expect(bar.label).to.match(/^[125](?:0|,000)* k?m$/);
        // walk the bar's distance east from the centre on the sphere; d3-geo's distance agrees
        const end = view.invert(720 + bar.px, 450)!;
        const metres = geoDistance([-115.1, 36.2], end) * EARTH_RADIUS_M;
        expect(metres / bar.metres, `zoom ${zoom}`).to.be.closeTo(1, 1e-6);
      }
    });

    it('aviation units: nautical miles, or feet below half a mile; 1-2-5 steps', () => {
      expect(niceFloor(7.9)).to.equal(5);
      expect(niceFloor(19.99)).to.equal(10);
      expect(niceFloor(0.031)).to.be.closeTo(0.02, 1e-12);
      expect(scaleBar(1852 / 10, 100, 'aviation')).to.deep.include({ label: '10 NM' });
      expect(scaleBar(1852 / 10, 100, 'aviation').px).to.be.closeTo(100, 1e-3);
      const short = scaleBar(1, 150, 'aviation');
      expect(short.label).to.equal('200 ft');
      expect(short.px).to.be.closeTo(200 * 0.3048, 1e-6);
      expect(scaleBar(30, 100, 'metric').label).to.equal('2 km');
    });

    it('bounding caps hold every point; fit zoom frames the cap; a single point gets the 2 km minimum', () => {
      const pts: [number, number][] = [
        [-115.2, 36.1],
        [-115.0, 36.3],
        [-115.1, 36.25],
      ];
      const cap = boundingCap(pts)!;
      for (const [lon, lat] of pts) expect(arc(cap.lon, cap.lat, lon, lat)).to.be.at.most(cap.radius + 1e-12);
      const view = new View({ lon: cap.lon, lat: cap.lat, zoom: zoomForCap(cap) });
      view.resize(1000, 800);
      for (const [lon, lat] of pts) {
        const [x, y] = view.project(lon, lat)!;
        expect(x).to.be.within(0, 1000);
        expect(y).to.be.within(0, 800);
      }
      const one = boundingCap([[10, 50]])!;
      expect(one.radius).to.be.closeTo(0, 1e-12);
      expect(zoomForCap(one)).to.be.closeTo(0.85 / Math.sin(1000 / EARTH_RADIUS_M), 1e-6);
      expect(boundingCap([])).to.equal(null);
      // the whole world: zoom 1
      expect(zoomForCap(boundingCap([[0, 0], [180, 0], [90, 0], [-90, 0]])!)).to.equal(1);
    });

    it('a range ring is every point at its distance from the site; radii are 1-4 times a round step', () => {
      for (const m of [500, 3000, 250_000]) {
        for (const [lon, lat] of ring(-115.1, 36.2, m, 64)) expect(geoDistance([-115.1, 36.2], [lon, lat]) * EARTH_RADIUS_M).to.be.closeTo(m, m * 1e-9 + 1e-6);
      }
      const r = ringRadii(10, 800, 'metric');
      expect(r).to.deep.equal([1000, 2000, 3000, 4000]);
    });
  });

  describe('units', () => {
    it('unknown is "unknown", never a number; the CoT sentinel 9999999 is unknown', () => {
      expect(fmtAlt(null, 'aviation')).to.equal('unknown');
      expect(cotMetres(9_999_999)).to.equal(null);
      expect(cotMetres(-9_999_999)).to.equal(null);
      expect(cotMetres(120.5)).to.equal(120.5);
      expect(fmtAlt(cotMetres(9_999_999), 'metric')).to.equal('unknown');
    });

    it('one system at a time: feet, knots and nautical miles, or metres, m/s and km', () => {
      expect(fmtAlt(3048, 'aviation')).to.equal('10,000 ft');
      expect(fmtAlt(3048, 'metric')).to.equal('3,048 m');
      expect(altIn(100, 'aviation')).to.be.closeTo(328.084, 1e-3);
      expect(fmtSpeed(1852 / 3600, 'aviation')).to.equal('1.0 kt');
      expect(fmtSpeed(12.34, 'metric')).to.equal('12.3 m/s');
      expect(fmtDistance(1852 * 3, 'aviation')).to.equal('3.0 NM');
      expect(fmtDistance(300, 'aviation')).to.equal('984 ft');
      expect(fmtDistance(2500, 'metric')).to.equal('2.5 km');
    });

    it('the choice is remembered; anything else stored reads as the default', () => {
      const store = new Map<string, string>();
      const s = { getItem: (k: string) => store.get(k) ?? null, setItem: (k: string, v: string) => void store.set(k, v) };
      expect(loadUnits(s)).to.equal('aviation');
      saveUnits(s, 'metric');
      expect(loadUnits(s)).to.equal('metric');
      store.set('svc.units', 'furlongs');
      expect(loadUnits(s)).to.equal('aviation');
      expect(loadUnits(null)).to.equal('aviation');
    });
  });

  describe('land clipping', () => {
    it('a ring clipped to a box keeps exactly the part inside, closed, with its winding', () => {
      const box = { west: 0, south: 0, east: 10, north: 10 };
      // a square half inside
      const clipped = clipRing([[-5, 2], [5, 2], [5, 8], [-5, 8], [-5, 2]], box);
      expect(clipped).to.deep.equal([[0, 2], [5, 2], [5, 8], [0, 8], [0, 2]]);
      // wholly outside: nothing; wholly holding the box: the box
      expect(clipRing([[20, 20], [30, 20], [30, 30], [20, 20]], box)).to.deep.equal([]);
      const around = clipRing([[-1, -1], [11, -1], [11, 11], [-1, 11], [-1, -1]], box);
      expect(new Set(around.map((p) => p.join(',')))).to.deep.equal(new Set(['0,0', '10,0', '10,10', '0,10']));
    });

    it('a box is used only for narrow views away from the poles and the antimeridian', () => {
      expect(viewBox(-115, 36, 0.01)).to.not.equal(null);
      expect(viewBox(-115, 36, 0.5)).to.equal(null);
      expect(viewBox(179.99, 0, 0.001)).to.equal(null);
      expect(viewBox(179.9, 0, 0.001)).to.not.equal(null);
      expect(viewBox(0, 88.99, 0.001)).to.equal(null);
    });
  });

  describe('positions', () => {
    it('MGRS digits are the UTM easting and northing modulo 100 km (Snyder series computed here)', () => {
      for (const [lon, lat] of [
        [-115.1398, 36.1699],
        [2.2945, 48.8584],
        [151.2153, -33.8568],
        [-77.0365, 38.8977],
        [37.6173, 55.7558],
      ] as const) {
        const m = mgrsOf(lon, lat)!;
        const [, zb, sq, e, n] = /^(\d{1,2}[C-X]) ([A-Z]{2}) (\d{5}) (\d{5})$/.exec(m)!;
        const u = utm(lon, lat);
        expect(zb!.slice(0, -1), m).to.equal(String(u.zone));
        expect(sq).to.match(/^[A-HJ-NP-Z][A-HJ-NP-V]$/);
        expect(Math.abs(Number(e) - Math.floor(u.e % 100_000)), `${m} easting`).to.be.at.most(1);
        expect(Math.abs(Number(n) - Math.floor(u.n % 100_000)), `${m} northing`).to.be.at.most(1);
      }
      expect(mgrsOf(0, 85)).to.equal(null);
      // degrees get the decimals the view resolves: 3 at a kilometre a pixel, 5 at a metre
      expect(fmtPosition(-115.123456, 36.654321, 'degrees', 1000)).to.equal('36.654°N 115.123°W');
      expect(fmtPosition(-115.123456, 36.654321, 'degrees', 20)).to.equal('36.6543°N 115.1235°W');
      expect(fmtPosition(-115.123456, 36.654321, 'degrees', 1.5)).to.equal('36.65432°N 115.12346°W');
      expect(fmtPosition(0, 85, 'mgrs', 1000)).to.equal('85.000°N 0.000°E (no MGRS beyond 80°S–84°N)');
      expect(utcClock(Date.UTC(2026, 10, 29, 14, 3, 27, 900))).to.equal('14:03:27Z');
    });
  });

  describe('entry watches', () => {
    const zone: Zone = { name: 'nfz-1', polygon: [[36.2, -115.2], [36.2, -115.0], [36.3, -115.0], [36.3, -115.2]] };
    const other: Zone = { name: 'nfz-2', polygon: [[37, -116], [37, -115.9], [37.1, -115.9], [37.1, -116]] };

    it('inside-polygon by ray casting; the site is the vertex centroid', () => {
      expect(insidePolygon(-115.1, 36.25, zone.polygon)).to.equal(true);
      expect(insidePolygon(-115.3, 36.25, zone.polygon)).to.equal(false);
      expect(insidePolygon(-115.1, 36.35, zone.polygon)).to.equal(false);
      expect(zoneSite(zone)[0]).to.be.closeTo(-115.1, 1e-12);
      expect(zoneSite(zone)[1]).to.be.closeTo(36.25, 1e-12);
    });

    it('alerts on entry only: not while inside, again after leaving; only for watched zones or tracks', () => {
      const w = new Watcher();
      const zones = [zone, other];
      expect(w.observe('dr:a', 'a', -115.1, 36.25, zones, 1)).to.deep.equal([]); // nothing watched
      w.zones.add('nfz-1');
      expect(w.observe('dr:b', 'b', -115.3, 36.25, zones, 2)).to.deep.equal([]);
      expect(w.observe('dr:b', 'b', -115.1, 36.25, zones, 3)).to.deep.equal([{ key: 'dr:b', label: 'b', zone: 'nfz-1', lon: -115.1, lat: 36.25, because: 'zone', atMs: 3 }]);
      expect(w.observe('dr:b', 'b', -115.11, 36.26, zones, 4)).to.deep.equal([]);
      expect(w.observe('dr:b', 'b', -115.3, 36.25, zones, 5)).to.deep.equal([]);
      expect(w.observe('dr:b', 'b', -115.1, 36.25, zones, 6)).to.have.length(1);
      // a first sighting already inside counts as an entry
      expect(w.observe('ac:c', 'c', -115.1, 36.22, zones, 7)).to.have.length(1);
      // a watched track alerts in any zone, even unwatched
      w.tracks.add('dr:d');
      expect(w.observe('dr:d', 'd', -115.95, 37.05, zones, 8)).to.deep.equal([{ key: 'dr:d', label: 'd', zone: 'nfz-2', lon: -115.95, lat: 37.05, because: 'track', atMs: 8 }]);
      expect(w.observe('dr:d', 'd', -115.3, 36.25, zones, 9)).to.deep.equal([]);
      expect(w.observe('dr:d', 'd', -115.1, 36.25, zones, 10)[0]!.because).to.equal('zone+track');
      // forgotten targets re-alert when seen inside again
      w.forget('ac:c');
      expect(w.observe('ac:c', 'c', -115.1, 36.22, zones, 11)).to.have.length(1);
    });

    it('memory is bounded: the oldest targets are forgotten first', () => {
      const w = new Watcher(3);
      w.zones.add('nfz-1');
      for (const k of ['a', 'b', 'c', 'd']) w.observe(k, k, -115.1, 36.25, [zone], 0);
      expect(w.observe('a', 'a', -115.1, 36.25, [zone], 1)).to.have.length(1);
      expect(w.observe('d', 'd', -115.1, 36.25, [zone], 1)).to.have.length(0);
    });
  });

  describe('feed-down banner', () => {
    const base: AdsbAnswer = {
      schema: 'svc.adsb/v1', live: false, reason: 'no_snapshot', source: null, source_url: null, attribution: null, fetched_at: null, upstream_now: null, age_s: null,
      bbox: { lat_min: -90, lat_max: 90, lon_min: -180, lon_max: 180 }, count: 0, upstream_total: null, dropped: null, aircraft: [], honesty: '',
      refresh: { scope: 'LOCAL', state: null, error: null },
      attempts: ['a', 'b', 'c'].map((u, i) => ({ upstream: u, outcome: 'network' as const, http_status: null, ms: 3, at: new Date(Date.UTC(2026, 0, 1, 0, 0, 48 + i)).toISOString(), error: 'connection failed: getaddrinfo ENOTFOUND api.example' })),
      upstreams: ['a', 'b', 'c'].map((name) => ({ name, url: `https://${name}.example`, breaker: 'closed', open_until: null, consecutive_failures: 2, last_ok_at: null, last_status: null, last_error: 'connection failed: getaddrinfo ENOTFOUND api.example' })),
    };
    const now = Date.UTC(2026, 0, 1, 0, 1, 2);

    it('says how many upstreams fail and why, when the last try was and when the next comes', () => {
      const d = feedDown(base, null, now, now + 18_000)!;
      expect(d.text).to.equal('Aircraft feed down: 3 upstreams unreachable (DNS), last try 12 s ago, next in 18 s');
      expect(d.upstreams).to.have.length(3);
      expect(d.upstreams[0]).to.equal('a: breaker closed, 2 failure(s) in a row, last error connection failed: getaddrinfo ENOTFOUND api.example, last ok never');
    });

    it('with every breaker open the next try waits for the first to reopen; causes are grouped; live means no banner', () => {
      const open = { ...base, upstreams: base.upstreams.map((u, i) => ({ ...u, breaker: 'open', open_until: new Date(now + (40 + i) * 1000).toISOString() })), attempts: [...base.attempts.slice(0, 2), { ...base.attempts[2]!, outcome: 'timeout' as const, error: 'no complete answer within the timeout (connect)' }] };
      expect(feedDown(open, null, now, now + 5000)!.text).to.equal('Aircraft feed down: 2 upstreams unreachable (DNS), 1 upstream timed out, last try 12 s ago, next in 40 s');
      expect(feedDown({ ...base, live: true, reason: 'fresh' }, null, now, now)).to.equal(null);
      expect(feedDown(null, 'HTTP 503', now, now)!.text).to.equal('Aircraft feed: no answer from this service (HTTP 503)');
      expect(feedDown({ ...base, count: 4, age_s: 95 }, null, now, now + 1000)!.text).to.match(/^Aircraft feed down, showing the snapshot of 2 min ago: /);
    });
  });

  describe('verdicts checked in the browser (WebCrypto)', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const type = 'application/vnd.svc.receipt+json';

    function signed(frame: Record<string, unknown>, over: Partial<{ frameSha: string; decision: string }> = {}): ReplayVerdict {
      const digest = createHash('sha256').update(JSON.stringify(Object.fromEntries(Object.entries(frame).sort(([a], [b]) => (a < b ? -1 : 1))))).digest('hex');
      const payload = Buffer.from(JSON.stringify({ kind: 'counter_uas_decision', payload: { decision: over.decision ?? 'DENY' }, subject: { frame_sha256: over.frameSha ?? digest, track_id: frame.track_id }, ts_utc: '2026-01-01T00:00:05.000Z' }));
      const sig = sign('sha256', Buffer.from(pae(type, payload)), privateKey).toString('base64');
      return {
        track_id: frame.track_id as string, decision: 'DENY', ts_utc: '2026-01-01T00:00:05.000Z', frame, lambda: 0.1, simulated: false, source: null, ledger: { index: 7 },
        receipt: { payload_b64: payload.toString('base64'), keyid: 'k1', dsse: { payloadType: type, signatures: [{ sig, keyid: 'k1' }] } },
      };
    }

    it('PAE bytes and DER → raw r‖s match node:crypto, and a valid verdict verifies', async () => {
      expect(Buffer.from(pae('t', Buffer.from('héllo'))).toString()).to.equal('DSSEv1 1 t 6 héllo');
      const der = sign('sha256', Buffer.from('x'), privateKey);
      const raw = sign('sha256', Buffer.from('x'), { key: privateKey, dsaEncoding: 'ieee-p1363' });
      expect(derToRaw(der)!.length).to.equal(raw.length);
      const v = new VerdictVerifier(new Map([['k1', jwk]]));
      const frame = { track_id: 'd1', lat: 36.25, lon: -115.1, alt_m: 90 };
      expect(await v.verify(signed(frame) as SignedVerdict)).to.deep.equal({ signature: true, frame: true, decision: 'DENY', tsUtc: '2026-01-01T00:00:05.000Z' });
      expect(canonicalFlat({ b: 1, a: 'x' })).to.equal('{"a":"x","b":1}');
    });

    it('a moved frame, a changed payload or an unknown key fails', async () => {
      const v = new VerdictVerifier(new Map([['k1', jwk]]));
      const good = signed({ track_id: 'd1', lat: 36.25, lon: -115.1 });
      expect((await v.verify({ ...good, frame: { track_id: 'd1', lat: 36.26, lon: -115.1 } })).frame).to.equal(false);
      const forged = JSON.parse(Buffer.from(good.receipt.payload_b64, 'base64').toString()) as Record<string, unknown>;
      forged.payload = { decision: 'ALLOW' };
      expect((await v.verify({ ...good, receipt: { ...good.receipt, payload_b64: Buffer.from(JSON.stringify(forged)).toString('base64') } })).signature).to.equal(false);
      expect((await new VerdictVerifier(new Map()).verify(good)).signature).to.equal(false);
    });

    it('a replay places verdicts by their signed time and shows each track at its latest verdict', async () => {
      const v = new VerdictVerifier(new Map([['k1', jwk]]));
      const a = signed({ track_id: 'd1', lat: 36.25, lon: -115.1 });
      const bad = { ...signed({ track_id: 'd2', lat: 36.3, lon: -115.2 }), frame: { track_id: 'd2', lat: 1, lon: 1 } };
      const r = await buildReplay({ minutes: 5, count: 2, truncated: false, items: [a, bad] }, v);
      expect({ verified: r.verified, failed: r.failed, items: r.items.length }).to.deep.equal({ verified: 1, failed: 1, items: 2 });
      const at = replayAt(r, Date.parse('2026-01-01T00:00:05.000Z'), 0);
      expect(at.tracks.map((t) => t.track_id).sort()).to.deep.equal(['d1', 'd2']);
      expect(replayAt(r, Date.parse('2026-01-01T00:00:04.000Z'), 0).tracks).to.deep.equal([]);
    });
  });
});
