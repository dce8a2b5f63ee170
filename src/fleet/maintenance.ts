/**
 * Maintenance register and the Weibull predictive-maintenance view. Lives are read back from the
 * logs: the span between two consecutive overhaul/replacement/failure entries is one life (a
 * failure when the later entry is FAILED, a suspension otherwise); the life running at `as_of` is a
 * suspension at the component's current age.
 */
import { COMPONENT_CLASS_BY_ID } from './dataset/reference.js';
import type { FleetDataset } from './dataset/types.js';
import { b10Residual, conditionalFailure, fitWeibull, hazard, meanResidualLife, reliability, type WeibullParams } from './weibull.js';

/** Recommendation thresholds on P(failure within 30 days), stated in the body. */
export const THRESHOLDS = { plan_p30: 0.02, schedule_now_p30: 0.03 } as const;
export const MIN_FAILURES_FOR_FIT = 5;

const ENDS_LIFE = new Set(['FAILED', 'OVERHAULED', 'REPLACED']);

export interface ComponentLives {
  component_id: string;
  lastOverhaulRh: number;
  ageHours: number;
  /** Complete lives between recorded boundaries (the life before the first record is unknown). */
  lives: { t: number; failed: boolean }[];
}

export function componentLives(ds: FleetDataset): Map<string, ComponentLives> {
  const out = new Map<string, ComponentLives>();
  for (const c of ds.components) {
    const bounds = ds.maintenance_logs.filter((l) => l.component_id === c.component_id && ENDS_LIFE.has(l.outcome)).sort((a, b) => a.running_hours_at - b.running_hours_at);
    const lives = bounds.slice(1).map((b, i) => ({ t: b.running_hours_at - bounds[i]!.running_hours_at, failed: b.outcome === 'FAILED' }));
    const last = bounds.at(-1)?.running_hours_at ?? 0;
    out.set(c.component_id, { component_id: c.component_id, lastOverhaulRh: last, ageHours: c.running_hours_now - last, lives });
  }
  return out;
}

export function maintenanceLogsPayload(ds: FleetDataset, lives: Map<string, ComponentLives>) {
  return {
    items: ds.maintenance_logs,
    components: ds.components.map((c) => ({ ...c, last_overhaul_rh: lives.get(c.component_id)!.lastOverhaulRh })),
  };
}

export interface ClassModel extends WeibullParams {
  component_class: string;
  n_failures: number;
  n_suspensions: number;
  parameters_basis: 'fitted' | 'prior';
  method: string;
}

export function fitClassModels(ds: FleetDataset, lives: Map<string, ComponentLives>): ClassModel[] {
  const byClass = new Map<string, { t: number; failed: boolean }[]>();
  for (const c of ds.components) {
    const l = lives.get(c.component_id)!;
    const list = byClass.get(c.class) ?? [];
    list.push(...l.lives, { t: l.ageHours, failed: false });
    byClass.set(c.class, list);
  }
  return [...byClass].map(([cls, data]) => {
    const nf = data.filter((d) => d.failed).length;
    const fit = nf >= MIN_FAILURES_FOR_FIT ? fitWeibull(data.filter((d) => d.t > 0)) : null;
    const prior = COMPONENT_CLASS_BY_ID.get(cls)!;
    return {
      component_class: cls,
      beta: fit?.beta ?? prior.beta,
      eta: fit?.eta ?? prior.etaHours,
      n_failures: nf,
      n_suspensions: data.length - nf,
      parameters_basis: fit ? 'fitted' : 'prior',
      method: fit
        ? 'maximum likelihood with right-censoring: bisection on the profile equation for beta, eta in closed form'
        : `fewer than ${MIN_FAILURES_FOR_FIT} failures: the class prior (the life distribution the dataset generator samples)`,
    };
  });
}

export function predictiveItems(ds: FleetDataset, lives: Map<string, ComponentLives>, models: ClassModel[]) {
  return ds.components.map((c) => {
    const m = models.find((x) => x.component_class === c.class)!;
    const interval = COMPONENT_CLASS_BY_ID.get(c.class)!.intervalHours;
    const T = lives.get(c.component_id)!.ageHours;
    const p30 = conditionalFailure(m, T, c.avg_rh_per_day * 30);
    const p90 = conditionalFailure(m, T, c.avg_rh_per_day * 90);
    const reasons: string[] = [];
    let recommendation: 'NONE' | 'PLAN' | 'SCHEDULE_NOW' | 'OVERDUE' = 'NONE';
    if (p30 >= THRESHOLDS.plan_p30) {
      recommendation = 'PLAN';
      reasons.push(`p_fail_30d >= ${THRESHOLDS.plan_p30}`);
    }
    if (p30 >= THRESHOLDS.schedule_now_p30) {
      recommendation = 'SCHEDULE_NOW';
      reasons.push(`p_fail_30d >= ${THRESHOLDS.schedule_now_p30}`);
    }
    if (T > interval) {
      recommendation = 'OVERDUE';
      reasons.push(`age_hours > PMS interval ${interval} h`);
    }
    return {
      component_id: c.component_id,
      vessel_imo: c.vessel_imo,
      class: c.class,
      age_hours: T,
      avg_rh_per_day: c.avg_rh_per_day,
      reliability: reliability(m, T),
      hazard_per_hour: hazard(m, T),
      p_fail_30d: p30,
      p_fail_90d: p90,
      mrl_hours: meanResidualLife(m, T),
      b10_residual_hours: b10Residual(m, T),
      pms_interval_hours: interval,
      pms_due_in_hours: interval - T,
      recommendation,
      reasons,
    };
  });
}

export function predictivePayload(ds: FleetDataset, lives: Map<string, ComponentLives>) {
  const models = fitClassModels(ds, lives);
  return {
    models: models.map(({ beta, eta, ...rest }) => ({ component_class: rest.component_class, beta, eta_hours: eta, n_failures: rest.n_failures, n_suspensions: rest.n_suspensions, parameters_basis: rest.parameters_basis, method: rest.method })),
    thresholds: THRESHOLDS,
    items: predictiveItems(ds, lives, models),
    assumptions: [
      'Age T is running hours since the last overhaul, replacement or failure entry; a repair restores the unit to as good as new.',
      'Horizons: H = avg_rh_per_day x 30 and x 90 calendar days.',
      `Recommendation: PLAN when p_fail_30d >= ${THRESHOLDS.plan_p30}, SCHEDULE_NOW when >= ${THRESHOLDS.schedule_now_p30}, OVERDUE when age exceeds the PMS interval.`,
      'PMS intervals and class priors are dataset design values, not OEM figures.',
    ],
  };
}
