import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../src/lib/numbers.js';
import { CF, FLAG_BY_ISO2, PORT_BY_LOCODE, DEFICIENCY_CODES } from '../../src/fleet/dataset/reference.js';
import { isValidImoCompany, isValidImoShip } from '../../src/fleet/dataset/identifiers.js';
import { withTestApp } from '../helpers/app.js';
import { pairs } from '../helpers/indexed.js';

const API = '/api/svc/v1/fleet';
const ROUTES = ['vessels', 'forecast-modules', 'predictive-maintenance', 'compliance-certificates', 'port-state-deficiencies', 'ai-briefings', 'event-logs', 'fleets', 'maintenance-logs', 'shipment-records', 'voyage-risk', 'all'];
type Rec = Record<string, any>;
/** Bodies are rounded to 12 significant digits: compare relatively. */
const near = (x: number, y: number): void => {
  expect(Math.abs(x - y)).to.be.at.most(1e-10 * Math.max(1, Math.abs(y)));
};

// independent geometry (not the service's code): haversine and slerp along legs
const R = 3440.065;
const rad = (d: number) => (d * Math.PI) / 180;
function hav(a: Rec, b: Rec): number {
  const h = Math.sin(rad(b.lat - a.lat) / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(rad(b.lon - a.lon) / 2) ** 2;
  return 2 * R * Math.asin(Math.sqrt(h));
}
function along(pts: Rec[], d: number): Rec {
  for (const [a, b] of pairs(pts)) {
    const leg = hav(a, b);
    if (d <= leg) {
      const f = d / leg;
      const s = leg / R;
      const va = [Math.cos(rad(a.lat)) * Math.cos(rad(a.lon)), Math.cos(rad(a.lat)) * Math.sin(rad(a.lon)), Math.sin(rad(a.lat))];
      const vb = [Math.cos(rad(b.lat)) * Math.cos(rad(b.lon)), Math.cos(rad(b.lat)) * Math.sin(rad(b.lon)), Math.sin(rad(b.lat))];
      const v = va.map((x, k) => (Math.sin((1 - f) * s) * x + Math.sin(f * s) * vb[k]!) / Math.sin(s));
      return { lat: (Math.atan2(v[2]!, Math.hypot(v[0]!, v[1]!)) * 180) / Math.PI, lon: (Math.atan2(v[1]!, v[0]!) * 180) / Math.PI };
    }
    d -= leg;
  }
  return pts.at(-1)!;
}
const addMonthsUtc = (date: string, m: number): string => {
  const d = new Date(`${date}T00:00:00Z`);
  const target = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + m, 1));
  const last = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  return new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth(), Math.min(d.getUTCDate(), last))).toISOString().slice(0, 10);
};

