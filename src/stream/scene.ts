/**
 * The 3-D edge scene: the latest state of each track among recent verdicts (a ring buffer), in
 * local East-North-Up metres around the sensor site, with the no-fly zones as prisms.
 */
import type { NoFlyZone } from '../ledger/ledger.config.js';
import { Ring } from '../lib/ring.js';
import type { LedgerNode } from '../ledger/ledger.js';
import { RECEIPT_KIND } from '../ledger/receipt.js';
import { nodeVerdict } from '../verdicts/detail.js';
import type { Decision } from '../verdicts/evaluate.js';
import { SENSOR } from './flight.js';
import type { SensorSite } from './stream.config.js';
import { EARTH_RADIUS_M } from '../lib/geo.js';


export function enu(lat: number, lon: number, altM: number): { e: number; n: number; u: number } {
  const rad = Math.PI / 180;
  return {
    e: Math.round((lon - SENSOR.lon) * rad * EARTH_RADIUS_M * Math.cos(SENSOR.lat * rad) * 10) / 10,
    n: Math.round((lat - SENSOR.lat) * rad * EARTH_RADIUS_M * 10) / 10,
    u: Math.round((altM - SENSOR.alt_m) * 10) / 10,
  };
}

/** One verdict of the scene, from its ledger node (the signed receipt and the frame stored with it). */
export interface SceneEntry {
  trackId: string;
  source: string | null;
  lat: number;
  lon: number;
  altM: number | null;
  headingDeg: number | null;
  speedMps: number | null;
  lambda: number;
  decision: Decision;
  geofenceInside: boolean | null;
  index: number;
  nodeDigest: string;
  tsUtc: string;
  simulated: boolean;
}

/** The scene entry of a receipt node whose frame is known; null for other nodes (`own`: appended by this process). */
export function sceneEntry(node: LedgerNode, own = false): SceneEntry | null {
  if (node.kind !== RECEIPT_KIND) return null;
  const { receipt, detail } = nodeVerdict(node, own);
  if (!detail) return null;
  const f = detail.frame;
  return {
    trackId: f.track_id,
    source: f.source ?? null,
    lat: f.lat,
    lon: f.lon,
    altM: f.alt_m ?? null,
    headingDeg: f.heading_deg ?? null,
    speedMps: f.speed_mps ?? null,
    lambda: receipt.lambda,
    decision: receipt.decision as Decision,
    geofenceInside: receipt.geofence_inside,
    index: node.index,
    nodeDigest: node.nodeDigest.toString('hex'),
    tsUtc: node.tsUtc,
    simulated: node.simulated,
  };
}

/**
 * The latest verdicts of the shared ledger, fed in index order from every node the ledger applies
 * (this replica's and the others'), so every replica holding the same nodes serves the same scene.
 */
export class EdgeScene {
  private readonly recent: Ring<SceneEntry>;

  constructor(
    private readonly size: number,
    private readonly zones: readonly NoFlyZone[],
    private readonly sensors: readonly SensorSite[] = [],
  ) {
    this.recent = new Ring(size);
  }

  /** Fills the buffer from the newest nodes of a ledger opened at start (at most `scanMax` read back). */
  backfill(get: (index: number) => LedgerNode | undefined, ledgerSize: number, scanMax = this.size * 4): void {
    const found: SceneEntry[] = [];
    for (let i = ledgerSize - 1; i >= Math.max(0, ledgerSize - scanMax) && found.length < this.size; i--) {
      const node = get(i);
      const entry = node ? sceneEntry(node) : null;
      if (entry) found.push(entry);
    }
    for (let k = found.length - 1; k >= 0; k--) this.recent.push(found[k]!);
  }

  add(node: LedgerNode, own = false): void {
    const entry = sceneEntry(node, own);
    if (entry) this.recent.push(entry);
  }

  document(ledgerSize: number): Record<string, unknown> {
    const latest = new Map<string, SceneEntry>();
    const all = this.recent.toArray();
    for (const v of all) latest.set(v.trackId, v);
    const decisions = { ALLOW: 0, REVIEW: 0, DENY: 0 };
    for (const v of all) decisions[v.decision]++;
    return {
      schema: 'svc.edge-scene/v1',
      // the newest verdict's time: the scene is a function of the ledger, not of the replica's clock
      generated_at: all.at(-1)?.tsUtc ?? new Date(0).toISOString(),
      frame: { kind: 'ENU', units: 'm', origin: SENSOR },
      verdicts_in_buffer: all.length,
      decisions,
      ledger_size: ledgerSize,
      tracks: [...latest.values()].map((v) => ({
        track_id: v.trackId,
        source: v.source,
        position: { lat: v.lat, lon: v.lon, alt_m: v.altM, enu: enu(v.lat, v.lon, v.altM ?? SENSOR.alt_m) },
        heading_deg: v.headingDeg,
        speed_mps: v.speedMps,
        lambda: v.lambda,
        decision: v.decision,
        geofence_inside: v.geofenceInside,
        ledger_index: v.index,
        node_digest: v.nodeDigest,
        ts_utc: v.tsUtc,
        simulated: v.simulated,
      })),
      zones: this.zones.map((z) => ({ id: z.id, name: z.name, polygon: z.polygon, enu: z.polygon.map(([la, lo]) => enu(la, lo, SENSOR.alt_m)) })),
      sensors: this.sensors.map((x) => ({ ...x, enu: enu(x.lat, x.lon, x.alt_m ?? SENSOR.alt_m) })),
      honesty: 'Built from the shared ledger: verdicts really evaluated, signed and appended (by any replica); tracks marked simulated come from the simulated flight.',
    };
  }
}
