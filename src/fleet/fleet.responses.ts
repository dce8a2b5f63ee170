/**
 * Response schemas of the fleet views. The dataset is generated from a fixed seed and committed, so
 * every collection's shape is stable: each view is the common envelope plus its collection's keys
 * (items and their fields down to the leaves; keyed by year or area code: `mapOf`), and /fleet/all carries every collection.
 */
import Joi from 'joi';
import type { ObjectSchema } from 'joi';
import { bool, hex64, int, isoDay, isoTime, listOf, mapOf, nullable, num, oneOf, shape, str } from '../http/response-schema.js';
import { CERT_STATUSES } from './certificates.js';
import { EVENT_TYPES } from './events.js';
import { BAND_ORDER } from './voyage-risk.js';
import { VIEW_SPECS } from './views.js';

const company = (): ObjectSchema => shape({ name: str(), imo_company_number: str() });
const latLon = (): ObjectSchema => shape({ lat: num(), lon: num() });
/** A ring of `[lon, lat]` vertices. */
const polygon = () => listOf(listOf(num()).length(2));
const windowKind = () => oneOf('ANNUAL', 'INTERMEDIATE');
const band = () => oneOf(...BAND_ORDER);

const VESSEL = shape({
  imo: str(),
  mmsi: str(),
  call_sign: str(),
  name: str(),
  ship_type: str(),
  ais_ship_type: int(),
  flag: shape({ iso2: str().length(2), name: str(), mid: int().description('Maritime Identification Digits of the flag') }),
  port_of_registry: str(),
  gross_tonnage: int(),
  enclosed_volume_m3: int(),
  deadweight_t: int(),
  loa_m: num(),
  beam_m: num(),
  delivered: isoDay(),
  year_built: int(),
  class_society: str(),
  ism_company: company(),
  fleet_id: str(),
  age_years: num(),
  position: shape({ lat: num(), lon: num(), kind: oneOf('dataset_port_of_arrival', 'dataset_voyage_interpolation'), voyage_id: str(), method: str() }),
  certificate_summary: shape({ total: int(), need_action: int(), valid: int(), window_open: int(), expiring_90d: int(), overdue: int(), expired: int() }),
  psc_36m: shape({ inspections: int(), deficiencies: int(), detentions: int() }),
});

/** One result row of each forecast module (its `module_id` says which). */
const FORECAST_RESULT = Joi.alternatives(
  shape({ cert_id: str(), vessel_imo: nullable(str()), company_imo: nullable(str()), event: oneOf('WINDOW_OPENS', 'WINDOW_CLOSES', 'EXPIRES'), date: isoDay(), window_kind: nullable(windowKind()) }),
  shape({ component_id: str(), vessel_imo: str(), class: str(), pms_interval_hours: int(), age_hours: int(), avg_rh_per_day: num(), days: num(), due_date: isoDay() }),
  shape({ rank: int(), component_id: str(), vessel_imo: str(), p_fail_30d: num(), p_fail_90d: num() }),
  shape({
    imo: str(),
    ship_type: str(),
    capacity_dwt: int(),
    voyages: listOf(str()),
    co2_t: num(),
    distance_nm: num(),
    attained_aer: num(),
    required: mapOf(num()).description('required AER by year'),
    rating: mapOf(oneOf('A', 'B', 'C', 'D', 'E')).description('CII rating by year'),
  }),
  shape({ imo: str(), points: int(), risk_profile: str(), last_inspection: nullable(isoDay()), window: shape({ opens: isoDay(), closes: isoDay() }) }),
);

/** What each factor of a voyage's risk score was computed from (keys depend on the factor). */
const FACTOR_INPUTS = Joi.alternatives(
  shape({ area: nullable(str()), first_hit: nullable(latLon()) }),
  shape({ port_in_list: bool(), indicators_present: listOf(str()) }),
  shape({ samples: int(), in_winter_zone: int() }),
  shape({ detentions_36m: int(), deficiencies_36m: int(), inspections_36m: int() }),
  shape({ not_valid_at_etd: listOf(str()), expiring_before_eta: listOf(str()) }),
  shape({ age_years_at_etd: num() }),
);

