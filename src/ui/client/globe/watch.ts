/**
 * Entry alerts on the page: the operator watches zones (every target entering one alerts) or
 * tracks (the track entering any zone alerts). An alert fires on the edge from outside, or first
 * seen, to inside; a target that stays inside does not alert again, and one that leaves can alert
 * again when it re-enters. Pure: the page calls `observe` with each new position it receives.
 */

export interface Zone {
  name: string;
  /** [lat, lon] pairs, as /edge/3d sends them. */
  polygon: [number, number][];
}

export interface Entry {
  key: string;
  label: string;
  zone: string;
  lon: number;
  lat: number;
  /** Why it alerted: the zone is watched, the track is, or both. */
  because: 'zone' | 'track' | 'zone+track';
  atMs: number;
}

/** Even-odd ray casting in the longitude/latitude plane: right for zones a few kilometres wide. */
export function insidePolygon(lon: number, lat: number, polygon: readonly [number, number][]): boolean {
  let inside = false;
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    const [latI, lonI] = polygon[i]!;
    const [latJ, lonJ] = polygon[j]!;
    if (latI > lat !== latJ > lat && lon < ((lonJ - lonI) * (lat - latI)) / (latJ - latI) + lonI) inside = !inside;
  }
  return inside;
}

/** The centroid of a zone's vertices, [lon, lat]: where its site marker and range rings go. */
export function zoneSite(z: Zone): [number, number] {
  let lat = 0;
  let lon = 0;
  for (const [a, o] of z.polygon) {
    lat += a;
    lon += o;
  }
  return [lon / z.polygon.length, lat / z.polygon.length];
}

export class Watcher {
  readonly zones = new Set<string>();
  readonly tracks = new Set<string>();
  /** Zones each target was inside at its last position. */
  private readonly inside = new Map<string, Set<string>>();
  private readonly cap: number;

  constructor(cap = 20_000) {
    this.cap = cap;
  }

  get active(): boolean {
    return this.zones.size > 0 || this.tracks.size > 0;
  }

  /** Records a target's new position; returns the alerts it raises (none when nothing is watched). */
  observe(key: string, label: string, lon: number, lat: number, zones: readonly Zone[], atMs: number): Entry[] {
    const now = new Set<string>();
    for (const z of zones) if (insidePolygon(lon, lat, z.polygon)) now.add(z.name);
    const before = this.inside.get(key);
    this.inside.delete(key);
    if (now.size) this.inside.set(key, now);
    // bounded: the oldest targets are forgotten first (they re-alert only if seen entering again)
    if (this.inside.size > this.cap) this.inside.delete(this.inside.keys().next().value!);
    const out: Entry[] = [];
    for (const zone of now) {
      if (before?.has(zone)) continue;
      const byZone = this.zones.has(zone);
      const byTrack = this.tracks.has(key);
      if (byZone || byTrack) out.push({ key, label, zone, lon, lat, because: byZone && byTrack ? 'zone+track' : byZone ? 'zone' : 'track', atMs });
    }
    return out;
  }

  /** Forgets a target that left the picture (an aircraft no longer reported). */
  forget(key: string): void {
    this.inside.delete(key);
  }
}
