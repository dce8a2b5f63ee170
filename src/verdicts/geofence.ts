/** Point-in-polygon (even–odd ray casting) and distance to a polygon edge on a local tangent plane. */
import type { NoFlyZone } from '../ledger/ledger.config.js';

const EARTH_RADIUS_M = 6_371_008.8;

export function insidePolygon(lat: number, lon: number, ring: readonly [number, number][]): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [yi, xi] = ring[i]!;
    const [yj, xj] = ring[j]!;
    if (yi > lat !== yj > lat && lon < ((xj - xi) * (lat - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/** Metres from the point to the nearest polygon edge (equirectangular projection: zones are small). */
export function distanceToPolygonM(lat: number, lon: number, ring: readonly [number, number][]): number {
  const cos = Math.cos((lat * Math.PI) / 180);
  const toXY = ([la, lo]: readonly [number, number]): [number, number] => [(((lo - lon) * Math.PI) / 180) * EARTH_RADIUS_M * cos, (((la - lat) * Math.PI) / 180) * EARTH_RADIUS_M];
  let best = Infinity;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [ax, ay] = toXY(ring[j]!);
    const [bx, by] = toXY(ring[i]!);
    const dx = bx - ax;
    const dy = by - ay;
    const len2 = dx * dx + dy * dy;
    const t = len2 === 0 ? 0 : Math.max(0, Math.min(1, -(ax * dx + ay * dy) / len2));
    best = Math.min(best, Math.hypot(ax + t * dx, ay + t * dy));
  }
  return best;
}

export interface GeofenceResult {
  /** null when no zone is configured: the service cannot say either way. */
  inside: boolean | null;
  zone: string | null;
  /** Distance to the nearest zone boundary, null without zones. */
  distanceM: number | null;
}

export function checkGeofence(lat: number, lon: number, zones: readonly NoFlyZone[]): GeofenceResult {
  if (zones.length === 0) return { inside: null, zone: null, distanceM: null };
  let nearest = Infinity;
  for (const z of zones) {
    if (insidePolygon(lat, lon, z.polygon)) return { inside: true, zone: z.id, distanceM: distanceToPolygonM(lat, lon, z.polygon) };
    nearest = Math.min(nearest, distanceToPolygonM(lat, lon, z.polygon));
  }
  return { inside: false, zone: null, distanceM: nearest };
}
