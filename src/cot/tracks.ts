/**
 * Where exported tracks come from. A `TrackSource` is a function returning the current tracks of
 * one producer; each app's CoT plugin owns one `TrackRegistry` and provides it. The CoT plugin
 * registers the sample maritime tracks itself; the stream plugin (which needs 'cot') registers the
 * simulated flight's drones:
 *
 *   cot.tracks.register('flight', () => drones.map((d) => ({ id: d.id, callsign: d.id,
 *     cotType: 'a-u-A-M-F-Q', lat, lon, haeM: null, courseDeg, speedMps, simulated: true })));
 *
 * Ids must be unique across sources (the first source to list an id wins).
 */

export interface Track {
  /** Path id of `/cot/export/{track_id}`; exported as CoT uid `svc-track-<id>`. */
  id: string;
  callsign: string;
  /** CoT type, e.g. `a-u-A-M-F-Q` (unknown military drone), `a-n-S-X-M-C` (neutral cargo ship). */
  cotType: string;
  lat: number;
  lon: number;
  /** Height above the WGS84 ellipsoid, metres; null when not known (exported as 9999999.0). */
  haeM: number | null;
  /** Circular / linear error, metres; null when not known. */
  ceM?: number | null;
  leM?: number | null;
  /** Degrees true; normalised to [0, 360) on export. */
  courseDeg: number | null;
  /** Metres per second. */
  speedMps: number | null;
  /** Climb angle, degrees; exported only when known. */
  slopeDeg?: number | null;
  /** Simulated tracks are exported with how="m-s" and opex="s". */
  simulated: boolean;
  remarks?: string;
}

export type TrackSource = () => readonly Track[];

/** The track sources of one app: registered by features (sample vessels, the simulated flight). */
export class TrackRegistry {
  private readonly sources = new Map<string, TrackSource>();

  register(name: string, source: TrackSource): void {
    if (this.sources.has(name)) throw new Error(`CoT track source '${name}' registered twice`);
    this.sources.set(name, source);
  }

  /** Every registered track, in registration order, ids de-duplicated (first wins). */
  all(): Track[] {
    const seen = new Set<string>();
    const out: Track[] = [];
    for (const source of this.sources.values()) {
      for (const t of source()) {
        if (seen.has(t.id)) continue;
        seen.add(t.id);
        out.push(t);
      }
    }
    return out;
  }
}

const KNOT = 0.514444;

/**
 * Sample maritime tracks: fixed, invented vessels in the Strait of Gibraltar, named SAMPLE so no
 * one mistakes them for real ships. Positions do not move; course and speed are descriptive.
 */
export const SAMPLE_MARITIME: readonly Track[] = [
  { id: 'mar-001', callsign: 'SAMPLE CARGO 1', cotType: 'a-n-S-X-M-C', lat: 35.9621, lon: -5.6183, haeM: null, courseDeg: 265, speedMps: 14 * KNOT, simulated: true },
  { id: 'mar-002', callsign: 'SAMPLE TANKER 2', cotType: 'a-n-S-X-M-O', lat: 35.9412, lon: -5.3377, haeM: null, courseDeg: 84.5, speedMps: 11 * KNOT, simulated: true },
  { id: 'mar-003', callsign: 'SAMPLE FISHING 3', cotType: 'a-u-S-X-F', lat: 36.0738, lon: -5.8921, haeM: null, courseDeg: 180, speedMps: 4 * KNOT, simulated: true },
  { id: 'mar-004', callsign: 'SAMPLE PATROL 4', cotType: 'a-f-S-C-P', lat: 36.0512, lon: -5.4468, haeM: null, courseDeg: 30, speedMps: 18 * KNOT, simulated: true },
].map((t) => ({ ...t, remarks: 'sample maritime track; simulated, fixed position; not live' }));