describe('fleet routes', () => {
  const app = withTestApp();
  const body: Record<string, Rec> = {};
  before(async () => {
    for (const r of ROUTES) {
      const res = await app().http.get(`${API}/${r}`);
      expect(res.status, r).to.equal(200);
      body[r] = res.body;
    }
  });

  it('every body carries the envelope, as_of and the synthetic dataset label', () => {
    for (const r of ROUTES) {
      const b = body[r]!;
      expect(b.doctrine, r).to.equal('v11');
      expect(b.as_of).to.equal('2025-06-30T00:00:00Z');
      expect(b.dataset).to.include({ seed: 42, synthetic: true });
      expect(b.data_kind).to.equal('dataset');
      expect(b.honesty).to.match(/synthetic/i);
      expect(b.limits.map((l: Rec) => l.code)).to.include('SYNTHETIC_FLEET_DATASET');
      for (const s of b.sources) expect(s).to.have.keys('leader', 'kind', 'url', 'data_kind');
    }
    expect(body.vessels!.schema).to.equal('svc.fleet-vessels/v1');
  });

  it('errors: POST is 405 with Allow, an unknown query parameter is 422 extra_forbidden', async () => {
    for (const r of ROUTES) {
      const post = await app().http.post(`${API}/${r}`);
      expect(post.status, r).to.equal(405);
      expect(post.headers.allow).to.include('GET');
      const bad = await app().http.get(`${API}/${r}?as_of=2030-01-01`);
      expect(bad.status, r).to.equal(422);
      expect(bad.body.detail[0]).to.include({ type: 'extra_forbidden' });
      expect(bad.body.detail[0].loc).to.deep.equal(['query', 'as_of']);
    }
  });

  it('/vessels: IMO check digits valid and unique; MMSI MID matches the flag; call sign in the flag series', () => {
    const items = body.vessels!.items as Rec[];
    expect(new Set(items.map((v) => v.imo)).size).to.equal(12);
    for (const v of items) {
      expect(isValidImoShip(v.imo), v.imo).to.equal(true);
      expect(v.mmsi).to.match(/^\d{9}$/);
      const flag = FLAG_BY_ISO2.get(v.flag.iso2)!;
      expect(flag.mids).to.include(Number(v.mmsi.slice(0, 3)));
      expect(v.flag.mid).to.equal(Number(v.mmsi.slice(0, 3)));
      expect(flag.callSignPrefixes.some((p) => v.call_sign.startsWith(p))).to.equal(true);
      expect(String(v.ais_ship_type)).to.match(/^[78][1-49]$/);
    }
  });

  it('/vessels: GT = floor(V(0.2 + 0.02 log10 V)); under-way positions lie within 1 nm of the great-circle interpolation at as_of', () => {
    const voyages = body['shipment-records']!.items as Rec[];
    let underway = 0;
    for (const v of body.vessels!.items as Rec[]) {
      const V = v.enclosed_volume_m3;
      expect(v.gross_tonnage).to.equal(Math.floor(V * (0.2 + 0.02 * Math.log10(V))));
      if (v.position.kind !== 'dataset_voyage_interpolation') continue;
      underway++;
      const voy = voyages.find((x) => x.voyage_id === v.position.voyage_id)!;
      const hours = (Date.parse(body.vessels!.as_of) - Date.parse(voy.atd)) / 3.6e6;
      expect(hav(v.position, along(voy.waypoints, voy.speed_kn * hours))).to.be.below(1);
    }
    expect(underway).to.equal(8);
  });

  it('/fleets partition the vessels; the company number passes its check digit', () => {
    const all = (body.fleets!.items as Rec[]).flatMap((f) => f.vessel_imos);
    expect([...all].sort()).to.deep.equal((body.vessels!.items as Rec[]).map((v) => v.imo).sort());
    expect(new Set(all).size).to.equal(all.length);
    for (const f of body.fleets!.items as Rec[]) expect(isValidImoCompany(f.ism_company.imo_company_number)).to.equal(true);
  });

  it('/fleets aggregates equal recomputations from /vessels, /compliance-certificates and /voyage-risk', () => {
    const bands = ['LOW', 'MEDIUM', 'HIGH', 'SEVERE'];
    for (const f of body.fleets!.items as Rec[]) {
      const vs = (body.vessels!.items as Rec[]).filter((v) => f.vessel_imos.includes(v.imo));
      const certs = (body['compliance-certificates']!.items as Rec[]).filter((c) => f.vessel_imos.includes(c.vessel_imo) || c.cert_id === f.ism_company.doc.cert_id);
      const risk = (body['voyage-risk']!.items as Rec[]).filter((r) => f.vessel_imos.includes(r.vessel_imo));
      expect(f.aggregates).to.deep.equal({
        vessels: vs.length,
        total_gt: vs.reduce((a, v) => a + v.gross_tonnage, 0),
        total_dwt: vs.reduce((a, v) => a + v.deadweight_t, 0),
        mean_age_years: Math.round((vs.reduce((a, v) => a + v.age_years, 0) / vs.length) * 100) / 100,
        detentions_36m: vs.reduce((a, v) => a + v.psc_36m.detentions, 0),
        certificates_not_valid: certs.filter((c) => c.status === 'EXPIRED' || c.status === 'ENDORSEMENT_OVERDUE').length,
        max_voyage_risk_band: bands[Math.max(...risk.map((r) => bands.indexOf(r.band)))],
      });
    }
  });

  it('/compliance-certificates: windows sit on the anniversaries; validity never exceeds 5 years', () => {
    for (const c of body['compliance-certificates']!.items as Rec[]) {
      if (c.expiry_date) expect(c.expiry_date <= addMonthsUtc(c.issue_date, 60), c.cert_id).to.equal(true);
      for (const w of c.windows) {
        const anniv = addMonthsUtc(c.issue_date, 12 * w.anniversary);
        if (c.endorsement_rule === 'INTERMEDIATE_2_3') {
          expect([w.opens, w.closes]).to.deep.equal([addMonthsUtc(c.issue_date, 24), addMonthsUtc(c.issue_date, 36)]);
        } else {
          expect([w.opens, w.closes], c.cert_id).to.deep.equal([addMonthsUtc(anniv, -3), addMonthsUtc(anniv, 3)]);
        }
        if (w.endorsed_on) expect(w.endorsed_on >= w.opens && w.endorsed_on <= w.closes).to.equal(true);
      }
    }
  });

  it('/compliance-certificates: hand-checked statuses at as_of (overdue intermediate, expiring in 30 days, expired)', () => {
    const items = body['compliance-certificates']!.items as Rec[];
    const asOf = '2025-06-30';
    for (const c of items) {
      const days = c.expiry_date ? Math.round((Date.parse(c.expiry_date) - Date.parse(asOf)) / 864e5) : null;
      expect(c.days_to_expiry).to.equal(days);
      const overdue = c.windows.some((w: Rec) => w.closes < asOf && !w.endorsed_on);
      const expected = days !== null && days < 0 ? 'EXPIRED' : overdue ? 'ENDORSEMENT_OVERDUE' : days !== null && days <= 90 ? 'EXPIRING_90D' : c.windows.some((w: Rec) => w.opens <= asOf && !w.endorsed_on) ? 'WINDOW_OPEN' : 'VALID';
      expect(c.status, c.cert_id).to.equal(expected);
    }
    const issc = items.find((c) => c.type === 'ISSC' && c.windows[0].closes < asOf && !c.windows[0].endorsed_on)!;
    expect(issc.status).to.equal('ENDORSEMENT_OVERDUE');
    expect(items.find((c) => c.days_to_expiry === 30)!.status).to.equal('EXPIRING_90D');
    expect(items.filter((c) => c.status === 'EXPIRED')).to.have.length.at.least(1);
    expect(items.filter((c) => c.status === 'WINDOW_OPEN')).to.have.length.at.least(1);
  });

  it('/port-state-deficiencies: detained exactly when some deficiency carries action code 30', () => {
    const insp = body['port-state-deficiencies']!.inspections as Rec[];
    for (const p of insp) {
      for (const d of p.deficiencies) expect(d.ground_for_detention).to.equal(d.action_codes.includes(30));
      expect(p.detained).to.equal(p.deficiencies.some((d: Rec) => d.action_codes.includes(30)));
      if (!p.detained) expect(p.released_on).to.equal(null);
    }
    expect(insp.filter((p) => p.detained)).to.have.length.at.least(1);
  });

  it('/port-state-deficiencies: codes from the shipped table with their area; /vessels psc_36m equals the summaries', () => {
    const b = body['port-state-deficiencies']!;
    for (const d of (b.inspections as Rec[]).flatMap((p) => p.deficiencies)) {
      expect(d.code).to.match(/^\d{5}$/);
      expect(DEFICIENCY_CODES).to.have.property(d.code);
      expect(d.area_code).to.equal(d.code.slice(0, 2));
    }
    for (const v of body.vessels!.items as Rec[]) {
      const mine = (b.inspections as Rec[]).filter((p) => p.vessel_imo === v.imo && p.date >= b.window.from);
      expect(v.psc_36m).to.deep.equal({ inspections: mine.length, deficiencies: mine.reduce((a, p) => a + p.deficiencies.length, 0), detentions: mine.filter((p) => p.detained).length });
    }
  });

  it('/maintenance-logs: running hours never decrease along a component log and stay ≤ running_hours_now', () => {
    const b = body['maintenance-logs']!;
    for (const c of b.components as Rec[]) {
      const log = (b.items as Rec[]).filter((l) => l.component_id === c.component_id).sort((x, y) => (x.date < y.date ? -1 : x.date > y.date ? 1 : 0));
      expect(log.length).to.be.greaterThan(0);
      for (const [prev, next] of pairs(log)) expect(next.running_hours_at).to.be.at.least(prev.running_hours_at);
      expect(log.at(-1)!.running_hours_at).to.be.at.most(c.running_hours_now);
    }
  });

  it('/maintenance-logs: every linked deficiency is on the same vessel and dated on or before the job', () => {
    const insp = body['port-state-deficiencies']!.inspections as Rec[];
    const linked = (body['maintenance-logs']!.items as Rec[]).filter((l) => l.linked_deficiency);
    expect(linked.length).to.be.at.least(1);
    for (const l of linked) {
      const p = insp.find((i) => i.deficiencies.some((d: Rec) => d.deficiency_id === l.linked_deficiency))!;
      expect(p.vessel_imo).to.equal(l.vessel_imo);
      expect(p.date <= l.date).to.equal(true);
    }
  });

  it('/predictive-maintenance: item values recompute from the class model; p_fail_90d ≥ p_fail_30d', () => {
    const b = body['predictive-maintenance']!;
    for (const it of b.items as Rec[]) {
      const m = (b.models as Rec[]).find((x) => x.component_class === it.class)!;
      const F = (t0: number, h: number) => 1 - Math.exp(-(((t0 + h) / m.eta_hours) ** m.beta - (t0 / m.eta_hours) ** m.beta));
      expect(it.reliability).to.be.closeTo(Math.exp(-((it.age_hours / m.eta_hours) ** m.beta)), 1e-9);
      expect(it.p_fail_30d).to.be.closeTo(F(it.age_hours, it.avg_rh_per_day * 30), 1e-9);
      expect(it.p_fail_90d).to.be.at.least(it.p_fail_30d);
      expect(it.recommendation === 'OVERDUE').to.equal(it.age_hours > it.pms_interval_hours);
    }
    expect((b.items as Rec[]).some((i) => i.recommendation === 'OVERDUE')).to.equal(true);
    expect(new Set((b.models as Rec[]).map((m) => m.parameters_basis))).to.deep.equal(new Set(['fitted', 'prior']));
  });

  it('/forecast-modules: pms-due equals as_of + (interval − T)/rate; CII results recompute; every module lists inputs and assumptions', () => {
    const mods = body['forecast-modules']!.items as Rec[];
    for (const m of mods) {
      expect(m.inputs.length, m.module_id).to.be.greaterThan(0);
      expect(m.assumptions.length, m.module_id).to.be.greaterThan(0);
    }
    const asOf = Date.parse(body['forecast-modules']!.as_of);
    for (const r of mods.find((m) => m.module_id === 'pms-due')!.results as Rec[]) {
      const days = (r.pms_interval_hours - r.age_hours) / r.avg_rh_per_day;
      near(r.days, days);
      expect(r.due_date).to.equal(new Date(asOf + days * 864e5).toISOString().slice(0, 10));
    }
    for (const r of mods.find((m) => m.module_id === 'cii-rating')!.results as Rec[]) {
      if (r.attained_aer === null) continue;
      near(r.attained_aer, (r.co2_t * 1e6) / (r.capacity_dwt * r.distance_nm));
    }
  });

  it('/shipment-records: distance and CO2 recompute within 0.1%; eta > etd', () => {
    for (const v of body['shipment-records']!.items as Rec[]) {
      let d = 0;
      for (let i = 1; i < v.waypoints.length; i++) d += hav(v.waypoints[i - 1], v.waypoints[i]);
      expect(v.distance_nm / d).to.be.closeTo(1, 1e-3);
      expect(v.co2_t).to.be.closeTo(v.fuel.hfo_t * CF.hfo + v.fuel.mgo_t * CF.mgo + v.fuel.lng_t * CF.lng, 1e-6 * (1 + v.co2_t));
      expect(Date.parse(v.eta)).to.be.greaterThan(Date.parse(v.etd));
    }
  });

  it('/shipment-records: UN/LOCODE ports; first and last waypoints within 30 nm of the ports', () => {
    for (const v of body['shipment-records']!.items as Rec[]) {
      for (const [code, wp] of [[v.load_port, v.waypoints[0]], [v.discharge_port, v.waypoints.at(-1)]]) {
        expect(code).to.match(/^[A-Z]{2}[A-Z2-9]{3}$/);
        expect(hav(wp, PORT_BY_LOCODE.get(code)!)).to.be.below(30);
      }
    }
  });

  it('/voyage-risk: contributions are weight × value and sum to the score; weights sum to 100; bands follow the thresholds', () => {
    const b = body['voyage-risk']!;
    expect(Object.values(b.method.weights as Record<string, number>).reduce((a, w) => a + w, 0)).to.equal(100);
    for (const it of b.items as Rec[]) {
      let sum = 0;
      for (const f of it.factors) {
        expect(f.value).to.be.within(0, 1);
        expect(f.contribution).to.be.closeTo(f.weight * f.value, 1e-9);
        expect(f.weight).to.equal(b.method.weights[f.factor]);
        sum += f.contribution;
      }
      expect(it.score).to.be.closeTo(sum, 1e-9);
      expect(it.band).to.equal(it.score < 25 ? 'LOW' : it.score < 50 ? 'MEDIUM' : it.score < 75 ? 'HIGH' : 'SEVERE');
    }
    // the Suez route crosses the Gulf of Aden waypoint (12.5N 48E): war factor 1
    const suez = (b.items as Rec[]).find((i) => (body['shipment-records']!.items as Rec[]).find((v) => v.voyage_id === i.voyage_id)!.route_id === 'ASIA-EUROPE-SUEZ')!;
    expect(suez.factors.find((f: Rec) => f.factor === 'war_piracy_area').value).to.equal(1);
  });

  const resolve = (ev: Rec): unknown => {
    const spec = body['ai-briefings']!.evidence_resolution[ev.collection];
    const rec = (body.all![ev.collection][spec.array] as Rec[]).find((r) => r[spec.id] === ev.id);
    expect(rec, `${ev.collection}/${ev.id}`).to.not.equal(undefined);
    return (ev.field as string).split('.').reduce<any>((n, k) => n?.[k], rec);
  };

  it('/ai-briefings: byte-identical across calls; inputs_sha256 commits to the resolved evidence values', async () => {
    const a = await app().http.get(`${API}/ai-briefings`);
    const b2 = await app().http.get(`${API}/ai-briefings`);
    expect(a.text).to.equal(b2.text);
    expect(body['ai-briefings']!.generator).to.deep.equal({ kind: 'deterministic_template', id: 'template-v1', llm_used: false });
    for (const br of body['ai-briefings']!.items as Rec[]) {
      const values = br.bullets.flatMap((bl: Rec) => bl.evidence.map(resolve));
      expect(br.inputs_sha256).to.equal(createHash('sha256').update(canonicalJson(values)).digest('hex'));
    }
  });

  it('/ai-briefings: every number and date in a bullet equals one of its evidence values', () => {
    let numbers = 0;
    for (const br of body['ai-briefings']!.items as Rec[]) {
      for (const bl of br.bullets) {
        const values = bl.evidence.map((e: Rec) => String(resolve(e)));
        for (const m of (bl.text as string).matchAll(/(?<![\w.-])(\d{4}-\d{2}-\d{2}|-?\d+(?:\.\d+)?)(?![\w-])/g)) {
          numbers++;
          expect(values, `${bl.text}: ${m[1]}`).to.include(m[1]);
        }
      }
    }
    expect(numbers).to.be.greaterThan(50);
  });

  it('/event-logs: sorted by ts then event_id; every ref resolves to a record', () => {
    const items = body['event-logs']!.items as Rec[];
    const ids: Record<string, [string, string]> = { compliance_certificates: ['items', 'cert_id'], port_state_deficiencies: ['inspections', 'inspection_id'], maintenance_logs: ['items', 'log_id'], shipment_records: ['items', 'voyage_id'] };
    pairs(items).forEach(([a, b], i) => expect(a.ts < b.ts || (a.ts === b.ts && a.event_id < b.event_id), `${i + 1}`).to.equal(true));
    for (const e of items) {
      const [arr, key] = ids[e.ref.collection]!;
      expect((body.all![e.ref.collection][arr] as Rec[]).some((r) => r[key] === e.ref.id), e.event_id).to.equal(true);
      expect(e.ts <= body['event-logs']!.as_of).to.equal(true);
    }
  });

  it('/event-logs: PSC_DETENTION count = detained inspections; CERT_EXPIRED count = EXPIRED certificates', () => {
    const items = body['event-logs']!.items as Rec[];
    const detained = (body['port-state-deficiencies']!.inspections as Rec[]).filter((p) => p.detained).length;
    const expired = (body['compliance-certificates']!.items as Rec[]).filter((c) => c.status === 'EXPIRED').length;
    expect(items.filter((e) => e.type === 'PSC_DETENTION')).to.have.length(detained);
    expect(items.filter((e) => e.type === 'CERT_EXPIRED')).to.have.length(expired);
    expect(expired).to.be.greaterThan(0);
  });

  it('/all: each member deep-equals the body of its own route (less the shared envelope)', () => {
    const ENVELOPE = ['schema', 'doctrine', 'as_of', 'dataset', 'data_kind', 'derived_fields', 'honesty', 'limits', 'sources'];
    for (const k of ['schema', 'doctrine', 'as_of', 'dataset', 'data_kind', 'honesty', 'limits', 'sources']) expect(body.all!, k).to.have.property(k);
    const members: Record<string, string> = { vessels: 'vessels', fleets: 'fleets', compliance_certificates: 'compliance-certificates', port_state_deficiencies: 'port-state-deficiencies', maintenance_logs: 'maintenance-logs', predictive_maintenance: 'predictive-maintenance', forecast_modules: 'forecast-modules', shipment_records: 'shipment-records', voyage_risk: 'voyage-risk', ai_briefings: 'ai-briefings', event_logs: 'event-logs' };
    for (const [member, route] of Object.entries(members)) {
      const m = body.all![member] as Rec;
      expect(m, member).to.be.an('object');
      // the route's own keys drive the loop, less the envelope that /all carries once at its top
      // level: an empty or partial member fails, and so does a member with extra keys
      const data = Object.keys(body[route]!).filter((k) => !ENVELOPE.includes(k));
      expect(data.length, member).to.be.greaterThan(0);
      expect(Object.keys(m).sort(), member).to.deep.equal([...data].sort());
      for (const k of data) expect(m[k], `${member}.${k}`).to.deep.equal(body[route]![k]);
    }
  });

  it('/all: ETag is the SHA-256 of the body and If-None-Match answers 304', async () => {
    for (const r of ['all', 'vessels']) {
      const res = await app().http.get(`${API}/${r}`).buffer(true).parse((resp, cb) => {
        const chunks: Buffer[] = [];
        resp.on('data', (c: Buffer) => chunks.push(c));
        resp.on('end', () => cb(null, Buffer.concat(chunks)));
      });
      const sha = createHash('sha256').update(res.body as Buffer).digest('hex');
      expect(res.headers.etag).to.equal(`"${sha}"`);
      const again = await app().http.get(`${API}/${r}`).set('If-None-Match', res.headers.etag!);
      expect(again.status).to.equal(304);
      expect(again.text ?? '').to.equal('');
      const stale = await app().http.get(`${API}/${r}`).set('If-None-Match', '"0000"');
      expect(stale.status).to.equal(200);
    }
  });
});
