/**
 * The 3-D edge scene: the latest state of each track among recent verdicts (a ring buffer), in
 * local East-North-Up metres around the sensor site, with the no-fly zones as prisms.
 */
import type { NoFlyZone } from '../ledger/ledger.config.js';
import { Ring } from '../lib/ring.js';
import type { Verdict } from '../verdicts/verdict-service.js';
import { SENSOR } from './flight.js';
import { EARTH_RADIUS_M } from '../lib/geo.js';


export function enu(lat: number, lon: number, altM: number): { e: number; n: number; u: number } {
  const rad = Math.PI / 180;
  return {
    e: Math.round((lon - SENSOR.lon) * rad * EARTH_RADIUS_M * Math.cos(SENSOR.lat * rad) * 10) / 10,
    n: Math.round((lat - SENSOR.lat) * rad * EARTH_RADIUS_M * 10) / 10,
    u: Math.round((altM - SENSOR.alt_m) * 10) / 10,
  };
}

export class EdgeScene {
  private readonly recent: Ring<Verdict>;

  constructor(
    size: number,
    private readonly zones: readonly NoFlyZone[],
  ) {
    this.recent = new Ring(size);
  }

  add(v: Verdict): void {
    this.recent.push(v);
  }

  document(ledgerSize: number): Record<string, unknown> {
    const latest = new Map<string, Verdict>();
    const all = this.recent.toArray();
    for (const v of all) latest.set(v.frame.track_id, v);
    const decisions = { ALLOW: 0, REVIEW: 0, DENY: 0 };
    for (const v of all) decisions[v.evaluation.decision]++;
    return {
      schema: 'svc.edge-scene/v1',
      generated_at: new Date().toISOString(),
      frame: { kind: 'ENU', units: 'm', origin: SENSOR },
      verdicts_in_buffer: all.length,
      decisions,
      ledger_size: ledgerSize,
      tracks: [...latest.values()].map((v) => ({
        track_id: v.frame.track_id,
        source: v.frame.source ?? null,
        position: { lat: v.frame.lat, lon: v.frame.lon, alt_m: v.frame.alt_m ?? null, enu: enu(v.frame.lat, v.frame.lon, v.frame.alt_m ?? SENSOR.alt_m) },
        heading_deg: v.frame.heading_deg ?? null,
        speed_mps: v.frame.speed_mps ?? null,
        lambda: v.evaluation.lambda,
        decision: v.evaluation.decision,
        geofence_inside: v.evaluation.geofence.inside,
        ledger_index: v.node.index,
        node_digest: v.node.nodeDigest.toString('hex'),
        ts_utc: v.node.tsUtc,
        simulated: v.simulated,
      })),
      zones: this.zones.map((z) => ({ id: z.id, name: z.name, polygon: z.polygon, enu: z.polygon.map(([la, lo]) => enu(la, lo, SENSOR.alt_m)) })),
      honesty: 'Built from verdicts really evaluated, signed and appended to the ledger; tracks marked simulated come from the simulated flight.',
    };
  }
}