/** Each collection: the member of /fleet/all and the payload of its own view. */
const PAYLOADS = {
  vessels: shape({ items: listOf(VESSEL) }),
  forecast_modules: shape({ items: listOf(shape({ module_id: str(), title: str(), method: str(), inputs: listOf(str()), horizon_days: nullable(int()), assumptions: listOf(str()), sources: listOf(str()), results: listOf(FORECAST_RESULT) })) }),
  predictive_maintenance: shape({ models: listOf(shape({ component_class: str(), beta: num(), eta_hours: num(), n_failures: int(), n_suspensions: int(), parameters_basis: str(), method: str() })), thresholds: shape({ plan_p30: num(), schedule_now_p30: num() }), items: listOf(shape({ component_id: str(), vessel_imo: str(), class: str(), age_hours: num(), avg_rh_per_day: num(), reliability: num(), hazard_per_hour: num(), p_fail_30d: num(), p_fail_90d: num(), mrl_hours: num(), b10_residual_hours: num(), pms_interval_hours: num(), pms_due_in_hours: num(), recommendation: oneOf('NONE', 'PLAN', 'SCHEDULE_NOW', 'OVERDUE'), reasons: listOf(str()) })), assumptions: listOf(str()) }),
  compliance_certificates: shape({ statuses: listOf(oneOf(...CERT_STATUSES)), items: listOf(shape({ cert_id: str(), vessel_imo: nullable(str()), company_imo: nullable(str()), type: str(), convention: str(), issued_by: str(), issue_date: isoDay(), expiry_date: nullable(isoDay()), endorsement_rule: oneOf('HSSC_ANNUAL_AND_INTERMEDIATE', 'INTERMEDIATE_2_3', 'ANNUAL_3M', 'NONE'), endorsements: listOf(shape({ kind: windowKind(), date: isoDay() })), psc_deficiency_code: str(), windows: listOf(shape({ kind: windowKind(), anniversary: int(), opens: isoDay(), closes: isoDay(), endorsed_on: nullable(isoDay()) })), next_window: nullable(shape({ opens: isoDay(), closes: isoDay(), kind: oneOf('ANNUAL', 'INTERMEDIATE', 'RENEWAL') })), status: oneOf(...CERT_STATUSES), days_to_expiry: nullable(int()) })) }),
  port_state_deficiencies: shape({ window: shape({ from: isoDay(), to: isoDay() }), inspections: listOf(shape({ inspection_id: str(), vessel_imo: str(), mou: oneOf('PARIS', 'TOKYO'), port_locode: str(), date: isoDay(), type: oneOf('INITIAL', 'MORE_DETAILED', 'EXPANDED'), detained: bool(), released_on: nullable(isoDay()), deficiencies: listOf(shape({ deficiency_id: str(), code: str(), area_code: str(), area_name: str(), description: str(), action_codes: listOf(int()), ground_for_detention: bool(), ro_related: bool(), rectified: bool() })) })), summary_by_vessel: listOf(shape({ imo: str(), inspections_36m: int(), deficiencies_36m: int(), detentions_36m: int(), deficiencies_by_area: mapOf(int()).description('deficiency count by area code of the code list') })), code_list: shape({ name: str(), edition: str(), source: str(), codes: shape({ "10111": str(), "10116": str(), "11101": str(), "11117": str(), "13101": str(), "14104": str(), "01101": str(), "01102": str(), "01104": str(), "01106": str(), "01107": str(), "01108": str(), "01117": str(), "01122": str(), "01124": str(), "01132": str(), "01136": str(), "01138": str(), "01139": str(), "07105": str(), "07106": str(), "07109": str(), "07110": str(), "07111": str(), "07113": str() }), areas: shape({ "10": str(), "11": str(), "12": str(), "13": str(), "14": str(), "15": str(), "16": str(), "18": str(), "99": str(), "01": str(), "02": str(), "03": str(), "04": str(), "05": str(), "06": str(), "07": str(), "08": str(), "09": str() }), action_codes: shape({ "10": str(), "15": str(), "16": str(), "17": str(), "18": str(), "19": str(), "30": str(), "35": str(), "40": str(), "50": str(), "70": str(), "80": str(), "99": str() }) }) }),
  ai_briefings: shape({ generator: shape({ kind: str(), id: str(), llm_used: bool() }), priority_rule: str(), evidence_resolution: shape({ fleets: shape({ array: str(), id: str() }), vessels: shape({ array: str(), id: str() }), compliance_certificates: shape({ array: str(), id: str() }), port_state_deficiencies: shape({ array: str(), id: str() }), predictive_maintenance: shape({ array: str(), id: str() }), voyage_risk: shape({ array: str(), id: str() }) }), inputs_sha256_rule: str(), items: listOf(shape({ briefing_id: str(), scope: oneOf('fleet', 'vessel'), subject_id: str(), priority: oneOf('P1', 'P2', 'P3'), headline: str(), bullets: listOf(shape({ text: str(), evidence: listOf(shape({ collection: str(), id: str(), field: str() })) })), inputs_sha256: str() })) }),
  event_logs: shape({ event_types: listOf(oneOf(...EVENT_TYPES)), event_id_rule: str(), items: listOf(shape({ event_id: str(), ts: isoTime(), type: oneOf(...EVENT_TYPES), vessel_imo: nullable(str()), severity: oneOf('info', 'warning', 'critical'), summary: str(), ref: shape({ collection: str(), id: str() }) })) }),
  fleets: shape({ items: listOf(shape({ fleet_id: str(), name: str(), segment: oneOf('TANKER', 'BULK', 'CONTAINER'), ism_company: company().keys({ doc: shape({ cert_id: str(), status: oneOf(...CERT_STATUSES) }) }), vessel_imos: listOf(str()), aggregates: shape({ vessels: int(), total_gt: int(), total_dwt: int(), mean_age_years: num(), detentions_36m: int(), certificates_not_valid: int(), max_voyage_risk_band: nullable(band()) }) })), aggregate_rules: shape({ certificates_not_valid: str() }) }),
  maintenance_logs: shape({ items: listOf(shape({ log_id: str(), vessel_imo: str(), component_id: str(), component_class: str(), job_code: str(), kind: oneOf('PLANNED', 'UNPLANNED', 'CONDITION_BASED'), date: isoDay(), running_hours_at: num(), interval: shape({ hours: nullable(num()), months: nullable(num()) }), outcome: oneOf('OVERHAULED', 'REPLACED', 'FAILED', 'INSPECTED_OK'), findings: str(), parts: listOf(str()), linked_deficiency: nullable(str()) })), components: listOf(shape({ component_id: str(), vessel_imo: str(), class: str(), running_hours_now: num(), avg_rh_per_day: num(), last_overhaul_rh: num() })) }),
  shipment_records: shape({ items: listOf(shape({ voyage_id: str(), vessel_imo: str(), voyage_no: int(), route_id: str(), load_port: str(), discharge_port: str(), etd: isoTime(), eta: isoTime(), atd: nullable(isoTime()), ata: nullable(isoTime()), speed_kn: num(), waypoints: listOf(latLon()), distance_nm: num(), cargo: shape({ kind: str(), quantity: num(), unit: oneOf('t', 'TEU', 'm3') }), bl_number: nullable(str()), fuel: shape({ hfo_t: num(), mgo_t: num(), lng_t: num() }), co2_t: num(), status: str(), indicators: shape({ ais_gap_hours_max: num(), sts_transfer: bool(), flag_changed_12m: bool(), ownership_changed_12m: bool() }) })), ports: listOf(shape({ locode: str(), name: str(), lat: num(), lon: num(), mou: nullable(str()) })), method: shape({ distance: str(), co2_t: str() }) }),
  voyage_risk: shape({ method: shape({ formula: str(), weights: shape({ war_piracy_area: num(), sanctions_exposure: num(), seasonal_weather: num(), psc_history: num(), certificate_status: num(), vessel_age: num() }), bands: listOf(shape({ band: band(), from: num(), to: num() })), factor_rules: shape({ war_piracy_area: str(), sanctions_exposure: str(), seasonal_weather: str(), psc_history: str(), certificate_status: str(), vessel_age: str() }), disclaimer: str() }), reference_areas: shape({ war: listOf(shape({ id: str(), edition: str(), source: str(), transcription: str(), coastal_12nm_exception: str(), polygon: polygon() })), seasonal_zones: listOf(shape({ id: str(), transcription: str(), winter: shape({ from: listOf(int()).length(2).description('[month, day]'), to: listOf(int()).length(2).description('[month, day]') }), polygon: polygon() })), sanctions: shape({ edition: isoDay(), jurisdictions: listOf(str()), note: str() }) }), items: listOf(shape({ voyage_id: str(), vessel_imo: str(), score: num(), band: band(), factors: listOf(shape({ factor: str(), weight: num(), value: num(), contribution: num(), inputs: FACTOR_INPUTS, source: str() })) })) }),
};

