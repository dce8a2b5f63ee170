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
