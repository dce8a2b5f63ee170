/**
 * The activity half of the generator: voyages, maintained components with their logs, and PSC
 * inspections. Times are whole hours before `as_of`; each draw comes from the stream passed in.
 */
import type { Rng } from '../../lib/prng.js';
import { addDays, DAY_MS, HOUR_MS, isoDate, isoInstant, toMs } from '../dates.js';
import { polylineNm } from '../geo.js';
import { COMPONENT_CLASSES, DEFICIENCY_CODES, PORT_BY_LOCODE, PORTS, ROUTES } from './reference.js';
import type { Component, Deficiency, MaintenanceLog, PscInspection, Vessel, Voyage } from './types.js';

const round = (x: number, dp: number): number => Number(x.toFixed(dp));

/** Route per vessel index (4 per fleet: tankers, bulk, container). */
const ROUTE_OF = ['GULF-FAR-EAST-CRUDE', 'GULF-FAR-EAST-CRUDE', 'GULF-FAR-EAST-CRUDE', 'NORTH-ATLANTIC', 'IRON-ORE-PACIFIC', 'IRON-ORE-PACIFIC', 'COAL-CAPE-EUROPE', 'COAL-CAPE-EUROPE', 'ASIA-EUROPE-SUEZ', 'ASIA-EUROPE-SUEZ', 'ASIA-EUROPE-SUEZ', 'NORTH-ATLANTIC'];
const SPEED: Record<string, [number, number]> = { 'Crude Oil Tanker': [12, 13.5], 'Bulk Carrier': [11.5, 13], 'Container Ship': [16, 19] };
const HFO_PER_DAY: Record<string, [number, number]> = { 'Crude Oil Tanker': [36, 44], 'Bulk Carrier': [27, 33], 'Container Ship': [60, 80] };
const LADEN_CARGO: Record<string, string> = { 'GULF-FAR-EAST-CRUDE': 'CRUDE_OIL', 'IRON-ORE-PACIFIC': 'IRON_ORE', 'COAL-CAPE-EUROPE': 'COAL' };

export function generateVoyages(rng: Rng, vessels: Vessel[], asOf: string): Voyage[] {
  const t0 = toMs(asOf);
  const at = (h: number): string => isoInstant(t0 + h * HOUR_MS);
  const out: Voyage[] = [];
  vessels.forEach((v, i) => {
    const route = ROUTES.find((r) => r.id === ROUTE_OF[i])!;
    const speed = round(rng.uniform(...SPEED[v.ship_type]!), 1);
    const hfoPerDay = rng.uniform(...HFO_PER_DAY[v.ship_type]!);
    const underway = i % 3 !== 2;
    const legs: Voyage[] = [];
    let nextEtd = 0; // hours relative to as_of of the following voyage's ETD
    for (let n = 3; n >= 1; n--) {
      const laden = v.ship_type === 'Container Ship' || n !== 2;
      const [from, to] = laden ? [route.from, route.to] : [route.to, route.from];
      const via = laden ? route.via : [...route.via].reverse();
      const ends = [PORT_BY_LOCODE.get(from)!, PORT_BY_LOCODE.get(to)!];
      const waypoints = [ends[0]!, ...via.map(([lat, lon]) => ({ lat, lon })), ends[1]!].map((p) => ({ lat: round(p.lat, 4), lon: round(p.lon, 4) }));
      const hours = polylineNm(waypoints) / speed;
      let atd: number;
      let ata: number | null;
      if (n === 3 && underway) {
        atd = -Math.round(rng.uniform(0.15, 0.85) * hours);
        ata = null;
      } else {
        ata = n === 3 ? -Math.round(rng.uniform(12, 72)) : nextEtd - Math.round(rng.uniform(36, 120));
        atd = ata - Math.round(hours * rng.uniform(1.0, 1.06));
      }
      const etd = atd - Math.round(rng.uniform(0, 18));
      nextEtd = etd;
      const seaDays = ((ata ?? 0) - atd) / 24;
      const cargo: Voyage['cargo'] =
        v.ship_type === 'Container Ship'
          ? { kind: 'CONTAINERS', quantity: Math.round(rng.uniform(2500, 4200)), unit: 'TEU' }
          : !laden
            ? { kind: 'BALLAST', quantity: 0, unit: 't' }
            : route.id === 'NORTH-ATLANTIC'
              ? { kind: 'REFINED_PRODUCTS', quantity: Math.round(v.deadweight_t * rng.uniform(1.0, 1.1)), unit: 'm3' }
              : { kind: LADEN_CARGO[route.id]!, quantity: Math.round(v.deadweight_t * rng.uniform(0.9, 0.97)), unit: 't' };
      legs.push({
        voyage_id: `V-${v.imo}-${n}`,
        vessel_imo: v.imo,
        voyage_no: 2400 + n,
        route_id: route.id,
        load_port: from,
        discharge_port: to,
        etd: at(etd),
        eta: at(etd + Math.ceil(hours)),
        atd: at(atd),
        ata: ata === null ? null : at(ata),
        speed_kn: speed,
        waypoints,
        cargo,
        bl_number: cargo.kind === 'BALLAST' ? null : `BL${from}${String(rng.int(1e6)).padStart(6, '0')}`,
        // fuel consumed so far: a whole passage when completed, to date when under way
        fuel: { hfo_t: round(hfoPerDay * seaDays, 1), mgo_t: round(seaDays * rng.uniform(0.8, 1.6), 1), lng_t: 0 },
        indicators: {
          ais_gap_hours_max: i === 1 && n === 3 ? 31.5 : round(rng.uniform(0, 6), 1),
          sts_transfer: i === 1 && n === 3,
          flag_changed_12m: i === 6 && n >= 2,
          ownership_changed_12m: false,
        },
      });
    }
    out.push(...legs.reverse());
  });
  return out;
}

