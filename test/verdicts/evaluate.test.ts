import { expect } from 'chai';
import { AXES, weightedGeometricMean } from '../../src/verdicts/axes.js';
import { decide, evaluate } from '../../src/verdicts/evaluate.js';
import { distanceToPolygonM, pointInPolygon, ringFromLatLon } from '../../src/lib/geo.js';
import { binaryKl, klInverseLower, pacBayesBound } from '../../src/verdicts/pac-bayes.js';
import type { NoFlyZone } from '../../src/ledger/ledger.config.js';

const zone: NoFlyZone = { id: 'nf-test', name: 'test', polygon: [[36.0, -115.2], [36.0, -115.0], [36.2, -115.0], [36.2, -115.2]] };
const strong = { track_id: 'a1b2c3', source: 'ADS-B' as const, lat: 36.5, lon: -115.1, alt_m: 90, speed_mps: 15, heading_deg: 10, rssi_dbm: -45, id_authenticated: true, timestamp_skew_s: 0, n_observations: 2000 };

describe('verdict evaluation', () => {
  it('the PAC-Bayes floor solves kl(q‖p) = bound, sits below q, and rises with n', () => {
    let last = 0;
    for (const n of [10, 50, 200, 1000, 10000]) {
      const b = pacBayesBound(n);
      expect(b).to.be.closeTo((0.5 + Math.log((2 * Math.sqrt(n)) / 0.05)) / n, 1e-15);
      const p = klInverseLower(0.95, b);
      expect(p).to.be.below(0.95);
      if (p > 0) expect(binaryKl(0.95, p)).to.be.closeTo(b, 1e-9);
      expect(p).to.be.greaterThan(last);
      last = p;
    }
    // one observation certifies almost nothing: kl(q‖p) reaches the bound only near p = 0
    expect(klInverseLower(0.95, pacBayesBound(1))).to.be.within(0, 0.05);
  });

  it('Λ empirical is the weighted geometric mean with soundness and containment weighted 2', () => {
    const e = evaluate(strong, [zone], undefined, Date.now());
    let num = 0;
    for (const a of AXES) num += (a.name === 'soundness' || a.name === 'containment' ? 2 : 1) * Math.log(e.axes[a.name]!);
    expect(e.lambdaEmpirical).to.be.closeTo(Math.exp(num / 15), 1e-5);
    expect(Object.keys(e.axes)).to.have.length(13);
    for (const v of Object.values(e.axes)) expect(v).to.be.within(0, 1);
    expect(weightedGeometricMean({ ...Object.fromEntries(AXES.map((a) => [a.name, 0.5])) })).to.be.closeTo(0.5, 1e-12);
  });

  it('decides ALLOW at λ ≥ 0.90, REVIEW at ≥ 0.70, DENY below; λ = min(empirical, floor)', () => {
    expect([decide(0.9), decide(0.8999), decide(0.7), decide(0.6999)]).to.deep.equal(['ALLOW', 'REVIEW', 'REVIEW', 'DENY']);
    const e = evaluate({ ...strong, ts_utc: new Date().toISOString() }, [zone], { lat: 36.4999, lon: -115.1, atMs: Date.now() - 1000 }, Date.now());
    expect(e.lambda).to.equal(Math.min(e.lambdaEmpirical, e.pacBayes.certified_floor));
    expect(e.decision).to.equal('ALLOW');
  });

  it('computes the geofence itself: inside a zone gives DENY with a geofence breach', () => {
    const inside = evaluate({ ...strong, lat: 36.1, lon: -115.1 }, [zone], undefined, Date.now());
    expect(inside.geofence.inside).to.equal(true);
    expect(inside.decision).to.equal('DENY');
    expect(inside.breaches[0]).to.deep.equal({ rule: 'geofence', zone: 'nf-test' });
    expect(evaluate(strong, [], undefined, Date.now()).geofence.inside).to.equal(null);
    expect(pointInPolygon({ lat: 36.1, lon: -115.1 }, ringFromLatLon(zone.polygon))).to.equal(true);
    // 0.01° of latitude north of the edge is ~1.11 km
    expect(distanceToPolygonM({ lat: 36.21, lon: -115.1 }, ringFromLatLon(zone.polygon))).to.be.closeTo(1112, 5);
  });

  it('absent evidence scores low, never high', () => {
    const bare = evaluate({ track_id: 'x', lat: 36.5, lon: -115.1 }, [zone], undefined, Date.now());
    const full = evaluate(strong, [zone], undefined, Date.now());
    expect(bare.lambdaEmpirical).to.be.below(full.lambdaEmpirical);
    expect(bare.decision).to.equal('DENY');
    for (const a of ['identity', 'signal_strength', 'source_reliability']) expect(bare.axes[a]).to.be.below(full.axes[a]!);
    expect(bare.breaches.map((b) => b.axis)).to.include('identity');
  });
});