const ENVELOPE = {
  doctrine: str(),
  as_of: str().isoDate().description('every derived value is computed at this date, not now'),
  dataset: shape({ version: num(), seed: num(), sha256: hex64(), synthetic: oneOf(true), generator: str() }),
  data_kind: oneOf('dataset'),
};

const TAIL = {
  honesty: str(),
  limits: listOf(shape({ code: str(), detail: str() })),
  sources: listOf(shape({ leader: str(), kind: str(), url: str(), data_kind: str() })),
};

/** The response schema of each fleet route, by route segment (`all` included). */
export const FLEET_RESPONSES: ReadonlyMap<string, ObjectSchema> = new Map([
  ...VIEW_SPECS.map((spec): [string, ObjectSchema] => [
    spec.route,
    PAYLOADS[spec.member as keyof typeof PAYLOADS].keys({
      schema: oneOf(`svc.fleet-${spec.route}/v1`),
      ...ENVELOPE,
      derived_fields: listOf(str()).description('fields computed by the service (the rest is the dataset)'),
      ...TAIL,
    }),
  ]),
  [
    'all',
    shape({
      schema: oneOf('svc.fleet-all/v1'),
      ...ENVELOPE,
      ...Object.fromEntries(VIEW_SPECS.map((spec) => [spec.member, PAYLOADS[spec.member as keyof typeof PAYLOADS]])),
      ...TAIL,
    }),
  ],
]);
