/** Shape of the committed fleet dataset (src/fleet/dataset/fleet-dataset.json). Stored facts only: derived values live in the views. */

export interface Company {
  name: string;
  imo_company_number: string;
}

export interface Fleet {
  fleet_id: string;
  name: string;
  segment: 'TANKER' | 'BULK' | 'CONTAINER';
  ism_company: Company;
  doc_cert_id: string;
}

export interface Vessel {
  imo: string;
  mmsi: string;
  call_sign: string;
  name: string;
  ship_type: string;
  ais_ship_type: number;
  flag: { iso2: string; name: string; mid: number };
  port_of_registry: string;
  gross_tonnage: number;
  enclosed_volume_m3: number;
  deadweight_t: number;
  loa_m: number;
  beam_m: number;
  delivered: string;
  year_built: number;
  class_society: string;
  ism_company: Company;
  fleet_id: string;
}

export interface Certificate {
  cert_id: string;
  vessel_imo: string | null;
  company_imo: string | null;
  type: string;
  convention: string;
  issued_by: string;
  issue_date: string;
  expiry_date: string | null;
  endorsement_rule: 'HSSC_ANNUAL_AND_INTERMEDIATE' | 'INTERMEDIATE_2_3' | 'ANNUAL_3M' | 'NONE';
  endorsements: { kind: 'ANNUAL' | 'INTERMEDIATE'; date: string }[];
  psc_deficiency_code: string;
}

export interface Deficiency {
  deficiency_id: string;
  code: string;
  description: string;
  action_codes: number[];
  ro_related: boolean;
}

export interface PscInspection {
  inspection_id: string;
  vessel_imo: string;
  mou: 'PARIS' | 'TOKYO';
  port_locode: string;
  date: string;
  type: 'INITIAL' | 'MORE_DETAILED' | 'EXPANDED';
  /** Date the detention was lifted (only when some deficiency carries action code 30). */
  detention_lifted: string | null;
  deficiencies: Deficiency[];
}

export interface Component {
  component_id: string;
  vessel_imo: string;
  class: string;
  running_hours_now: number;
  avg_rh_per_day: number;
}

export interface MaintenanceLog {
  log_id: string;
  vessel_imo: string;
  component_id: string;
  component_class: string;
  job_code: string;
  kind: 'PLANNED' | 'UNPLANNED' | 'CONDITION_BASED';
  date: string;
  running_hours_at: number;
  interval: { hours: number | null; months: number | null };
  outcome: 'OVERHAULED' | 'REPLACED' | 'FAILED' | 'INSPECTED_OK';
  findings: string;
  parts: string[];
  linked_deficiency: string | null;
}

export interface Voyage {
  voyage_id: string;
  vessel_imo: string;
  voyage_no: number;
  route_id: string;
  load_port: string;
  discharge_port: string;
  etd: string;
  eta: string;
  atd: string | null;
  ata: string | null;
  speed_kn: number;
  waypoints: { lat: number; lon: number }[];
  cargo: { kind: string; quantity: number; unit: 't' | 'TEU' | 'm3' };
  bl_number: string | null;
  fuel: { hfo_t: number; mgo_t: number; lng_t: number };
  indicators: { ais_gap_hours_max: number; sts_transfer: boolean; flag_changed_12m: boolean; ownership_changed_12m: boolean };
}

export interface FleetDataset {
  schema: 'svc.fleet-dataset/v1';
  version: number;
  seed: number;
  synthetic: true;
  as_of: string;
  generator: { source: string; prng: string; regenerate: string };
  honesty: string;
  fleets: Fleet[];
  vessels: Vessel[];
  certificates: Certificate[];
  psc_inspections: PscInspection[];
  components: Component[];
  maintenance_logs: MaintenanceLog[];
  voyages: Voyage[];
  /** Hex SHA-256 of the canonical JSON of every other field. */
  sha256: string;
}