export interface LinkTarget {
  vessel_imo: string;
  log: MaintenanceLog;
}

/** Overdue component (vessel 3 turbocharger) and the fire pump repaired after a PSC finding (vessel 10). */
const OVERDUE_AT = { vessel: 3, class: 'TURBOCHARGER' };
const LINKED_AT = { vessel: 10, class: 'FIRE_PUMP' };

/**
 * Lives are simulated backwards from `as_of`: the current life has age A; earlier lives last
 * min(T_f, interval) with T_f ~ Weibull(β, η) of the class (failure when T_f < interval, planned
 * overhaul otherwise) until the recorded history (≤ 5 years, ≤ 3 intervals) is covered.
 */
export function generateMaintenance(rng: Rng, vessels: Vessel[], asOf: string): { components: Component[]; logs: MaintenanceLog[]; link: LinkTarget } {
  const t0 = toMs(asOf);
  const components: Component[] = [];
  const logs: MaintenanceLog[] = [];
  let link: LinkTarget | null = null;
  vessels.forEach((v, vi) => {
    for (const cls of COMPONENT_CLASSES) {
      const componentId = `${v.imo}-${cls.id}`;
      const avg = round(rng.uniform(...cls.rhPerDay), 2);
      const I = cls.intervalHours;
      const forcedOverdue = vi === OVERDUE_AT.vessel && cls.id === OVERDUE_AT.class;
      const linked = vi === LINKED_AT.vessel && cls.id === LINKED_AT.class;
      const age = forcedOverdue ? Math.round(I * 1.08) : linked ? Math.round(avg * rng.uniform(200, 700)) : Math.max(1, Math.round(rng.uniform(0.05, 0.9) * I));
      const history = Math.min(5 * 365 * avg, 3 * I);
      const lives: { length: number; failed: boolean }[] = [];
      let covered = 0;
      while (covered < history) {
        const tf = cls.etaHours * (-Math.log(1 - rng.next())) ** (1 / cls.beta);
        let life = { length: Math.max(1, Math.round(Math.min(tf, I))), failed: tf < I };
        if (linked && lives.length === 0) life = { length: Math.max(1, Math.round(life.length * rng.uniform(0.5, 0.9))), failed: false };
        lives.unshift(life);
        covered += life.length;
      }
      const r0 = Math.round(rng.uniform(0, 2 * I));
      const rhNow = r0 + covered + age;
      components.push({ component_id: componentId, vessel_imo: v.imo, class: cls.id, running_hours_now: rhNow, avg_rh_per_day: avg });
      const dateAt = (rh: number): string => isoDate(t0 - ((rhNow - rh) / avg) * DAY_MS);
      const entries: Omit<MaintenanceLog, 'log_id'>[] = [];
      const base = { vessel_imo: v.imo, component_id: componentId, component_class: cls.id, job_code: cls.jobCode, interval: { hours: I, months: null }, linked_deficiency: null };
      const inspect = (from: number, length: number): void => {
        if (length > 10 && rng.bernoulli(0.4)) {
          const rh = from + Math.round(length * rng.uniform(0.3, 0.7));
          entries.push({ ...base, kind: 'CONDITION_BASED', date: dateAt(rh), running_hours_at: rh, outcome: 'INSPECTED_OK', findings: 'Condition monitoring: readings within limits', parts: [] });
        }
      };
      // the first record closes a life that began before records start: its length is unknown
      let rh = r0;
      entries.push({ ...base, kind: 'PLANNED', date: dateAt(rh), running_hours_at: rh, outcome: 'OVERHAULED', findings: 'Overhaul at PMS interval (first entry of the record)', parts: [...cls.parts] });
      lives.forEach((life, k) => {
        inspect(rh, life.length);
        rh += life.length;
        const unplannedRepair = linked && k === lives.length - 1;
        entries.push({
          ...base,
          kind: life.failed || unplannedRepair ? 'UNPLANNED' : 'PLANNED',
          date: dateAt(rh),
          running_hours_at: rh,
          outcome: life.failed ? 'FAILED' : rng.bernoulli(0.2) ? 'REPLACED' : 'OVERHAULED',
          findings: life.failed ? 'In-service failure; unit repaired and returned to service' : unplannedRepair ? 'Corrective overhaul after a port state control finding' : 'Overhaul at PMS interval; wear within limits',
          parts: cls.parts.slice(0, 1 + rng.int(cls.parts.length)),
        });
      });
      inspect(rh, age);
      entries.sort((a, b) => a.running_hours_at - b.running_hours_at);
      entries.forEach((e, k) =>
        logs.push({
          log_id: `ML-${v.imo}-${cls.jobCode}-${String(k + 1).padStart(2, '0')}`,
          vessel_imo: e.vessel_imo,
          component_id: e.component_id,
          component_class: e.component_class,
          job_code: e.job_code,
          kind: e.kind,
          date: e.date,
          running_hours_at: e.running_hours_at,
          interval: e.interval,
          outcome: e.outcome,
          findings: e.findings,
          parts: e.parts,
          linked_deficiency: e.linked_deficiency,
        }),
      );
      if (linked) link = { vessel_imo: v.imo, log: logs.filter((l) => l.component_id === componentId && l.kind === 'UNPLANNED').at(-1)! };
    }
  });
  return { components, logs, link: link! };
}

