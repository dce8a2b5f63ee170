// The geofence against independent geometry: a concave ring whose notch is outside, and distances
// to an edge's interior and to its end points on a hand-built local plane.
import { expect } from 'chai';
import { distanceToPolygonM as distanceTo, pointInPolygon, ringFromLatLon } from '../../src/lib/geo.js';
import { checkGeofence } from '../../src/verdicts/geofence.js';
import type { NoFlyZone } from '../../src/ledger/ledger.config.js';

const R = 6_371_008.8;
const M_PER_DEG = (Math.PI / 180) * R;
// a square [0, 1]² in (lat, lon) degrees near the equator, and a U shape with a notch at lon 0.4–0.6, lat > 0.3
const square: [number, number][] = [[0, 0], [0, 1], [1, 1], [1, 0]];
const u: [number, number][] = [[0, 0], [0, 1], [1, 1], [1, 0.6], [0.3, 0.6], [0.3, 0.4], [1, 0.4], [1, 0]];

// the rings here are written [lat, lon] like the no-fly-zone config; the geometry takes [lon, lat]
const insidePolygon = (lat: number, lon: number, ring: [number, number][]): boolean => pointInPolygon({ lat, lon }, ringFromLatLon(ring));
const distanceToPolygonM = (lat: number, lon: number, ring: [number, number][]): number => distanceTo({ lat, lon }, ringFromLatLon(ring));

describe('geofence', () => {
  it('point in polygon by even–odd ray casting, including a concave notch', () => {
    expect(insidePolygon(0.5, 0.5, square)).to.equal(true);
    expect(insidePolygon(0.5, 1.5, square)).to.equal(false);
    expect(insidePolygon(0.5, -0.5, square)).to.equal(false);
    expect(insidePolygon(1.5, 0.5, square)).to.equal(false);
    expect(insidePolygon(-0.5, 0.5, square)).to.equal(false);
    expect(insidePolygon(0.2, 0.5, u)).to.equal(true);
    expect(insidePolygon(0.8, 0.5, u)).to.equal(false); // in the notch
    expect(insidePolygon(0.8, 0.2, u)).to.equal(true);
    expect(insidePolygon(0.8, 0.8, u)).to.equal(true);
    // a triangle whose hypotenuse decides: lon < 1 - lat inside
    const tri: [number, number][] = [[0, 0], [0, 1], [1, 0]];
    expect(insidePolygon(0.25, 0.7, tri)).to.equal(true);
    expect(insidePolygon(0.25, 0.8, tri)).to.equal(false);
    expect(insidePolygon(0.7, 0.25, tri)).to.equal(true);
    expect(insidePolygon(0.8, 0.25, tri)).to.equal(false);
    // a slope other than ±1: the crossing longitude divides by the edge's latitude span (lon < 2 − lat inside)
    const big: [number, number][] = [[0, 0], [0, 2], [2, 0]];
    expect(insidePolygon(0.5, 1.4, big)).to.equal(true);
    expect(insidePolygon(0.5, 1.6, big)).to.equal(false);
    expect(insidePolygon(1.5, 0.4, big)).to.equal(true);
    expect(insidePolygon(1.5, 0.6, big)).to.equal(false);
    // the ray passes exactly through vertices (lat 1 of a diamond): each vertex is counted once (half-open edges)
    const diamond: [number, number][] = [[0, 1], [1, 2], [2, 1], [1, 0]];
    expect(insidePolygon(1, 1, diamond)).to.equal(true);
    expect(insidePolygon(1, -0.5, diamond)).to.equal(false);
    expect(insidePolygon(1, 2.5, diamond)).to.equal(false);
    expect(insidePolygon(1, 1.999, diamond)).to.equal(true);
    // PNPOLY's convention on the boundary of the unit square: south and west edges in, north and east out
    expect([insidePolygon(0, 0.5, square), insidePolygon(0.5, 0, square), insidePolygon(1, 0.5, square), insidePolygon(0.5, 1, square)]).to.deep.equal([true, true, false, false]);
  });

  it('distance to the nearest edge: perpendicular inside an edge, to the vertex beyond its ends', () => {
    // 0.01° north of the top edge (lat 1) of the square, mid-edge: 0.01 degree of latitude
    expect(distanceToPolygonM(1.01, 0.5, square)).to.be.closeTo(0.01 * M_PER_DEG, 1e-6);
    // inside, 0.1° from the west edge (lon 0) and 0.2° from the south edge: the west edge is nearer, scaled by cos(lat)
    expect(distanceToPolygonM(0.2, 0.1, square)).to.be.closeTo(0.1 * M_PER_DEG * Math.cos((0.2 * Math.PI) / 180), 1e-6);
    // beyond the corner (1, 1): the vertex is nearest, on the plane centred at the point
    const lat = 1.003;
    const lon = 1.004;
    const cos = Math.cos((lat * Math.PI) / 180);
    expect(distanceToPolygonM(lat, lon, square)).to.be.closeTo(Math.hypot(0.004 * M_PER_DEG * cos, 0.003 * M_PER_DEG), 1e-6);
    // beyond the other end of the same edge (corner (0, 0))
    const c0 = Math.cos((-0.003 * Math.PI) / 180);
    expect(distanceToPolygonM(-0.003, -0.004, square)).to.be.closeTo(Math.hypot(0.004 * M_PER_DEG * c0, 0.003 * M_PER_DEG), 1e-6);
    // a repeated vertex (zero-length edge) does not break anything
    expect(distanceToPolygonM(1.01, 0.5, [[0, 0], [0, 1], [1, 1], [1, 1], [1, 0]])).to.be.closeTo(0.01 * M_PER_DEG, 1e-6);
    // a degenerate ring of one repeated point: distance to that point
    expect(distanceToPolygonM(0.01, 0, [[0, 0], [0, 0], [0, 0]])).to.be.closeTo(0.01 * M_PER_DEG, 1e-6);
  });

  it('checkGeofence: null without zones, the containing zone with its edge distance, else the nearest boundary', () => {
    const a: NoFlyZone = { id: 'a', name: 'a', polygon: square };
    const b: NoFlyZone = { id: 'b', name: 'b', polygon: [[2, 0], [2, 1], [3, 1], [3, 0]] };
    expect(checkGeofence(0.5, 0.5, [])).to.deep.equal({ inside: null, zone: null, distanceM: null });
    const inB = checkGeofence(2.5, 0.9, [a, b]);
    expect(inB.inside).to.equal(true);
    expect(inB.zone).to.equal('b');
    expect(inB.distanceM).to.be.closeTo(0.1 * M_PER_DEG * Math.cos((2.5 * Math.PI) / 180), 1e-6);
    // between the two: 0.2° from a's top edge, 0.8° from b's bottom edge; order of zones does not matter
    for (const zones of [[a, b], [b, a]]) {
      const g = checkGeofence(1.2, 0.5, zones);
      expect(g.inside).to.equal(false);
      expect(g.zone).to.equal(null);
      expect(g.distanceM).to.be.closeTo(0.2 * M_PER_DEG, 1e-6);
    }
  });
});