describe('verdict evaluation, every field', () => {
  const NOW = Date.parse('2025-06-01T12:00:00.000Z');
  const r6 = (x: number): number => Math.round(x * 1e6) / 1e6;

  it('reports each axis rounded to 6 digits, the bound and floor for n, and λ = min(empirical, floor) rounded', () => {
    const f = { ...strong, n_observations: 40, rssi_dbm: -61.2345678 };
    const e = evaluate(f, [zone], undefined, NOW);
    expect(e.axes.signal_strength).to.equal(r6((100 - 61.2345678) / 60));
    const bound = pacBayesBound(40);
    const floor = klInverseLower(e.lambdaEmpirical, bound);
    expect(e.pacBayes).to.deep.include({ n: 40, kl_posterior_prior: 0.5, delta: 0.05, bound: r6(bound) });
    // the floor is computed from the unrounded empirical mean: equal to 6 digits
    expect(e.pacBayes.certified_floor).to.be.closeTo(r6(floor), 2e-6);
    expect(e.lambda).to.equal(Math.min(e.lambdaEmpirical, e.pacBayes.certified_floor));
    expect(e.lambda).to.be.below(e.lambdaEmpirical);
    expect(e.lambdaFloor).to.equal(0.7);
    // without n_observations the certificate is for n = 1
    expect(evaluate({ ...f, n_observations: undefined }, [zone], undefined, NOW).pacBayes.n).to.equal(1);
  });

  it('lists exactly the breached axes (value < limit) after a geofence breach, with value and limit', () => {
    // inside the zone, no source, rssi -95 (signal 1/12 < 0.2), altitude 200 m (1/3 < 0.5)
    const e = evaluate({ track_id: 'zz', lat: 36.1, lon: -115.1, alt_m: 200, rssi_dbm: -95 }, [zone], undefined, NOW);
    expect(e.breaches).to.deep.equal([
      { rule: 'geofence', zone: 'nf-test' },
      { rule: 'axis', axis: 'containment', value: 0, limit: 0.5 },
      { rule: 'axis', axis: 'identity', value: 0.1, limit: 0.5 },
      { rule: 'axis', axis: 'source_reliability', value: 0.2, limit: 0.3 },
      { rule: 'axis', axis: 'signal_strength', value: r6(5 / 60), limit: 0.2 },
      { rule: 'axis', axis: 'corroboration', value: r6(1 - Math.exp(-0.2)), limit: 0.3 },
      { rule: 'axis', axis: 'altitude_compliance', value: r6(1 / 3), limit: 0.5 },
      { rule: 'axis', axis: 'speed_compliance', value: 0.3, limit: 0.5 },
      { rule: 'axis', axis: 'protocol_conformance', value: 0.2, limit: 0.5 },
    ]);
    expect(e.geofence.inside).to.equal(true);
    expect(e.geofence.zone).to.equal('nf-test');
    // 0.1° of longitude to the east or west edge at 36.1° N, rounded to 0.1 m
    expect(e.geofence.distance_m).to.equal(Math.round(0.1 * (Math.PI / 180) * 6_371_008.8 * Math.cos((36.1 * Math.PI) / 180) * 10) / 10);
    // an axis exactly at its limit is not a breach (signal 0.2 at rssi -88)
    const atLimit = evaluate({ ...strong, rssi_dbm: -88 }, [zone], undefined, NOW);
    expect(atLimit.axes.signal_strength).to.equal(0.2);
    expect(atLimit.breaches.map((b) => b.axis)).to.not.include('signal_strength');
  });

  it('outside every zone: distance to the nearest one rounded to 0.1 m, inside false, zone null', () => {
    const e = evaluate(strong, [zone], undefined, NOW);
    expect(e.geofence).to.deep.equal({ inside: false, zone: null, distance_m: Math.round(distanceToPolygonM({ lat: 36.5, lon: -115.1 }, ringFromLatLon(zone.polygon)) * 10) / 10 });
    expect(evaluate(strong, [], undefined, NOW).geofence).to.deep.equal({ inside: null, zone: null, distance_m: null });
    expect(e.breaches).to.deep.equal([]);
  });
});
