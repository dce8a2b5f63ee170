/**
 * Event log derived from the dataset: certificate, PSC, maintenance and voyage events up to
 * `as_of`. Not a runtime log (runtime events are in /mesh/state).
 */
import { canonicalJson, sha256Hex } from '../lib/numbers.js';
import type { FleetDataset } from './dataset/types.js';
import { addDays } from './dates.js';
import type { CertificatesPayload } from './registry.js';
import type { PscPayload } from './psc.js';

export const EVENT_TYPES = ['CERT_ISSUED', 'CERT_ENDORSED', 'CERT_EXPIRED', 'PSC_INSPECTION', 'PSC_DETENTION', 'PSC_RELEASE', 'MAINT_DONE', 'COMPONENT_FAILED', 'VOYAGE_DEPARTED', 'VOYAGE_ARRIVED'] as const;

interface Draft {
  ts: string;
  type: (typeof EVENT_TYPES)[number];
  vessel_imo: string | null;
  severity: 'info' | 'warning' | 'critical';
  summary: string;
  ref: { collection: string; id: string };
}

const day = (d: string): string => `${d}T00:00:00Z`;

export function eventsPayload(ds: FleetDataset, certs: CertificatesPayload, psc: PscPayload) {
  const drafts: Draft[] = [];
  for (const c of certs.items) {
    const ref = { collection: 'compliance_certificates', id: c.cert_id };
    drafts.push({ ts: day(c.issue_date), type: 'CERT_ISSUED', vessel_imo: c.vessel_imo, severity: 'info', summary: `${c.type} certificate issued`, ref });
    for (const e of c.endorsements) drafts.push({ ts: day(e.date), type: 'CERT_ENDORSED', vessel_imo: c.vessel_imo, severity: 'info', summary: `${c.type} ${e.kind.toLowerCase()} endorsement`, ref });
    // valid through its expiry date: expired from the next day
    if (c.status === 'EXPIRED') drafts.push({ ts: day(addDays(c.expiry_date!, 1)), type: 'CERT_EXPIRED', vessel_imo: c.vessel_imo, severity: 'critical', summary: `${c.type} certificate expired`, ref });
  }
  for (const p of psc.inspections) {
    const ref = { collection: 'port_state_deficiencies', id: p.inspection_id };
    drafts.push({ ts: day(p.date), type: 'PSC_INSPECTION', vessel_imo: p.vessel_imo, severity: p.deficiencies.length ? 'warning' : 'info', summary: `${p.mou} MoU ${p.type.toLowerCase()} inspection at ${p.port_locode}, ${p.deficiencies.length} deficiencies`, ref });
    if (p.detained) drafts.push({ ts: day(p.date), type: 'PSC_DETENTION', vessel_imo: p.vessel_imo, severity: 'critical', summary: `Detained at ${p.port_locode}`, ref });
    if (p.released_on) drafts.push({ ts: day(p.released_on), type: 'PSC_RELEASE', vessel_imo: p.vessel_imo, severity: 'warning', summary: `Released from detention at ${p.port_locode}`, ref });
  }
  for (const l of ds.maintenance_logs) {
    const ref = { collection: 'maintenance_logs', id: l.log_id };
    const failed = l.outcome === 'FAILED';
    drafts.push({ ts: day(l.date), type: failed ? 'COMPONENT_FAILED' : 'MAINT_DONE', vessel_imo: l.vessel_imo, severity: failed ? 'warning' : 'info', summary: `${l.component_class} ${l.outcome.toLowerCase()} (${l.kind.toLowerCase()})`, ref });
  }
  for (const v of ds.voyages) {
    const ref = { collection: 'shipment_records', id: v.voyage_id };
    if (v.atd) drafts.push({ ts: v.atd, type: 'VOYAGE_DEPARTED', vessel_imo: v.vessel_imo, severity: 'info', summary: `Departed ${v.load_port} for ${v.discharge_port}`, ref });
    if (v.ata) drafts.push({ ts: v.ata, type: 'VOYAGE_ARRIVED', vessel_imo: v.vessel_imo, severity: 'info', summary: `Arrived ${v.discharge_port}`, ref });
  }
  const items = drafts
    .filter((d) => d.ts <= ds.as_of)
    .map((d) => ({ event_id: sha256Hex(canonicalJson(d)).slice(0, 16), ...d }))
    .sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0));
  return { event_types: EVENT_TYPES, event_id_rule: 'first 16 hex of SHA-256 over the canonical JSON of {ts, type, vessel_imo, severity, summary, ref}', items };
}
