/**
 * A verdict from a telemetry frame: axes → Λ empirical → PAC-Bayes floor → decision; the floor
 * keeps a track seen a few times from earning ALLOW on a lucky score.
 */
import type { NoFlyZone } from '../ledger/ledger.config.js';
import { AXES, scoreAxes, weightedGeometricMean, type PreviousFix } from './axes.js';
import { checkGeofence } from './geofence.js';
import { DELTA, KL_POSTERIOR_PRIOR, klInverseLower, pacBayesBound } from './pac-bayes.js';
import type { TelemetryFrame } from './telemetry.js';

export const LAMBDA_FLOOR = 0.7;
export const ALLOW_AT = 0.9;

export type Decision = 'ALLOW' | 'REVIEW' | 'DENY';

export interface Breach {
  rule: 'geofence' | 'axis';
  zone?: string;
  axis?: string;
  value?: number;
  limit?: number;
}

export interface Evaluation {
  decision: Decision;
  lambda: number;
  lambdaEmpirical: number;
  lambdaFloor: number;
  pacBayes: { n: number; kl_posterior_prior: number; delta: number; bound: number; certified_floor: number };
  axes: Record<string, number>;
  geofence: { inside: boolean | null; zone: string | null; distance_m: number | null };
  breaches: Breach[];
}

const round6 = (x: number): number => Math.round(x * 1e6) / 1e6;

export function decide(lambda: number): Decision {
  return lambda >= ALLOW_AT ? 'ALLOW' : lambda >= LAMBDA_FLOOR ? 'REVIEW' : 'DENY';
}

export function evaluate(frame: TelemetryFrame, zones: readonly NoFlyZone[], prev: PreviousFix | undefined, nowMs: number): Evaluation {
  const geo = checkGeofence(frame.lat, frame.lon, zones);
  const axes = scoreAxes(frame, geo, prev, nowMs);
  const empirical = weightedGeometricMean(axes);
  const n = frame.n_observations ?? 1;
  const bound = pacBayesBound(n);
  const floor = klInverseLower(empirical, bound);
  const lambda = round6(Math.min(empirical, floor));
  const breaches: Breach[] = [];
  if (geo.inside) breaches.push({ rule: 'geofence', zone: geo.zone! });
  // one pass over the axes (in their documented order) for breaches and the rounded scores
  const rounded: Record<string, number> = {};
  for (const a of AXES) {
    const score = axes[a.name]!;
    const r = (rounded[a.name] = round6(score));
    if (score < a.limit) breaches.push({ rule: 'axis', axis: a.name, value: r, limit: a.limit });
  }
  return {
    decision: decide(lambda),
    lambda,
    lambdaEmpirical: round6(empirical),
    lambdaFloor: LAMBDA_FLOOR,
    pacBayes: { n, kl_posterior_prior: KL_POSTERIOR_PRIOR, delta: DELTA, bound: round6(bound), certified_floor: round6(floor) },
    axes: rounded,
    geofence: { inside: geo.inside, zone: geo.zone, distance_m: geo.distanceM === null ? null : Math.round(geo.distanceM * 10) / 10 },
    breaches,
  };
}
