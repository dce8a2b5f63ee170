/**
 * Voyage polylines: lengths (haversine, R = 3440.065 nm), great-circle interpolation and sampling
 * along the legs. Distances and point-in-polygon come from src/lib/geo.ts.
 */
import { EARTH_RADIUS_NM, haversineNm, type LatLon } from '../lib/geo.js';

const rad = (d: number): number => (d * Math.PI) / 180;
const deg = (r: number): number => (r * 180) / Math.PI;

export function polylineNm(points: readonly LatLon[]): number {
  let sum = 0;
  for (let i = 1; i < points.length; i++) sum += haversineNm(points[i - 1]!, points[i]!);
  return sum;
}

/** The point a fraction f of the way along the great circle from a to b (slerp on unit vectors). */
export function greatCirclePoint(a: LatLon, b: LatLon, f: number): LatLon {
  const d = haversineNm(a, b) / EARTH_RADIUS_NM;
  if (d < 1e-12) return { lat: a.lat, lon: a.lon };
  const sa = Math.sin((1 - f) * d) / Math.sin(d);
  const sb = Math.sin(f * d) / Math.sin(d);
  const [la1, lo1, la2, lo2] = [rad(a.lat), rad(a.lon), rad(b.lat), rad(b.lon)];
  const x = sa * Math.cos(la1) * Math.cos(lo1) + sb * Math.cos(la2) * Math.cos(lo2);
  const y = sa * Math.cos(la1) * Math.sin(lo1) + sb * Math.cos(la2) * Math.sin(lo2);
  const z = sa * Math.sin(la1) + sb * Math.sin(la2);
  return { lat: deg(Math.atan2(z, Math.hypot(x, y))), lon: deg(Math.atan2(y, x)) };
}

/** The point `distanceNm` along a polyline of great-circle legs (clamped to its ends). */
export function pointAlong(points: readonly LatLon[], distanceNm: number): LatLon {
  let left = Math.max(0, distanceNm);
  for (let i = 1; i < points.length; i++) {
    const leg = haversineNm(points[i - 1]!, points[i]!);
    if (left <= leg) return greatCirclePoint(points[i - 1]!, points[i]!, leg === 0 ? 0 : left / leg);
    left -= leg;
  }
  const last = points[points.length - 1]!;
  return { lat: last.lat, lon: last.lon };
}

/** Points every `stepNm` (and at each vertex) along the polyline: used to test legs against areas. */
export function samplePolyline(points: readonly LatLon[], stepNm: number): LatLon[] {
  const out: LatLon[] = [];
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1]!;
    const b = points[i]!;
    const n = Math.max(1, Math.ceil(haversineNm(a, b) / stepNm));
    for (let k = 0; k < n; k++) out.push(greatCirclePoint(a, b, k / n));
  }
  if (points.length) out.push(points[points.length - 1]!);
  return out;
}
