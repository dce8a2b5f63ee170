// Every trust axis recomputed by hand from its documented formula, at and either side of each
// threshold (a `<=` turned into `<`, or a constant changed, moves one of these values).
import { expect } from 'chai';
import { bearingDeg, haversineM } from '../../src/lib/geo.js';
import { AXES, scoreAxes, weightedGeometricMean } from '../../src/verdicts/axes.js';
import type { GeofenceResult } from '../../src/verdicts/geofence.js';
import type { TelemetryFrame } from '../../src/verdicts/telemetry.js';

const NOW = Date.parse('2025-06-01T12:00:00.000Z');
const noZones: GeofenceResult = { inside: null, zone: null, distanceM: null };
const bare: TelemetryFrame = { track_id: 'x', lat: 10, lon: 20 };
const axis = (f: Partial<TelemetryFrame>, name: string, opts: { geo?: GeofenceResult; prev?: { lat: number; lon: number; atMs: number }; now?: number } = {}): number =>
  scoreAxes({ ...bare, ...f }, opts.geo ?? noZones, opts.prev, opts.now ?? NOW)[name]!;
// metres per degree of latitude on the service's sphere (R = 6 371 008.8 m)
const M_PER_DEG = (2 * Math.PI * 6_371_008.8) / 360;

describe('verdict axes', () => {
  it('lists the 13 axes with weights 2 for soundness and containment, 1 otherwise, and their limits', () => {
    expect(AXES.map((a) => [a.name, a.weight, a.limit])).to.deep.equal([
      ['soundness', 2, 0.5], ['containment', 2, 0.5], ['identity', 1, 0.5], ['source_reliability', 1, 0.3],
      ['signal_strength', 1, 0.2], ['clock_sync', 1, 0.3], ['corroboration', 1, 0.3], ['altitude_compliance', 1, 0.5],
      ['speed_compliance', 1, 0.5], ['heading_consistency', 1, 0.3], ['freshness', 1, 0.3], ['track_continuity', 1, 0.3],
      ['protocol_conformance', 1, 0.5],
    ]);
    expect(Object.keys(scoreAxes(bare, noZones, undefined, NOW))).to.deep.equal(AXES.map((a) => a.name));
  });

  it('haversine and bearing: one degree of latitude, a quarter meridian, the antipode, the four compass points', () => {
    expect(haversineM({ lat: 0, lon: 0 }, { lat: 1, lon: 0 })).to.be.closeTo(M_PER_DEG, 1e-6);
    expect(haversineM({ lat: 0, lon: 0 }, { lat: 0, lon: 90 })).to.be.closeTo(90 * M_PER_DEG, 1e-6);
    // at the equator one degree of longitude is one degree of arc; at 60° N half (cos 60°) for small steps
    expect(haversineM({ lat: 60, lon: 0 }, { lat: 60, lon: 0.001 })).to.be.closeTo(0.001 * M_PER_DEG * 0.5, 1e-6);
    expect(haversineM({ lat: 0, lon: 0 }, { lat: 0, lon: 180 })).to.be.closeTo(180 * M_PER_DEG, 1e-6);
    expect(haversineM({ lat: 45, lon: 7 }, { lat: 45, lon: 7 })).to.equal(0);
    const o = { lat: 0, lon: 0 };
    expect(bearingDeg(o, { lat: 1, lon: 0 })).to.be.closeTo(0, 1e-12);
    expect(bearingDeg(o, { lat: 0, lon: 1 })).to.be.closeTo(90, 1e-12);
    expect(bearingDeg(o, { lat: -1, lon: 0 })).to.be.closeTo(180, 1e-12);
    expect(bearingDeg(o, { lat: 0, lon: -1 })).to.be.closeTo(270, 1e-12);
    // initial great-circle bearing from (0,0) to (1,1): atan2(sin 1°·cos 1°, sin 1°) by the formula
    const r = Math.PI / 180;
    expect(bearingDeg(o, { lat: 1, lon: 1 })).to.be.closeTo(Math.atan2(Math.sin(r) * Math.cos(r), Math.sin(r)) / r, 1e-12);
    // north-east from a non-zero latitude: the cos(lat) terms of the formula matter
    const a = { lat: 50, lon: 10 };
    const b = { lat: 51, lon: 12 };
    const y = Math.sin(2 * r) * Math.cos(51 * r);
    const x = Math.cos(50 * r) * Math.sin(51 * r) - Math.sin(50 * r) * Math.cos(51 * r) * Math.cos(2 * r);
    expect(bearingDeg(a, b)).to.be.closeTo(Math.atan2(y, x) / r, 1e-12);
  });

  it('soundness: altitude in [-100, 10000] and speed <= 150 each factor 1, else 0.2', () => {
    expect(axis({}, 'soundness')).to.equal(1);
    expect(axis({ alt_m: -100, speed_mps: 150 }, 'soundness')).to.equal(1);
    expect(axis({ alt_m: 10000 }, 'soundness')).to.equal(1);
    expect(axis({ alt_m: -100.5 }, 'soundness')).to.equal(0.2);
    expect(axis({ alt_m: 10000.5 }, 'soundness')).to.equal(0.2);
    expect(axis({ speed_mps: 150.5 }, 'soundness')).to.equal(0.2);
    expect(axis({ alt_m: 20000, speed_mps: 200 }, 'soundness')).to.be.closeTo(0.04, 1e-15);
  });

  it('containment: 0 inside, 0.5 + 0.5·min(1, d/2000 m) outside, 0.5 without zones', () => {
    expect(axis({}, 'containment')).to.equal(0.5);
    expect(axis({}, 'containment', { geo: { inside: true, zone: 'z', distanceM: 300 } })).to.equal(0);
    expect(axis({}, 'containment', { geo: { inside: false, zone: null, distanceM: 500 } })).to.equal(0.625);
    expect(axis({}, 'containment', { geo: { inside: false, zone: null, distanceM: 2000 } })).to.equal(1);
    expect(axis({}, 'containment', { geo: { inside: false, zone: null, distanceM: 5000 } })).to.equal(1);
  });

  it('identity and source reliability by source; authentication wins', () => {
    const id = (f: Partial<TelemetryFrame>): number[] => [axis(f, 'identity'), axis(f, 'source_reliability')];
    expect(id({})).to.deep.equal([0.1, 0.2]);
    expect(id({ source: 'OpenDroneID' })).to.deep.equal([0.45, 0.85]);
    expect(id({ source: 'ADS-B' })).to.deep.equal([0.6, 0.9]);
    expect(id({ source: 'MAVLink' })).to.deep.equal([0.35, 0.7]);
    expect(id({ source: 'MAVLink', id_authenticated: true })).to.deep.equal([1, 0.7]);
    expect(id({ id_authenticated: true })).to.deep.equal([1, 0.2]);
    expect(id({ source: 'ADS-B', id_authenticated: false })).to.deep.equal([0.6, 0.9]);
  });

  it('signal strength clamp((rssi + 100)/60, 0, 1), 0.2 absent; clock sync exp(-|skew|/2), 0.3 absent', () => {
    expect(axis({}, 'signal_strength')).to.equal(0.2);
    expect(axis({ rssi_dbm: -70 }, 'signal_strength')).to.be.closeTo(0.5, 1e-15);
    expect(axis({ rssi_dbm: -55 }, 'signal_strength')).to.be.closeTo(0.75, 1e-15);
    expect(axis({ rssi_dbm: -10 }, 'signal_strength')).to.equal(1);
    expect(axis({ rssi_dbm: -130 }, 'signal_strength')).to.equal(0);
    expect(axis({}, 'clock_sync')).to.equal(0.3);
    expect(axis({ timestamp_skew_s: 0 }, 'clock_sync')).to.equal(1);
    expect(axis({ timestamp_skew_s: -2 }, 'clock_sync')).to.be.closeTo(Math.exp(-1), 1e-15);
    expect(axis({ timestamp_skew_s: 4 }, 'clock_sync')).to.be.closeTo(Math.exp(-2), 1e-15);
  });

  it('corroboration 1 - exp(-n/5), absent counts as one observation', () => {
    expect(axis({}, 'corroboration')).to.be.closeTo(1 - Math.exp(-0.2), 1e-15);
    expect(axis({ n_observations: 10 }, 'corroboration')).to.be.closeTo(1 - Math.exp(-2), 1e-15);
  });

  it('altitude compliance 1 to 120 m, linear to 0 at 240 m; speed compliance 1 to 44.7 m/s, 0 at 89.4; 0.3 absent', () => {
    expect(axis({}, 'altitude_compliance')).to.equal(0.3);
    expect(axis({ alt_m: -50 }, 'altitude_compliance')).to.equal(1);
    expect(axis({ alt_m: 120 }, 'altitude_compliance')).to.equal(1);
    expect(axis({ alt_m: 150 }, 'altitude_compliance')).to.be.closeTo(0.75, 1e-15);
    expect(axis({ alt_m: 180 }, 'altitude_compliance')).to.be.closeTo(0.5, 1e-15);
    expect(axis({ alt_m: 300 }, 'altitude_compliance')).to.equal(0);
    expect(axis({}, 'speed_compliance')).to.equal(0.3);
    expect(axis({ speed_mps: 44.7 }, 'speed_compliance')).to.equal(1);
    expect(axis({ speed_mps: 44.7 * 1.25 }, 'speed_compliance')).to.be.closeTo(0.75, 1e-12);
    expect(axis({ speed_mps: 67.05 }, 'speed_compliance')).to.be.closeTo(0.5, 1e-12);
    expect(axis({ speed_mps: 120 }, 'speed_compliance')).to.equal(0);
  });

  it('heading consistency: hovering 1, against the bearing from the previous fix, first fix 0.8, absent 0.4', () => {
    // previous fix 0.01° due south (≈1.1 km): the bearing to this fix is 0° (north)
    const prev = { lat: 9.99, lon: 20, atMs: NOW - 100_000 };
    expect(axis({}, 'heading_consistency', { prev })).to.equal(0.4);
    expect(axis({ heading_deg: 90, speed_mps: 0.49 }, 'heading_consistency', { prev })).to.equal(1);
    expect(axis({ heading_deg: 90, speed_mps: 0.5 }, 'heading_consistency', { prev })).to.be.closeTo(0.5, 1e-9);
    expect(axis({ heading_deg: 90 }, 'heading_consistency', { prev })).to.be.closeTo(0.5, 1e-9);
    expect(axis({ heading_deg: 180 }, 'heading_consistency', { prev })).to.be.closeTo(0, 1e-9);
    expect(axis({ heading_deg: 0 }, 'heading_consistency', { prev })).to.be.closeTo(1, 1e-9);
    // the difference wraps: 350° and 10° are both 10° off north, 270° is 90° off (not 270°)
    expect(axis({ heading_deg: 350 }, 'heading_consistency', { prev })).to.be.closeTo(1 - 10 / 180, 1e-9);
    expect(axis({ heading_deg: 10 }, 'heading_consistency', { prev })).to.be.closeTo(1 - 10 / 180, 1e-9);
    expect(axis({ heading_deg: 270 }, 'heading_consistency', { prev })).to.be.closeTo(0.5, 1e-9);
    // previous fix due east: bearing 270° from it
    expect(axis({ heading_deg: 300 }, 'heading_consistency', { prev: { lat: 10, lon: 20.01, atMs: NOW - 1000 } })).to.be.closeTo(1 - 30 / 180, 1e-4);
    expect(axis({ heading_deg: 90 }, 'heading_consistency')).to.equal(0.8);
    // moved 1 m or less: no bearing to compare with
    expect(axis({ heading_deg: 90 }, 'heading_consistency', { prev: { lat: 10 - 0.5 / M_PER_DEG, lon: 20, atMs: NOW - 1000 } })).to.equal(0.8);
    expect(axis({ heading_deg: 90 }, 'heading_consistency', { prev: { lat: 10 - 1.5 / M_PER_DEG, lon: 20, atMs: NOW - 1000 } })).to.be.closeTo(0.5, 1e-6);
  });

  it('freshness exp(-age/30 s), 0 more than 5 s in the future, 1 up to then, 0.5 absent', () => {
    const at = (ms: number): string => new Date(ms).toISOString();
    expect(axis({}, 'freshness')).to.equal(0.5);
    expect(axis({ ts_utc: at(NOW) }, 'freshness')).to.equal(1);
    expect(axis({ ts_utc: at(NOW - 30_000) }, 'freshness')).to.be.closeTo(Math.exp(-1), 1e-15);
    expect(axis({ ts_utc: at(NOW - 60_000) }, 'freshness')).to.be.closeTo(Math.exp(-2), 1e-15);
    expect(axis({ ts_utc: at(NOW + 4_000) }, 'freshness')).to.equal(1);
    expect(axis({ ts_utc: at(NOW + 5_000) }, 'freshness')).to.equal(1);
    expect(axis({ ts_utc: at(NOW + 5_001) }, 'freshness')).to.equal(0);
  });

  it('track continuity exp(-|implied - reported| / max(5, reported)), 0.6 first fix, 0.5 without elapsed time', () => {
    // 0.01° of latitude in 100 s: implied speed d/100
    const d = haversineM({ lat: 9.99, lon: 20 }, { lat: 10, lon: 20 });
    const prev = { lat: 9.99, lon: 20, atMs: NOW - 100_000 };
    expect(axis({}, 'track_continuity')).to.equal(0.6);
    expect(axis({ speed_mps: 11 }, 'track_continuity', { prev })).to.be.closeTo(Math.exp(-Math.abs(d / 100 - 11) / 11), 1e-12);
    expect(axis({ speed_mps: 2 }, 'track_continuity', { prev })).to.be.closeTo(Math.exp(-Math.abs(d / 100 - 2) / 5), 1e-12);
    // no reported speed: compared with 150 m/s
    expect(axis({}, 'track_continuity', { prev })).to.be.closeTo(Math.exp(-Math.abs(d / 100 - 150) / 150), 1e-12);
    // the frame's own timestamp sets the elapsed time when present
    const ts = new Date(NOW - 50_000).toISOString();
    expect(axis({ speed_mps: 11, ts_utc: ts }, 'track_continuity', { prev })).to.be.closeTo(Math.exp(-Math.abs(d / 50 - 11) / 11), 1e-12);
    expect(axis({ speed_mps: 11 }, 'track_continuity', { prev: { ...prev, atMs: NOW } })).to.equal(0.5);
    expect(axis({ speed_mps: 11 }, 'track_continuity', { prev: { ...prev, atMs: NOW + 1 } })).to.equal(0.5);
  });

  it('protocol conformance: id format of the source 1, else 0.4, no source 0.2', () => {
    const p = (source: TelemetryFrame['source'], track_id: string): number => axis({ source, track_id }, 'protocol_conformance');
    expect(axis({ track_id: 'a1b2c3' }, 'protocol_conformance')).to.equal(0.2);
    expect([p('ADS-B', 'A1B2C3'), p('ADS-B', 'a1b2c'), p('ADS-B', 'g1b2c3')]).to.deep.equal([1, 0.4, 0.4]);
    expect([p('OpenDroneID', '1581F5FKD228400A'), p('OpenDroneID', '1581O5FKD')]).to.deep.equal([1, 0.4]);
    expect([p('MAVLink', 'sys-255'), p('MAVLink', 'mav:1'), p('MAVLink', '256'), p('MAVLink', '0')]).to.deep.equal([1, 1, 0.4, 0.4]);
  });

  it('the weighted geometric mean: weights 2/2/1…, an axis at 0 floored at 1e-6', () => {
    const all = (v: number): Record<string, number> => Object.fromEntries(AXES.map((a) => [a.name, v]));
    expect(weightedGeometricMean(all(0.5))).to.be.closeTo(0.5, 1e-12);
    // soundness 0.25, rest 1: exp(2·ln 0.25 / 15)
    expect(weightedGeometricMean({ ...all(1), soundness: 0.25 })).to.be.closeTo(Math.exp((2 * Math.log(0.25)) / 15), 1e-12);
    expect(weightedGeometricMean({ ...all(1), identity: 0.25 })).to.be.closeTo(Math.exp(Math.log(0.25) / 15), 1e-12);
    expect(weightedGeometricMean({ ...all(1), containment: 0 })).to.be.closeTo(Math.exp((2 * Math.log(1e-6)) / 15), 1e-15);
    // keys outside AXES are ignored
    expect(weightedGeometricMean({ ...all(1), extra: 0.001 })).to.equal(1);
  });
});
