/** The watched zones: polygons and circles, from the alerts config or, by default, the ledger's no-fly zones. */
import type { NoFlyZone } from '../ledger/ledger.config.js';
import { haversineM, pointInPolygon, type LatLon, type LonLat } from '../lib/geo.js';
import type { ZoneConfig } from './alerts.config.js';

/** A zone as GET /alerts lists it: a ring of [lon, lat] vertices, or a centre [lon, lat] and a radius. */
export type WatchedZone = { name: string; polygon: [number, number][] } | { name: string; center: [number, number]; radius_m: number };

export class Zones {
  constructor(readonly list: readonly WatchedZone[]) {}

  /** The configured zones, or the ledger's no-fly zones (their ids as names, [lat, lon] vertices swapped once here). */
  static from(configured: readonly ZoneConfig[] | null, noFly: readonly NoFlyZone[]): Zones {
    if (configured) return new Zones(configured.map((z) => ('polygon' in z ? { name: z.name, polygon: z.polygon.map(([lon, lat]) => [lon, lat] as [number, number]) } : { name: z.name, center: [z.center[0], z.center[1]], radius_m: z.radius_m })));
    return new Zones(noFly.map((z) => ({ name: z.id, polygon: z.polygon.map(([lat, lon]) => [lon, lat] as [number, number]) })));
  }

  /** Names of the zones that contain the point, in list order. */
  containing(p: LatLon): string[] {
    const out: string[] = [];
    for (const z of this.list) if (contains(z, p)) out.push(z.name);
    return out;
  }
}

function contains(z: WatchedZone, p: LatLon): boolean {
  if ('polygon' in z) return pointInPolygon(p, z.polygon as readonly LonLat[]);
  return haversineM(p, { lon: z.center[0], lat: z.center[1] }) <= z.radius_m;
}
