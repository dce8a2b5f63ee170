/** Which no-fly zone a fix is in, or how far it is from the nearest (geometry in src/lib/geo.ts). */
import { distanceToPolygonM, pointInPolygon, ringFromLatLon, type LonLat } from '../lib/geo.js';
import type { NoFlyZone } from '../ledger/ledger.config.js';

/** Zones come from config as [lat, lon] rings; each is swapped to [lon, lat] once. */
const rings = new WeakMap<NoFlyZone, LonLat[]>();
function ringOf(z: NoFlyZone): LonLat[] {
  let r = rings.get(z);
  if (!r) rings.set(z, (r = ringFromLatLon(z.polygon)));
  return r;
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
  const p = { lat, lon };
  let nearest = Infinity;
  for (const z of zones) {
    const ring = ringOf(z);
    if (pointInPolygon(p, ring)) return { inside: true, zone: z.id, distanceM: distanceToPolygonM(p, ring) };
    nearest = Math.min(nearest, distanceToPolygonM(p, ring));
  }
  return { inside: false, zone: null, distanceM: nearest };
}
