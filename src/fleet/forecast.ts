/**
 * Forecast modules: deterministic projections from the dataset at `as_of`. Each module lists its
 * inputs, assumptions and sources next to its results.
 */
import type { FleetDataset } from './dataset/types.js';
import { addMonths, DAY_MS, isoDate, toMs } from './dates.js';
import type { CertificatesPayload, VesselsPayload } from './registry.js';
import type { PscPayload } from './psc.js';
import type { predictiveItems } from './maintenance.js';
import { co2Tonnes, voyageStatus } from './voyages.js';
import { polylineNm } from './geo.js';

/** MEPC.353(78) reference lines and MEPC.354(78) rating boundaries d1..d4 [S28, S29]. */
export const CII_SHIP_TYPES: Record<string, { a: number; c: number; d: [number, number, number, number] }> = {
  'Bulk Carrier': { a: 4745, c: 0.622, d: [0.86, 0.94, 1.06, 1.18] },
  'Crude Oil Tanker': { a: 5247, c: 0.61, d: [0.82, 0.93, 1.08, 1.28] },
  'Container Ship': { a: 1984, c: 0.489, d: [0.83, 0.94, 1.07, 1.19] },
};
/** Reduction factor Z (%) relative to the 2019 reference line, MEPC.338(76). */
export const CII_Z: Record<number, number> = { 2023: 5, 2024: 7, 2025: 9, 2026: 11 };

/** Attained AER in g CO2 per dwt-nm: CO2 [t] × 1e6 / (DWT × distance). */
export const attainedAer = (co2T: number, dwt: number, distanceNm: number): number => (co2T * 1e6) / (dwt * distanceNm);
export const requiredCii = (shipType: string, dwt: number, year: number): number => {
  const p = CII_SHIP_TYPES[shipType]!;
  return (1 - CII_Z[year]! / 100) * p.a * dwt ** -p.c;
};
export function ciiRating(shipType: string, attained: number, required: number): 'A' | 'B' | 'C' | 'D' | 'E' {
  const d = CII_SHIP_TYPES[shipType]!.d;
  const ratio = attained / required;
  return ratio < d[0] ? 'A' : ratio < d[1] ? 'B' : ratio < d[2] ? 'C' : ratio < d[3] ? 'D' : 'E';
}

type PredictiveItem = ReturnType<typeof predictiveItems>[number];

