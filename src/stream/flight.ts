/**
 * The simulated flight: four drones on fixed waypoint loops near a sensor site, one of them
 * (an unauthenticated intruder) crossing the configured no-fly zone, so ALLOW, REVIEW and DENY all
 * occur. Frame k is a pure function of k: positions from constant-speed legs between waypoints,
 * RSSI from free-space path loss at 2.4 GHz (FSPL = 20·log10(d) + 20·log10(f) − 147.55 dB), seeded
 * measurement noise, clock skew and a fused observation count that grows while a drone is tracked.
 */
import { Rng, fmix32, fnv1a32 } from '../lib/prng.js';
import { bearingDeg, haversineM } from '../lib/geo.js';
import type { Source, TelemetryFrame } from '../verdicts/telemetry.js';

export const SENSOR = { lat: 36.2, lon: -115.2, alt_m: 10 };
const TX_DBM = 20;
const RX_GAIN_DB = 10;
const FREQ_HZ = 2.4e9;

interface Drone {
  id: string;
  source: Source;
  authenticated: boolean;
  speedMps: number;
  altM: number;
  /** Observations fused per second of tracking (sensor fusion rate). */
  obsPerS: number;
  skewS: number;
  waypoints: [number, number][];
}

export const DRONES: readonly Drone[] = [
  // a registered survey drone, authenticated Remote ID, well outside the zone
  { id: '1581F5BK3C100234', source: 'OpenDroneID', authenticated: true, speedMps: 12, altM: 90, obsPerS: 40, skewS: 0.05, waypoints: [[36.19, -115.23], [36.19, -115.21], [36.205, -115.21], [36.205, -115.23]] },
  // an ADS-B-equipped UAS at the edge of the altitude limit
  { id: 'ae1f42', source: 'ADS-B', authenticated: false, speedMps: 25, altM: 115, obsPerS: 25, skewS: 0.2, waypoints: [[36.18, -115.19], [36.2, -115.17], [36.18, -115.15]] },
  // a hobby drone over MAVLink telemetry with a drifting clock
  { id: 'sys-17', source: 'MAVLink', authenticated: false, speedMps: 8, altM: 60, obsPerS: 10, skewS: 1.5, waypoints: [[36.25, -115.22], [36.26, -115.21], [36.25, -115.2]] },
  // the intruder: unauthenticated Remote ID, fast, its loop cuts through the no-fly zone
  { id: '1581F9ZX7Q200991', source: 'OpenDroneID', authenticated: false, speedMps: 30, altM: 140, obsPerS: 5, skewS: 0.8, waypoints: [[36.21, -115.19], [36.245, -115.16], [36.21, -115.13]] },
];

/** Free-space received power in dBm at distance d metres. */
export function rssiDbm(distanceM: number): number {
  const d = Math.max(distanceM, 1);
  return TX_DBM + RX_GAIN_DB - (20 * Math.log10(d) + 20 * Math.log10(FREQ_HZ) - 147.55);
}

function positionAt(drone: Drone, tS: number): { lat: number; lon: number; heading: number } {
  const legs = drone.waypoints.map((w, i) => [w, drone.waypoints[(i + 1) % drone.waypoints.length]!] as const);
  const lengths = legs.map(([a, b]) => haversineM({ lat: a[0], lon: a[1] }, { lat: b[0], lon: b[1] }));
  const loop = lengths.reduce((s, l) => s + l, 0);
  let along = (drone.speedMps * tS) % loop;
  for (let i = 0; i < legs.length; i++) {
    if (along <= lengths[i]! || i === legs.length - 1) {
      const [a, b] = legs[i]!;
      const f = lengths[i]! > 0 ? Math.min(1, along / lengths[i]!) : 0;
      const p = { lat: a[0] + (b[0] - a[0]) * f, lon: a[1] + (b[1] - a[1]) * f };
      return { ...p, heading: bearingDeg({ lat: a[0], lon: a[1] }, { lat: b[0], lon: b[1] }) };
    }
    along -= lengths[i]!;
  }
  throw new Error('unreachable');
}

/** Frames of tick k (simulated time k·dtS seconds), deterministic in k. */
export function flightFrames(k: number, dtS: number, nowMs: number): TelemetryFrame[] {
  return DRONES.map((d) => {
    const rng = new Rng(fmix32((k >>> 0) ^ fnv1a32(`flight/${d.id}`)));
    const pos = positionAt(d, k * dtS);
    const dist = Math.hypot(haversineM(SENSOR, pos), d.altM - SENSOR.alt_m);
    return {
      track_id: d.id,
      source: d.source,
      lat: pos.lat + rng.normal() * 2e-6,
      lon: pos.lon + rng.normal() * 2e-6,
      alt_m: d.altM + rng.normal() * 1.5,
      speed_mps: Math.max(0, d.speedMps + rng.normal() * 0.5),
      heading_deg: (pos.heading + rng.normal() + 360) % 360,
      rssi_dbm: Math.max(-150, Math.min(0, rssiDbm(dist) + rng.normal() * 2)),
      id_authenticated: d.authenticated,
      timestamp_skew_s: d.skewS * (1 + 0.1 * rng.normal()),
      n_observations: Math.max(1, Math.min(100000, Math.round(d.obsPerS * (k + 1) * dtS))),
      ts_utc: new Date(nowMs).toISOString(),
    };
  });
}