const ROUTINE_CODES = Object.keys(DEFICIENCY_CODES).filter((c) => !c.startsWith('01'));
const CERT_CODES = Object.keys(DEFICIENCY_CODES).filter((c) => c.startsWith('01'));
const ROUTINE_ACTIONS: number[][] = [[10], [17], [16], [15], [17, 10], [16, 10], [18]];
const MOU_PORTS = PORTS.filter((p) => p.mou !== null);

/** Two inspections per vessel inside the 36 months before `as_of`; the fire-pump detention is placed before its repair. */
export function generatePsc(rng: Rng, vessels: Vessel[], asOf: string, link: LinkTarget, logs: MaintenanceLog[]): PscInspection[] {
  const asOfDate = asOf.slice(0, 10);
  const out: PscInspection[] = [];
  for (const v of vessels) {
    const drafts: Omit<PscInspection, 'inspection_id'>[] = [];
    for (let k = 0; k < 2; k++) {
      const port = MOU_PORTS[rng.int(MOU_PORTS.length)]!;
      const detention = v.imo === link.vessel_imo && k === 0;
      const date = detention ? addDays(link.log.date, -(1 + rng.int(3))) : addDays(asOfDate, -Math.floor(rng.uniform(10, 1090)));
      const n = Math.min(6, rng.poisson(1.8));
      const deficiencies: Omit<Deficiency, 'deficiency_id'>[] = [];
      if (detention) deficiencies.push({ code: '07113', description: DEFICIENCY_CODES['07113']!, action_codes: [30, 10, 35], ro_related: false });
      for (let d = 0; d < n; d++) {
        const pool = rng.bernoulli(0.1) ? CERT_CODES : ROUTINE_CODES;
        const code = pool[rng.int(pool.length)]!;
        deficiencies.push({ code, description: DEFICIENCY_CODES[code]!, action_codes: [...ROUTINE_ACTIONS[rng.int(ROUTINE_ACTIONS.length)]!], ro_related: rng.bernoulli(0.05) });
      }
      const type = detention ? 'EXPANDED' : deficiencies.length === 0 ? 'INITIAL' : rng.bernoulli(0.5) ? 'MORE_DETAILED' : 'INITIAL';
      drafts.push({ vessel_imo: v.imo, mou: port.mou!, port_locode: port.locode, date, type, detention_lifted: detention ? addDays(link.log.date, 1) : null, deficiencies: deficiencies as Deficiency[] });
    }
    drafts.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
    drafts.forEach((d, k) => {
      const inspection_id = `PSC-${v.imo}-${k + 1}`;
      const deficiencies = (d.deficiencies as Omit<Deficiency, 'deficiency_id'>[]).map((x, j) => ({ deficiency_id: `${inspection_id}-D${j + 1}`, ...x }));
      out.push({ inspection_id, ...d, deficiencies });
    });
  }
  // the corrective fire-pump job points at the deficiency that caused it
  const detained = out.find((p) => p.vessel_imo === link.vessel_imo && p.detention_lifted !== null)!;
  logs.find((l) => l.log_id === link.log.log_id)!.linked_deficiency = detained.deficiencies.find((d) => d.code === '07113')!.deficiency_id;
  return out;
}