export function forecastPayload(ds: FleetDataset, certs: CertificatesPayload, vessels: VesselsPayload, psc: PscPayload, pm: PredictiveItem[]) {
  const asOf = ds.as_of.slice(0, 10);
  const asOfMs = toMs(ds.as_of);
  const horizonEnd = isoDate(asOfMs + 180 * DAY_MS);
  const certEvents = certs.items.flatMap((c) => {
    const ev: { cert_id: string; vessel_imo: string | null; company_imo: string | null; event: string; date: string; window_kind: string | null }[] = [];
    const add = (event: string, date: string, kind: string | null): void => {
      if (date > asOf && date <= horizonEnd) ev.push({ cert_id: c.cert_id, vessel_imo: c.vessel_imo, company_imo: c.company_imo, event, date, window_kind: kind });
    };
    for (const w of c.windows) {
      if (w.endorsed_on !== null) continue;
      add('WINDOW_OPENS', w.opens, w.kind);
      add('WINDOW_CLOSES', w.closes, w.kind);
    }
    if (c.expiry_date) add('EXPIRES', c.expiry_date, null);
    return ev;
  });
  certEvents.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : a.cert_id < b.cert_id ? -1 : 1));

  const cii = ds.vessels.map((v) => {
    const from = isoDate(asOfMs - 365 * DAY_MS);
    const done = ds.voyages.filter((x) => x.vessel_imo === v.imo && voyageStatus(x, ds.as_of) === 'COMPLETED' && x.ata!.slice(0, 10) > from);
    const co2 = done.reduce((s, x) => s + co2Tonnes(x.fuel), 0);
    const dist = done.reduce((s, x) => s + polylineNm(x.waypoints), 0);
    const attained = dist > 0 ? attainedAer(co2, v.deadweight_t, dist) : null;
    const years = Object.keys(CII_Z).map(Number);
    return {
      imo: v.imo,
      ship_type: v.ship_type,
      capacity_dwt: v.deadweight_t,
      voyages: done.map((x) => x.voyage_id),
      co2_t: co2,
      distance_nm: dist,
      attained_aer: attained,
      required: Object.fromEntries(years.map((y) => [y, requiredCii(v.ship_type, v.deadweight_t, y)])),
      rating: Object.fromEntries(years.map((y) => [y, attained === null ? null : ciiRating(v.ship_type, attained, requiredCii(v.ship_type, v.deadweight_t, y))])),
    };
  });

  const pscWindow = vessels.items.map((v) => {
    const s = psc.summary_by_vessel.find((x) => x.imo === v.imo)!;
    const last = psc.inspections.filter((p) => p.vessel_imo === v.imo).map((p) => p.date).sort().at(-1) ?? null;
    const perInspection = s.inspections_36m ? s.deficiencies_36m / s.inspections_36m : 0;
    const points = (v.age_years > 12 ? 1 : 0) + (v.ship_type !== 'Container Ship' ? 1 : 0) + (perInspection > 5 ? 1 : 0) + 2 * Math.min(1, s.detentions_36m);
    const profile = points >= 3 ? 'HIGH' : points <= 1 && s.detentions_36m === 0 ? 'LOW' : 'STANDARD';
    const months = profile === 'HIGH' ? [5, 6] : profile === 'STANDARD' ? [10, 12] : [24, 36];
    return { imo: v.imo, points, risk_profile: profile, last_inspection: last, window: last ? { opens: addMonths(last, months[0]!), closes: addMonths(last, months[1]!) } : null };
  });

  return {
    items: [
      {
        module_id: 'certificate-windows',
        title: 'Endorsement windows and expiries in the next 180 days',
        method: 'survey windows and expiry dates from the certificate rules of /fleet/compliance-certificates, unendorsed windows only',
        inputs: ['compliance_certificates'],
        horizon_days: 180,
        assumptions: ['No endorsement is recorded after as_of.'],
        sources: ['HSSC [S10]', 'ISM [S11-S13]', 'ISPS A/19 [S14]', 'MLC 2006 [S15-S17]'],
        results: certEvents,
      },
      {
        module_id: 'pms-due',
        title: 'Projected PMS due dates',
        method: 'days = (pms_interval_hours - age_hours) / avg_rh_per_day; due_date = as_of + days (UTC, truncated to the day)',
        inputs: ['maintenance_logs', 'predictive_maintenance'],
        horizon_days: null,
        assumptions: ['Running hours accrue at the component average rate.', 'A negative value of days means the job is overdue.'],
        sources: ['PMS by running hours [S24]'],
        results: pm.map((p) => {
          const days = (p.pms_interval_hours - p.age_hours) / p.avg_rh_per_day;
          return { component_id: p.component_id, vessel_imo: p.vessel_imo, class: p.class, pms_interval_hours: p.pms_interval_hours, age_hours: p.age_hours, avg_rh_per_day: p.avg_rh_per_day, days, due_date: isoDate(asOfMs + days * DAY_MS) };
        }),
      },
      {
        module_id: 'failure-risk',
        title: 'Components ranked by probability of failure within 90 days',
        method: 'Weibull conditional failure probability from /fleet/predictive-maintenance',
        inputs: ['predictive_maintenance'],
        horizon_days: 90,
        assumptions: ['Class Weibull parameters hold for every unit of the class.'],
        sources: ['Weibull conditional reliability [S26]'],
        results: [...pm]
          .sort((a, b) => b.p_fail_90d - a.p_fail_90d || (a.component_id < b.component_id ? -1 : 1))
          .map((p, i) => ({ rank: i + 1, component_id: p.component_id, vessel_imo: p.vessel_imo, p_fail_30d: p.p_fail_30d, p_fail_90d: p.p_fail_90d })),
      },
      {
        module_id: 'cii-rating',
        title: 'IMO operational carbon intensity (AER) and rating 2023-2026',
        method: 'attained = sum(fuel x Cf) x 1e6 / (DWT x distance); required = (1 - Z/100) x a x DWT^-c; rating from attained/required against d1..d4',
        inputs: ['shipment_records', 'vessels'],
        horizon_days: 365,
        assumptions: ['Voyages completed in the 365 days before as_of stand for the year.', "Next years' operating profile equals this year's; only Z tightens."],
        sources: ['MEPC.364(79) Cf, MEPC.353(78)/354(78) [S28]', 'CII bands [S29]'],
        results: cii,
      },
      {
        module_id: 'psc-window',
        title: 'Next expected PSC inspection window from a simplified ship risk profile',
        method: 'points: age > 12 y (+1), tanker or bulk carrier (+1), > 5 deficiencies per inspection (+1), any detention in 36 months (+2); HIGH >= 3, LOW <= 1 without detention, else STANDARD; window after the last inspection: HIGH 5-6 months, STANDARD 10-12, LOW 24-36',
        inputs: ['vessels', 'port_state_deficiencies'],
        horizon_days: null,
        assumptions: ['A documented simplification of the seven SRP parameters; not the official Paris MoU table. Flag, RO and company performance are not modelled.'],
        sources: ['Paris MoU NIR intervals [S30]', 'Ship risk profile [S31, S32]'],
        results: pscWindow,
      },
    ],
  };
}
