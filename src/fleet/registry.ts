/**
 * Vessels, fleets and certificates views: dataset records plus the fields computed at `as_of` (age,
 * position, certificate status and summaries, PSC counts, fleet aggregates).
 */
import type { Certificate, FleetDataset } from './dataset/types.js';
import { certificateState, type CertStatus } from './certificates.js';
import { DAY_MS, toMs } from './dates.js';
import type { PscPayload } from './psc.js';
import { positionAt } from './voyages.js';
import { BAND_ORDER, type VoyageRiskPayload } from './voyage-risk.js';

export function certificatesPayload(ds: FleetDataset) {
  const asOf = ds.as_of.slice(0, 10);
  return {
    statuses: ['VALID', 'WINDOW_OPEN', 'EXPIRING_90D', 'ENDORSEMENT_OVERDUE', 'EXPIRED'],
    items: ds.certificates.map((c: Certificate) => {
      const st = certificateState(c, asOf);
      return { ...c, windows: st.windows, next_window: st.next_window, status: st.status, days_to_expiry: st.days_to_expiry };
    }),
  };
}

export type CertificatesPayload = ReturnType<typeof certificatesPayload>;

/** Ages are stated in years to two decimals (they are printed in briefings). */
export const round2 = (x: number): number => Math.round(x * 100) / 100;

const count = (statuses: CertStatus[], s: CertStatus): number => statuses.filter((x) => x === s).length;

export function vesselsPayload(ds: FleetDataset, certs: CertificatesPayload, psc: PscPayload) {
  return {
    items: ds.vessels.map((v) => {
      const statuses = certs.items.filter((c) => c.vessel_imo === v.imo).map((c) => c.status);
      const p = psc.summary_by_vessel.find((s) => s.imo === v.imo)!;
      return {
        ...v,
        age_years: round2((toMs(ds.as_of) - toMs(v.delivered)) / (365.25 * DAY_MS)),
        position: positionAt(ds, v.imo),
        certificate_summary: {
          total: statuses.length,
          need_action: statuses.length - count(statuses, 'VALID'),
          valid: count(statuses, 'VALID'),
          window_open: count(statuses, 'WINDOW_OPEN'),
          expiring_90d: count(statuses, 'EXPIRING_90D'),
          overdue: count(statuses, 'ENDORSEMENT_OVERDUE'),
          expired: count(statuses, 'EXPIRED'),
        },
        psc_36m: { inspections: p.inspections_36m, deficiencies: p.deficiencies_36m, detentions: p.detentions_36m },
      };
    }),
  };
}

export type VesselsPayload = ReturnType<typeof vesselsPayload>;

/** Not valid = EXPIRED or ENDORSEMENT_OVERDUE (the certificate no longer proves compliance). */
const NOT_VALID = new Set(['EXPIRED', 'ENDORSEMENT_OVERDUE']);

export function fleetsPayload(ds: FleetDataset, vessels: VesselsPayload, certs: CertificatesPayload, risk: VoyageRiskPayload) {
  return {
    items: ds.fleets.map((f) => {
      const vs = vessels.items.filter((v) => v.fleet_id === f.fleet_id);
      const imos = new Set(vs.map((v) => v.imo));
      const doc = certs.items.find((c) => c.cert_id === f.doc_cert_id)!;
      const bands = risk.items.filter((r) => imos.has(r.vessel_imo)).map((r) => BAND_ORDER.indexOf(r.band));
      return {
        fleet_id: f.fleet_id,
        name: f.name,
        segment: f.segment,
        ism_company: { ...f.ism_company, doc: { cert_id: doc.cert_id, status: doc.status } },
        vessel_imos: vs.map((v) => v.imo),
        aggregates: {
          vessels: vs.length,
          total_gt: vs.reduce((a, v) => a + v.gross_tonnage, 0),
          total_dwt: vs.reduce((a, v) => a + v.deadweight_t, 0),
          mean_age_years: round2(vs.reduce((a, v) => a + v.age_years, 0) / vs.length),
          detentions_36m: vs.reduce((a, v) => a + v.psc_36m.detentions, 0),
          certificates_not_valid: certs.items.filter((c) => (c.vessel_imo !== null && imos.has(c.vessel_imo)) || c.cert_id === f.doc_cert_id).filter((c) => NOT_VALID.has(c.status)).length,
          max_voyage_risk_band: BAND_ORDER[Math.max(...bands)]!,
        },
      };
    }),
    aggregate_rules: { certificates_not_valid: 'certificates of the fleet (vessels and the company DOC) whose status is EXPIRED or ENDORSEMENT_OVERDUE at as_of' },
  };
}
