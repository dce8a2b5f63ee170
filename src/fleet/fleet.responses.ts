/**
 * Response schemas of the fleet views. The dataset is generated from a fixed seed and committed, so
 * every collection's shape is stable: each view is the common envelope plus its collection's keys
 * (items and their fields; deeper structures as objects), and /fleet/all carries every collection.
 */
import type { ObjectSchema } from 'joi';
import { bool, hex64, list, listOf, nullable, num, object, oneOf, shape, str } from '../http/response-schema.js';
import { VIEW_SPECS } from './views.js';

/** Each collection: the member of /fleet/all and the payload of its own view. */
const PAYLOADS = {
  vessels: shape({ items: listOf(shape({ imo: str(), mmsi: str(), call_sign: str(), name: str(), ship_type: str(), ais_ship_type: num(), flag: object(), port_of_registry: str(), gross_tonnage: num(), enclosed_volume_m3: num(), deadweight_t: num(), loa_m: num(), beam_m: num(), delivered: str(), year_built: num(), class_society: str(), ism_company: object(), fleet_id: str(), age_years: num(), position: object(), certificate_summary: object(), psc_36m: object() })) }),
  forecast_modules: shape({ items: listOf(shape({ module_id: str(), title: str(), method: str(), inputs: list(), horizon_days: nullable(num()), assumptions: list(), sources: list(), results: list() })) }),
  predictive_maintenance: shape({ models: listOf(shape({ component_class: str(), beta: num(), eta_hours: num(), n_failures: num(), n_suspensions: num(), parameters_basis: str(), method: str() })), thresholds: shape({ plan_p30: num(), schedule_now_p30: num() }), items: listOf(shape({ component_id: str(), vessel_imo: str(), class: str(), age_hours: num(), avg_rh_per_day: num(), reliability: num(), hazard_per_hour: num(), p_fail_30d: num(), p_fail_90d: num(), mrl_hours: num(), b10_residual_hours: num(), pms_interval_hours: num(), pms_due_in_hours: num(), recommendation: str(), reasons: list() })), assumptions: listOf(str()) }),
  compliance_certificates: shape({ statuses: listOf(str()), items: listOf(shape({ cert_id: str(), vessel_imo: nullable(str()), company_imo: nullable(str()), type: str(), convention: str(), issued_by: str(), issue_date: str(), expiry_date: nullable(str()), endorsement_rule: str(), endorsements: list(), psc_deficiency_code: str(), windows: list(), next_window: nullable(object()), status: str(), days_to_expiry: nullable(num()) })) }),
  port_state_deficiencies: shape({ window: shape({ from: str(), to: str() }), inspections: listOf(shape({ inspection_id: str(), vessel_imo: str(), mou: str(), port_locode: str(), date: str(), type: str(), detained: bool(), released_on: nullable(str()), deficiencies: list() })), summary_by_vessel: listOf(shape({ imo: str(), inspections_36m: num(), deficiencies_36m: num(), detentions_36m: num(), deficiencies_by_area: object() })), code_list: shape({ name: str(), edition: str(), source: str(), codes: shape({ "10111": str(), "10116": str(), "11101": str(), "11117": str(), "13101": str(), "14104": str(), "01101": str(), "01102": str(), "01104": str(), "01106": str(), "01107": str(), "01108": str(), "01117": str(), "01122": str(), "01124": str(), "01132": str(), "01136": str(), "01138": str(), "01139": str(), "07105": str(), "07106": str(), "07109": str(), "07110": str(), "07111": str(), "07113": str() }), areas: shape({ "10": str(), "11": str(), "12": str(), "13": str(), "14": str(), "15": str(), "16": str(), "18": str(), "99": str(), "01": str(), "02": str(), "03": str(), "04": str(), "05": str(), "06": str(), "07": str(), "08": str(), "09": str() }), action_codes: shape({ "10": str(), "15": str(), "16": str(), "17": str(), "18": str(), "19": str(), "30": str(), "35": str(), "40": str(), "50": str(), "70": str(), "80": str(), "99": str() }) }) }),
  ai_briefings: shape({ generator: shape({ kind: str(), id: str(), llm_used: bool() }), priority_rule: str(), evidence_resolution: shape({ fleets: shape({ array: str(), id: str() }), vessels: shape({ array: str(), id: str() }), compliance_certificates: shape({ array: str(), id: str() }), port_state_deficiencies: shape({ array: str(), id: str() }), predictive_maintenance: shape({ array: str(), id: str() }), voyage_risk: shape({ array: str(), id: str() }) }), inputs_sha256_rule: str(), items: listOf(shape({ briefing_id: str(), scope: str(), subject_id: str(), priority: str(), headline: str(), bullets: list(), inputs_sha256: str() })) }),
  event_logs: shape({ event_types: listOf(str()), event_id_rule: str(), items: listOf(shape({ event_id: str(), ts: str(), type: str(), vessel_imo: nullable(str()), severity: str(), summary: str(), ref: object() })) }),
  fleets: shape({ items: listOf(shape({ fleet_id: str(), name: str(), segment: str(), ism_company: object(), vessel_imos: list(), aggregates: object() })), aggregate_rules: shape({ certificates_not_valid: str() }) }),
  maintenance_logs: shape({ items: listOf(shape({ log_id: str(), vessel_imo: str(), component_id: str(), component_class: str(), job_code: str(), kind: str(), date: str(), running_hours_at: num(), interval: object(), outcome: str(), findings: str(), parts: list(), linked_deficiency: nullable(str()) })), components: listOf(shape({ component_id: str(), vessel_imo: str(), class: str(), running_hours_now: num(), avg_rh_per_day: num(), last_overhaul_rh: num() })) }),
  shipment_records: shape({ items: listOf(shape({ voyage_id: str(), vessel_imo: str(), voyage_no: num(), route_id: str(), load_port: str(), discharge_port: str(), etd: str(), eta: str(), atd: str(), ata: nullable(str()), speed_kn: num(), waypoints: list(), distance_nm: num(), cargo: object(), bl_number: nullable(str()), fuel: object(), co2_t: num(), status: str(), indicators: object() })), ports: listOf(shape({ locode: str(), name: str(), lat: num(), lon: num(), mou: nullable(str()) })), method: shape({ distance: str(), co2_t: str() }) }),
  voyage_risk: shape({ method: shape({ formula: str(), weights: shape({ war_piracy_area: num(), sanctions_exposure: num(), seasonal_weather: num(), psc_history: num(), certificate_status: num(), vessel_age: num() }), bands: listOf(object()), factor_rules: shape({ war_piracy_area: str(), sanctions_exposure: str(), seasonal_weather: str(), psc_history: str(), certificate_status: str(), vessel_age: str() }), disclaimer: str() }), reference_areas: shape({ war: listOf(object()), seasonal_zones: listOf(object()), sanctions: shape({ edition: str(), jurisdictions: list(), note: str() }) }), items: listOf(shape({ voyage_id: str(), vessel_imo: str(), score: num(), band: str(), factors: list() })) }),
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
