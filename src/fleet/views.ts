/**
 * Builds every fleet view once, at start-up, from the loaded dataset: payloads are computed,
 * rounded once (12 significant digits, the project rule), wrapped in the common envelope and
 * serialised to buffers with a strong ETag, so each request is a buffer write and every answer is
 * byte-identical.
 */
import { roundDeep, sha256Hex } from '../lib/numbers.js';
import { RECEIPT_DOCTRINE } from '../core/doctrine.js';
import { briefingsPayload, type Collections } from './briefings.js';
import type { FleetDataset } from './dataset/types.js';
import { eventsPayload } from './events.js';
import { forecastPayload } from './forecast.js';
import { componentLives, maintenanceLogsPayload, predictivePayload } from './maintenance.js';
import { pscPayload } from './psc.js';
import { certificatesPayload, fleetsPayload, vesselsPayload } from './registry.js';
import { FLEET_SOURCES, type SourceKey } from './sources.js';
import { shipmentPayload } from './voyages.js';
import { voyageRiskPayload } from './voyage-risk.js';

export interface ViewSpec {
  /** Route segment under /api/svc/v1/fleet and the snake_case member of /fleet/all. */
  route: string;
  member: string;
  summary: string;
  derived: string[];
  sources: SourceKey[];
}

export const VIEW_SPECS: readonly ViewSpec[] = [
  { route: 'vessels', member: 'vessels', summary: 'Vessels with age, dataset position, certificate summary and PSC counts at as_of', derived: ['age_years', 'position', 'certificate_summary', 'psc_36m'], sources: ['S1', 'S2', 'S3', 'S4', 'S5', 'S6', 'S8'] },
  { route: 'forecast-modules', member: 'forecast_modules', summary: 'Deterministic forecast modules: certificate windows, PMS due, failure risk, CII rating, PSC window', derived: ['results'], sources: ['S10', 'S24', 'S26', 'S28', 'S29', 'S30', 'S31'] },
  { route: 'predictive-maintenance', member: 'predictive_maintenance', summary: 'Weibull models fitted to the maintenance logs and per-component failure risk', derived: ['models', 'items'], sources: ['S24', 'S26', 'S27'] },
  { route: 'compliance-certificates', member: 'compliance_certificates', summary: 'Statutory certificates with survey windows and status at as_of', derived: ['windows', 'next_window', 'status', 'days_to_expiry'], sources: ['S10', 'S11', 'S12', 'S13', 'S14', 'S15', 'S18'] },
  { route: 'port-state-deficiencies', member: 'port_state_deficiencies', summary: 'PSC inspections and deficiencies with computed detention and 36-month summaries', derived: ['detained', 'released_on', 'area_code', 'area_name', 'ground_for_detention', 'rectified', 'summary_by_vessel'], sources: ['S18', 'S19', 'S20', 'S21', 'S23'] },
  { route: 'ai-briefings', member: 'ai_briefings', summary: 'Deterministic template briefings with evidence pointers (no language model)', derived: ['items'], sources: [] },
  { route: 'event-logs', member: 'event_logs', summary: 'Events derived from the dataset up to as_of, sorted by ts then event_id', derived: ['items'], sources: [] },
  { route: 'fleets', member: 'fleets', summary: 'Fleets with their ISM company, DOC status and aggregates', derived: ['ism_company.doc.status', 'aggregates'], sources: ['S2', 'S11'] },
  { route: 'maintenance-logs', member: 'maintenance_logs', summary: 'Maintenance log entries and the component register', derived: ['components[].last_overhaul_rh'], sources: ['S24', 'S25'] },
  { route: 'shipment-records', member: 'shipment_records', summary: 'Voyages with distance, CO2 and sanctions indicators', derived: ['distance_nm', 'co2_t', 'status'], sources: ['S28', 'S33'] },
  { route: 'voyage-risk', member: 'voyage_risk', summary: 'Voyage risk with a published formula, weights and per-factor inputs', derived: ['score', 'band', 'factors'], sources: ['S33', 'S34', 'S35', 'S37', 'S38', 'S65'] },
];

export interface BuiltView {
  body: Buffer;
  etag: string;
}

export const FLEET_HONESTY =
  'Synthetic sample dataset generated from a fixed seed: identifiers pass their check digits but are not registry-verified, positions are interpolated from dataset voyages (not AIS), and every derived value is computed at the dataset as_of date, not now.';

const LIMITS = [
  { code: 'SYNTHETIC_FLEET_DATASET', detail: 'Seeded sample data; any match with a real ship or company is coincidental.' },
  { code: 'AS_OF_NOT_NOW', detail: 'Statuses, windows, ages and forecasts are relative to the dataset as_of.' },
];

function serialise(value: unknown): BuiltView {
  const body = Buffer.from(JSON.stringify(value));
  return { body, etag: `"${sha256Hex(body)}"` };
}

/** Every fleet body by route segment, plus `all`. */
export function buildFleetViews(ds: FleetDataset): Map<string, BuiltView> {
  const lives = componentLives(ds);
  const psc = pscPayload(ds);
  const certs = certificatesPayload(ds);
  const vessels = vesselsPayload(ds, certs, psc);
  const risk = voyageRiskPayload(ds, psc.summary_by_vessel);
  const predictive = predictivePayload(ds, lives);
  const payloads: Collections = {
    vessels,
    fleets: fleetsPayload(ds, vessels, certs, risk),
    compliance_certificates: certs,
    port_state_deficiencies: psc,
    maintenance_logs: maintenanceLogsPayload(ds, lives),
    predictive_maintenance: predictive,
    forecast_modules: forecastPayload(ds, certs, vessels, psc, predictive.items),
    shipment_records: shipmentPayload(ds),
    voyage_risk: risk,
    event_logs: eventsPayload(ds, certs, psc),
  };
  // rounded before the briefings read them, so the numbers printed in bullets are the served ones
  for (const k of Object.keys(payloads)) payloads[k] = roundDeep(payloads[k]) as Record<string, unknown>;
  payloads.ai_briefings = roundDeep(briefingsPayload(payloads)) as Record<string, unknown>;

  const dataset = { version: ds.version, seed: ds.seed, sha256: ds.sha256, synthetic: ds.synthetic, generator: ds.generator.source };
  const views = new Map<string, BuiltView>();
  const all: Record<string, unknown> = { schema: 'svc.fleet-all/v1', doctrine: RECEIPT_DOCTRINE, as_of: ds.as_of, dataset, data_kind: 'dataset' };
  for (const spec of VIEW_SPECS) {
    const payload = payloads[spec.member]!;
    views.set(
      spec.route,
      serialise({
        schema: `svc.fleet-${spec.route}/v1`,
        doctrine: RECEIPT_DOCTRINE,
        as_of: ds.as_of,
        dataset,
        data_kind: 'dataset',
        derived_fields: spec.derived,
        ...payload,
        honesty: FLEET_HONESTY,
        limits: LIMITS,
        sources: spec.sources.map((k) => FLEET_SOURCES[k]),
      }),
    );
    all[spec.member] = payload;
  }
  Object.assign(all, { honesty: FLEET_HONESTY, limits: LIMITS, sources: Object.values(FLEET_SOURCES) });
  views.set('all', serialise(all));
  return views;
}
