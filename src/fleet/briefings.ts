/**
 * "AI" briefings: a deterministic template, no language model. Every number or date in a bullet's
 * text is printed from one of the bullet's evidence pointers, which resolve against the /fleet/all
 * collections; `inputs_sha256` commits to the resolved values.
 */
import { canonicalJson, sha256Hex } from '../lib/numbers.js';

/** How an evidence pointer resolves: /fleet/all member, the array inside it, and the id field. */
export const EVIDENCE_COLLECTIONS: Record<string, { array: string; id: string }> = {
  fleets: { array: 'items', id: 'fleet_id' },
  vessels: { array: 'items', id: 'imo' },
  compliance_certificates: { array: 'items', id: 'cert_id' },
  port_state_deficiencies: { array: 'inspections', id: 'inspection_id' },
  predictive_maintenance: { array: 'items', id: 'component_id' },
  voyage_risk: { array: 'items', id: 'voyage_id' },
};

type Rec = Record<string, any>;
export type Collections = Record<string, Rec>;

export function resolveEvidence(all: Collections, ev: { collection: string; id: string; field: string }): unknown {
  const spec = EVIDENCE_COLLECTIONS[ev.collection];
  if (!spec) throw new Error(`unknown evidence collection ${ev.collection}`);
  const rec = (all[ev.collection]![spec.array] as Rec[]).find((r) => r[spec.id] === ev.id);
  if (!rec) throw new Error(`evidence ${ev.collection}/${ev.id} not found`);
  return ev.field.split('.').reduce<any>((node, k) => (node == null ? undefined : node[k]), rec);
}

interface Bullet {
  text: string;
  evidence: { collection: string; id: string; field: string }[];
}

/** A bullet built from a template whose `{n}` slots are filled from evidence n. */
function bullet(all: Collections, template: string, evidence: Bullet['evidence']): Bullet {
  const text = template.replace(/\{(\d+)\}/g, (_, i: string) => String(resolveEvidence(all, evidence[Number(i)]!)));
  return { text, evidence };
}

const SEVERITY = ['VALID', 'WINDOW_OPEN', 'EXPIRING_90D', 'ENDORSEMENT_OVERDUE', 'EXPIRED'];

function priority(worstBand: string, worstCert: string, worstPm: string): 'P1' | 'P2' | 'P3' {
  if (worstBand === 'SEVERE' || worstCert === 'EXPIRED' || worstCert === 'ENDORSEMENT_OVERDUE') return 'P1';
  if (worstBand === 'HIGH' || worstCert === 'EXPIRING_90D' || worstPm === 'OVERDUE' || worstPm === 'SCHEDULE_NOW') return 'P2';
  return 'P3';
}

