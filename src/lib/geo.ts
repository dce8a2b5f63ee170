/**
 * Geometry on the WGS-84 sphere, one copy for every feature. Points are `{lat, lon}` objects;
 * polygon rings are `[lon, lat]` pairs (GeoJSON order, RFC 7946 §3.1.1) everywhere in code, so
 * inputs documented as `[lat, lon]` (the no-fly-zone config) are swapped once where they are read.
 */

/** IUGG mean Earth radius in metres. */
export const EARTH_RADIUS_M = 6_371_008.8;
/** Mean Earth radius in nautical miles, as the voyage views document it (6,371 km / 1.852). */
export const EARTH_RADIUS_NM = 3440.065;

export interface LatLon {
  lat: number;
  lon: number;
}

/** A polygon vertex: [lon, lat] degrees. */
export type LonLat = readonly [number, number];

const RAD = Math.PI / 180;

/** Great-circle angle between two points, in radians (haversine formula). */
export function centralAngle(a: LatLon, b: LatLon): number {
  const dLat = (b.lat - a.lat) * RAD;
  const dLon = (b.lon - a.lon) * RAD;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * RAD) * Math.cos(b.lat * RAD) * Math.sin(dLon / 2) ** 2;
  return 2 * Math.asin(Math.min(1, Math.sqrt(h)));
}

export function haversineM(a: LatLon, b: LatLon): number {
  return EARTH_RADIUS_M * centralAngle(a, b);
}

export function haversineNm(a: LatLon, b: LatLon): number {
  return EARTH_RADIUS_NM * centralAngle(a, b);
}

/** Initial bearing from a to b, degrees clockwise from true north in [0, 360). */
export function bearingDeg(a: LatLon, b: LatLon): number {
  const y = Math.sin((b.lon - a.lon) * RAD) * Math.cos(b.lat * RAD);
  const x = Math.cos(a.lat * RAD) * Math.sin(b.lat * RAD) - Math.sin(a.lat * RAD) * Math.cos(b.lat * RAD) * Math.cos((b.lon - a.lon) * RAD);
  return (Math.atan2(y, x) / RAD + 360) % 360;
}

/** Even–odd ray casting in the lon/lat plane (fine for zones that do not span a pole or the antimeridian). */
export function pointInPolygon(p: LatLon, ring: readonly LonLat[]): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i]!;
    const [xj, yj] = ring[j]!;
    if (yi > p.lat !== yj > p.lat && p.lon < ((xj - xi) * (p.lat - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/** Metres from the point to the nearest ring edge, on the local equirectangular plane (zones are small). */
export function distanceToPolygonM(p: LatLon, ring: readonly LonLat[]): number {
  const cos = Math.cos(p.lat * RAD);
  let best = Infinity;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    // plane coordinates of the edge's ends, relative to p (no tuple per vertex: every verdict runs this)
    const ax = (ring[j]![0] - p.lon) * RAD * EARTH_RADIUS_M * cos;
    const ay = (ring[j]![1] - p.lat) * RAD * EARTH_RADIUS_M;
    const bx = (ring[i]![0] - p.lon) * RAD * EARTH_RADIUS_M * cos;
    const by = (ring[i]![1] - p.lat) * RAD * EARTH_RADIUS_M;
    const dx = bx - ax;
    const dy = by - ay;
    const len2 = dx * dx + dy * dy;
    const t = len2 === 0 ? 0 : Math.max(0, Math.min(1, -(ax * dx + ay * dy) / len2));
    best = Math.min(best, Math.hypot(ax + t * dx, ay + t * dy));
  }
  return best;
}

/** A `[lat, lon]` ring (as the no-fly-zone config documents it) in code's `[lon, lat]` order. */
export function ringFromLatLon(ring: readonly (readonly [number, number])[]): LonLat[] {
  return ring.map(([lat, lon]) => [lon, lat] as const);
}
