/**
 * The 13 trust axes of a verdict, each in [0, 1] and derived deterministically from the frame, the
 * configured no-fly zones and the track's previous frame. Absent evidence scores low, never high.
 * Weights: soundness (physical plausibility) and containment (no-fly zones) 2, the rest 1. Limits
 * mark breaches.
 */
import { rfc3339Ms, type Source, type TelemetryFrame } from './telemetry.js';
import type { GeofenceResult } from './geofence.js';
import { bearingDeg, haversineM } from '../lib/geo.js';

export interface AxisDef {
  name: string;
  weight: number;
  /** Below this the axis is listed in `breaches`. */
  limit: number;
  /** What it measures and the constants it uses (README and OpenAPI). */
  doc: string;
}

export const AXES: readonly AxisDef[] = [
  { name: 'soundness', weight: 2, limit: 0.5, doc: 'physical plausibility: altitude in [-100, 10000] m and speed <= 150 m/s (each factor 1, else 0.2)' },
  { name: 'containment', weight: 2, limit: 0.5, doc: 'inside a no-fly zone 0; outside 0.5 + 0.5*min(1, distance/2000 m); no zones configured 0.5' },
  { name: 'identity', weight: 1, limit: 0.5, doc: 'authenticated id 1; else OpenDroneID 0.45, ADS-B 0.6, MAVLink 0.35; no source 0.1' },
  { name: 'source_reliability', weight: 1, limit: 0.3, doc: 'prior by source: ADS-B 0.9, OpenDroneID 0.85, MAVLink 0.7; absent 0.2' },
  { name: 'signal_strength', weight: 1, limit: 0.2, doc: 'clamp((rssi_dbm + 100) / 60, 0, 1); absent 0.2' },
  { name: 'clock_sync', weight: 1, limit: 0.3, doc: 'exp(-|timestamp_skew_s| / 2 s); absent 0.3' },
  { name: 'corroboration', weight: 1, limit: 0.3, doc: '1 - exp(-n_observations / 5); absent counts as 1 observation' },
  { name: 'altitude_compliance', weight: 1, limit: 0.5, doc: '1 up to 120 m AGL (14 CFR 107.51), linear to 0 at 240 m; absent 0.3' },
  { name: 'speed_compliance', weight: 1, limit: 0.5, doc: '1 up to 44.7 m/s (100 mph, 14 CFR 107.51), linear to 0 at 89.4 m/s; absent 0.3' },
  { name: 'heading_consistency', weight: 1, limit: 0.3, doc: 'hovering (< 0.5 m/s) 1; else 1 - |heading - bearing from previous fix|/180, first fix 0.8; heading absent 0.4' },
  { name: 'freshness', weight: 1, limit: 0.3, doc: 'exp(-age/30 s) from ts_utc; more than 5 s in the future 0; absent 0.5' },
  { name: 'track_continuity', weight: 1, limit: 0.3, doc: 'exp(-|implied - reported speed| / max(5, reported)) against the previous fix; first fix 0.6' },
  { name: 'protocol_conformance', weight: 1, limit: 0.5, doc: 'track_id matches the source id format (ICAO 24-bit hex, ANSI/CTA-2063-A serial, MAVLink sysid 1-255) 1, else 0.4; no source 0.2' },
];

export interface PreviousFix {
  lat: number;
  lon: number;
  atMs: number;
}

const clamp01 = (x: number): number => Math.max(0, Math.min(1, x));

const ID_FORMATS: Record<Source, RegExp> = {
  'ADS-B': /^[0-9A-Fa-f]{6}$/,
  OpenDroneID: /^[0-9A-HJ-NP-Z]{4}[1-9A-F][0-9A-HJ-NP-Z]{1,15}$/,
  MAVLink: /^(?:mav|sys)?[-:]?(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d?)$/i,
};


export function scoreAxes(f: TelemetryFrame, geo: GeofenceResult, prev: PreviousFix | undefined, nowMs: number): Record<string, number> {
  const alt = f.alt_m;
  const speed = f.speed_mps;
  const tsMs = f.ts_utc ? rfc3339Ms(f.ts_utc) : undefined;
  const atMs = tsMs ?? nowMs;
  const moved = prev ? haversineM(prev, f) : 0;
  const dt = prev ? (atMs - prev.atMs) / 1000 : 0;

  const soundness = (alt === undefined || (alt >= -100 && alt <= 10000) ? 1 : 0.2) * (speed === undefined || speed <= 150 ? 1 : 0.2);
  const containment = geo.inside === null ? 0.5 : geo.inside ? 0 : 0.5 + 0.5 * Math.min(1, geo.distanceM! / 2000);
  const identity = f.id_authenticated ? 1 : f.source === 'OpenDroneID' ? 0.45 : f.source === 'ADS-B' ? 0.6 : f.source === 'MAVLink' ? 0.35 : 0.1;
  const reliability = f.source === 'ADS-B' ? 0.9 : f.source === 'OpenDroneID' ? 0.85 : f.source === 'MAVLink' ? 0.7 : 0.2;
  const signal = f.rssi_dbm === undefined ? 0.2 : clamp01((f.rssi_dbm + 100) / 60);
  const clock = f.timestamp_skew_s === undefined ? 0.3 : Math.exp(-Math.abs(f.timestamp_skew_s) / 2);
  const corroboration = 1 - Math.exp(-(f.n_observations ?? 1) / 5);
  const altitude = alt === undefined ? 0.3 : alt <= 120 ? 1 : clamp01(1 - (alt - 120) / 120);
  const speedOk = speed === undefined ? 0.3 : speed <= 44.7 ? 1 : clamp01(1 - (speed - 44.7) / 44.7);
  let heading = 0.4;
  if (f.heading_deg !== undefined) {
    if (speed !== undefined && speed < 0.5) heading = 1;
    else if (prev && moved > 1) {
      const diff = Math.abs(((f.heading_deg - bearingDeg(prev, f) + 540) % 360) - 180);
      heading = 1 - diff / 180;
    } else heading = 0.8;
  }
  const freshness = tsMs === undefined ? 0.5 : nowMs - tsMs < -5000 ? 0 : Math.exp(-Math.max(0, nowMs - tsMs) / 30000);
  let continuity = 0.6;
  if (prev) {
    if (dt <= 0) continuity = 0.5;
    else {
      const implied = moved / dt;
      const reported = speed ?? 150;
      continuity = Math.exp(-Math.abs(implied - reported) / Math.max(5, reported));
    }
  }
  const protocol = f.source ? (ID_FORMATS[f.source].test(f.track_id) ? 1 : 0.4) : 0.2;

  return {
    soundness,
    containment,
    identity,
    source_reliability: reliability,
    signal_strength: signal,
    clock_sync: clock,
    corroboration,
    altitude_compliance: altitude,
    speed_compliance: speedOk,
    heading_consistency: heading,
    freshness,
    track_continuity: continuity,
    protocol_conformance: protocol,
  };
}

/** Weighted geometric mean; an axis at 0 is floored at 1e-6 so one zero dominates without NaN. */
export function weightedGeometricMean(scores: Record<string, number>): number {
  let num = 0;
  let den = 0;
  for (const a of AXES) {
    num += a.weight * Math.log(Math.max(scores[a.name]!, 1e-6));
    den += a.weight;
  }
  return Math.exp(num / den);
}