export function briefingsPayload(all: Collections) {
  const items: Rec[] = [];
  const finish = (scope: 'fleet' | 'vessel', subject: string, headline: string, prio: string, bullets: Bullet[]): void => {
    const values = bullets.flatMap((b) => b.evidence.map((e) => resolveEvidence(all, e)));
    items.push({ briefing_id: `BR-${scope}-${subject}`, scope, subject_id: subject, priority: prio, headline, bullets, inputs_sha256: sha256Hex(canonicalJson(values)) });
  };
  const worst = <T>(list: T[], rank: (t: T) => number): T | undefined => list.reduce<T | undefined>((w, x) => (w === undefined || rank(x) > rank(w) ? x : w), undefined);

  for (const f of all.fleets!.items as Rec[]) {
    const ev = (field: string) => ({ collection: 'fleets', id: f.fleet_id, field });
    const a = f.aggregates;
    const vesselCerts = (all.compliance_certificates!.items as Rec[]).filter((c) => f.vessel_imos.includes(c.vessel_imo) || c.cert_id === f.ism_company.doc.cert_id);
    const worstCert = worst(vesselCerts, (c) => SEVERITY.indexOf(c.status))?.status ?? 'VALID';
    const worstPm = worst((all.predictive_maintenance!.items as Rec[]).filter((p) => f.vessel_imos.includes(p.vessel_imo)), (p) => ['NONE', 'PLAN', 'SCHEDULE_NOW', 'OVERDUE'].indexOf(p.recommendation))?.recommendation ?? 'NONE';
    finish('fleet', f.fleet_id, `${f.name}: fleet summary at the dataset reference date`, priority(a.max_voyage_risk_band, worstCert, worstPm), [
      bullet(all, 'Vessels: {0}; gross tonnage in total: {1}; mean age in years: {2}.', [ev('aggregates.vessels'), ev('aggregates.total_gt'), ev('aggregates.mean_age_years')]),
      bullet(all, 'Certificates not valid: {0}; company DOC status: {1}.', [ev('aggregates.certificates_not_valid'), ev('ism_company.doc.status')]),
      bullet(all, 'Detentions over the three-year PSC window: {0}; highest voyage risk band: {1}.', [ev('aggregates.detentions_36m'), ev('aggregates.max_voyage_risk_band')]),
    ]);
  }

  for (const v of all.vessels!.items as Rec[]) {
    const ev = (field: string) => ({ collection: 'vessels', id: v.imo, field });
    const certs = (all.compliance_certificates!.items as Rec[]).filter((c) => c.vessel_imo === v.imo);
    const wc = worst(certs, (c) => SEVERITY.indexOf(c.status))!;
    const voyages = (all.voyage_risk!.items as Rec[]).filter((r) => r.vessel_imo === v.imo);
    const wv = worst(voyages, (r) => r.score)!;
    const pms = (all.predictive_maintenance!.items as Rec[]).filter((p) => p.vessel_imo === v.imo);
    const wp = worst(pms, (p) => ['NONE', 'PLAN', 'SCHEDULE_NOW', 'OVERDUE'].indexOf(p.recommendation) * 10 + p.p_fail_30d)!;
    const cev = (field: string) => ({ collection: 'compliance_certificates', id: wc.cert_id, field });
    const bullets = [
      bullet(all, 'Certificates needing action: {0} of {1}.', [ev('certificate_summary.need_action'), ev('certificate_summary.total')]),
      wc.status === 'VALID'
        ? bullet(all, 'Most pressing certificate: {0}, status {1}.', [cev('type'), cev('status')])
        : wc.next_window
          ? bullet(all, 'Most pressing certificate: {0}, status {1}; next window closes {2}.', [cev('type'), cev('status'), cev('next_window.closes')])
          : bullet(all, 'Most pressing certificate: {0}, status {1}; expiry date {2}.', [cev('type'), cev('status'), cev('expiry_date')]),
      bullet(all, 'PSC over three years: {0} inspections, {1} deficiencies, {2} detentions.', [ev('psc_36m.inspections'), ev('psc_36m.deficiencies'), ev('psc_36m.detentions')]),
      bullet(all, 'Highest voyage risk: score {0}, band {1}.', [
        { collection: 'voyage_risk', id: wv.voyage_id, field: 'score' },
        { collection: 'voyage_risk', id: wv.voyage_id, field: 'band' },
      ]),
      bullet(all, 'Maintenance: {0} is {1}, PMS due in {2} running hours.', [
        { collection: 'predictive_maintenance', id: wp.component_id, field: 'class' },
        { collection: 'predictive_maintenance', id: wp.component_id, field: 'recommendation' },
        { collection: 'predictive_maintenance', id: wp.component_id, field: 'pms_due_in_hours' },
      ]),
    ];
    finish('vessel', v.imo, `${v.name}: ${wc.status === 'VALID' ? 'certificates in order' : `certificate attention (${wc.type})`}, voyage risk ${wv.band}`, priority(wv.band, wc.status, wp.recommendation), bullets);
  }
  return {
    generator: { kind: 'deterministic_template', id: 'template-v1', llm_used: false },
    priority_rule: 'P1: SEVERE voyage band or an EXPIRED/ENDORSEMENT_OVERDUE certificate; P2: HIGH band, EXPIRING_90D, or maintenance SCHEDULE_NOW/OVERDUE; else P3',
    evidence_resolution: EVIDENCE_COLLECTIONS,
    inputs_sha256_rule: 'SHA-256 of the canonical JSON array of every evidence value, bullets in order',
    items,
  };
}
