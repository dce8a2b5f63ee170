/**
 * Reference tables shipped with the fleet dataset, each with its source. The generator draws from
 * them and the views check against them, so a code that is not in a table cannot appear in a body.
 * Extracts only: the rows the dataset uses, never a full registry.
 */

export interface FlagRow {
  iso2: string;
  name: string;
  /** ITU Maritime Identification Digits allocated to the administration. */
  mids: number[];
  /** ITU call-sign series prefixes (Radio Regulations Appendix 42) used for generated call signs. */
  callSignPrefixes: string[];
  portOfRegistry: string;
}

/** MID → flag, copied from the ITU MID table (via [S4, S5]); not from third-party code tables. */
export const FLAGS: readonly FlagRow[] = [
  { iso2: 'LR', name: 'Liberia', mids: [636, 637], callSignPrefixes: ['A8', 'D5', '5L'], portOfRegistry: 'Monrovia' },
  { iso2: 'MH', name: 'Marshall Islands', mids: [538], callSignPrefixes: ['V7'], portOfRegistry: 'Majuro' },
  { iso2: 'PA', name: 'Panama', mids: [351, 352, 353, 354, 355, 356, 357, 370, 371, 372, 373], callSignPrefixes: ['3E', '3F', 'H3', 'H8', 'H9', 'HO', 'HP'], portOfRegistry: 'Panama' },
  { iso2: 'MT', name: 'Malta', mids: [215, 229, 248, 249, 256], callSignPrefixes: ['9H'], portOfRegistry: 'Valletta' },
  { iso2: 'SG', name: 'Singapore', mids: [563, 564, 565, 566], callSignPrefixes: ['9V', 'S6'], portOfRegistry: 'Singapore' },
  { iso2: 'GR', name: 'Greece', mids: [237, 239, 240, 241], callSignPrefixes: ['SV', 'SX', 'SY', 'SZ', 'J4'], portOfRegistry: 'Piraeus' },
  { iso2: 'CY', name: 'Cyprus', mids: [209, 210, 212], callSignPrefixes: ['5B', 'C4', 'H2'], portOfRegistry: 'Limassol' },
  { iso2: 'BS', name: 'Bahamas', mids: [308, 309, 311], callSignPrefixes: ['C6'], portOfRegistry: 'Nassau' },
  { iso2: 'HK', name: 'Hong Kong, China', mids: [477], callSignPrefixes: ['VR'], portOfRegistry: 'Hong Kong' },
];

export const FLAG_BY_ISO2: ReadonlyMap<string, FlagRow> = new Map(FLAGS.map((f) => [f.iso2, f]));

/** IACS members (iacs.org.uk/about/members), by the short name used on certificates. */
export const IACS_SOCIETIES = ['ABS', 'BV', 'CCS', 'DNV', 'KR', 'LR', 'NK', 'RINA'] as const;

export interface PortRow {
  locode: string;
  name: string;
  lat: number;
  lon: number;
  /** Port State Control regime the port belongs to; null outside the Paris and Tokyo MoUs. */
  mou: 'PARIS' | 'TOKYO' | null;
}

/** UN/LOCODE entries (unece.org/trade/cefact/unlocode) with approach coordinates (±a few nm). */
export const PORTS: readonly PortRow[] = [
  { locode: 'SGSIN', name: 'Singapore', lat: 1.264, lon: 103.84, mou: 'TOKYO' },
  { locode: 'NLRTM', name: 'Rotterdam', lat: 51.955, lon: 4.05, mou: 'PARIS' },
  { locode: 'USNYC', name: 'New York', lat: 40.6, lon: -74.03, mou: null },
  { locode: 'AEFJR', name: 'Fujairah', lat: 25.17, lon: 56.36, mou: null },
  { locode: 'KRUSN', name: 'Ulsan', lat: 35.5, lon: 129.38, mou: 'TOKYO' },
  { locode: 'AUPHE', name: 'Port Hedland', lat: -20.31, lon: 118.58, mou: 'TOKYO' },
  { locode: 'CNQDG', name: 'Qingdao', lat: 36.07, lon: 120.32, mou: 'TOKYO' },
  { locode: 'ZARCB', name: 'Richards Bay', lat: -28.8, lon: 32.08, mou: null },
  { locode: 'BEANR', name: 'Antwerp', lat: 51.27, lon: 4.33, mou: 'PARIS' },
  { locode: 'DEHAM', name: 'Hamburg', lat: 53.54, lon: 9.97, mou: 'PARIS' },
];

export const PORT_BY_LOCODE: ReadonlyMap<string, PortRow> = new Map(PORTS.map((p) => [p.locode, p]));

export interface RouteTemplate {
  id: string;
  from: string;
  to: string;
  /** Waypoints [lat, lon] between the two ports (the ports themselves are the ends). */
  via: [number, number][];
}

/** Sea-lane polylines, hand-drawn at ocean scale; coordinates are approximate by design. */
export const ROUTES: readonly RouteTemplate[] = [
  {
    id: 'ASIA-EUROPE-SUEZ',
    from: 'SGSIN',
    to: 'NLRTM',
    via: [[2.9, 100.9], [5.9, 95.0], [5.8, 80.5], [12.0, 52.5], [12.5, 48.0], [12.6, 43.4], [20.0, 38.5], [27.5, 34.0], [29.9, 32.55], [31.4, 32.35], [34.0, 24.0], [37.2, 11.0], [36.0, -5.6], [43.2, -9.8], [48.6, -5.6], [50.3, -0.5], [51.3, 2.3]],
  },
  { id: 'NORTH-ATLANTIC', from: 'NLRTM', to: 'USNYC', via: [[51.3, 2.3], [50.2, -1.5], [49.4, -6.0], [48.5, -20.0], [46.5, -35.0], [43.5, -50.0], [41.0, -65.0]] },
  {
    id: 'GULF-FAR-EAST-CRUDE',
    from: 'AEFJR',
    to: 'KRUSN',
    via: [[22.4, 60.3], [15.0, 70.0], [7.0, 76.0], [5.8, 80.5], [5.9, 95.0], [2.9, 100.9], [1.2, 104.3], [5.0, 106.5], [12.0, 111.5], [22.0, 117.5], [25.0, 120.0], [30.5, 124.5], [34.5, 128.6]],
  },
  { id: 'IRON-ORE-PACIFIC', from: 'AUPHE', to: 'CNQDG', via: [[-15.0, 116.5], [-8.9, 115.75], [-4.0, 117.9], [1.5, 119.0], [3.5, 125.5], [12.5, 128.0], [24.0, 126.0], [31.0, 124.0]] },
  { id: 'COAL-CAPE-EUROPE', from: 'ZARCB', to: 'NLRTM', via: [[-34.9, 22.0], [-34.5, 17.5], [-20.0, 5.0], [0.0, -15.0], [15.0, -20.0], [36.0, -12.0], [43.2, -9.8], [48.6, -5.6], [50.3, -0.5], [51.3, 2.3]] },
];

/** Harmonized PSC deficiency codes used by the dataset (Paris MoU 2011 list, later Tokyo MoU) [S18–S20]. */
export const DEFICIENCY_CODES: Readonly<Record<string, string>> = {
  '01101': 'Cargo Ship Safety Equipment certificate',
  '01102': 'Cargo Ship Safety Construction certificate',
  '01104': 'Cargo Ship Safety Radio certificate',
  '01106': 'Document of Compliance (DOC)',
  '01107': 'Safety Management Certificate (SMC)',
  '01108': 'Load Lines certificate',
  '01117': 'International Oil Pollution Prevention certificate (IOPP)',
  '01122': 'International Ship Security Certificate (ISSC)',
  '01124': 'International Air Pollution Prevention certificate (IAPP)',
  '01132': 'International Tonnage certificate',
  '01136': 'Ballast Water Management certificate',
  '01138': 'International Energy Efficiency certificate (IEE)',
  '01139': 'Maritime Labour Certificate',
  '07105': 'Fire doors / openings in fire-resisting divisions',
  '07106': 'Fire detection and alarm system',
  '07109': 'Fixed fire extinguishing installation',
  '07110': 'Fire fighting equipment and appliances',
  '07111': 'Personal equipment for fire safety',
  '07113': 'Fire pumps and its pipes',
  '10111': 'Charts',
  '10116': 'Nautical publications',
  '11101': 'Lifeboats',
  '11117': 'Lifebuoys incl. provision and disposition',
  '13101': 'Propulsion main engine',
  '14104': 'Oil filtering equipment',
};

/** Two-digit areas of the harmonized list [S20]. */
export const DEFICIENCY_AREAS: Readonly<Record<string, string>> = {
  '01': 'Certificates and documentation',
  '02': 'Structural condition',
  '03': 'Water/weathertight condition',
  '04': 'Emergency systems',
  '05': 'Radio communication',
  '06': 'Cargo operations',
  '07': 'Fire safety',
  '08': 'Alarms',
  '09': 'Working and living conditions',
  '10': 'Safety of navigation',
  '11': 'Life saving appliances',
  '12': 'Dangerous goods',
  '13': 'Propulsion and auxiliary machinery',
  '14': 'Pollution prevention',
  '15': 'ISM',
  '16': 'ISPS',
  '18': 'MLC, 2006',
  '99': 'Other',
};

/** PSC action-taken codes [S21, S22]. 30 marks a ground for detention. */
export const ACTION_CODES: Readonly<Record<number, string>> = {
  10: 'Deficiency rectified',
  15: 'Rectify deficiency at next port',
  16: 'Rectify deficiency within 14 days',
  17: 'Master instructed to rectify deficiency before departure',
  18: 'Rectify non-conformity within 3 months',
  19: 'Rectify major non-conformity before departure',
  30: 'Ground for detention',
  35: 'Ground for detention lifted (ship released)',
  40: 'Next port informed',
  50: 'Flag State consulted/informed',
  70: 'Recognized organization informed',
  80: 'Temporary substitution of equipment / temporary repair',
  99: 'Other (specify in clear text)',
};

export interface CertRule {
  type: string;
  convention: string;
  endorsementRule: 'HSSC_ANNUAL_AND_INTERMEDIATE' | 'INTERMEDIATE_2_3' | 'ANNUAL_3M' | 'NONE';
  /** Maximum validity in months (null: no expiry). */
  validityMonths: number | null;
  /** Code a PSCO records when the certificate is missing or invalid [S18]. */
  pscCode: string;
  /** Issued by the flag administration, or by the recognized organization (class). */
  issuer: 'FLAG' | 'RO';
}

/** Certificate kinds and their survey/endorsement regimes [S10–S17]. */
export const CERT_RULES: readonly CertRule[] = [
  { type: 'CS_CONSTRUCTION', convention: 'SOLAS 74/88', endorsementRule: 'HSSC_ANNUAL_AND_INTERMEDIATE', validityMonths: 60, pscCode: '01102', issuer: 'RO' },
  { type: 'CS_EQUIPMENT', convention: 'SOLAS 74/88', endorsementRule: 'HSSC_ANNUAL_AND_INTERMEDIATE', validityMonths: 60, pscCode: '01101', issuer: 'RO' },
  { type: 'CS_RADIO', convention: 'SOLAS 74/88', endorsementRule: 'HSSC_ANNUAL_AND_INTERMEDIATE', validityMonths: 60, pscCode: '01104', issuer: 'RO' },
  { type: 'LOAD_LINE', convention: 'LL 66/88', endorsementRule: 'HSSC_ANNUAL_AND_INTERMEDIATE', validityMonths: 60, pscCode: '01108', issuer: 'RO' },
  { type: 'IOPP', convention: 'MARPOL Annex I', endorsementRule: 'HSSC_ANNUAL_AND_INTERMEDIATE', validityMonths: 60, pscCode: '01117', issuer: 'RO' },
  { type: 'IAPP', convention: 'MARPOL Annex VI', endorsementRule: 'HSSC_ANNUAL_AND_INTERMEDIATE', validityMonths: 60, pscCode: '01124', issuer: 'RO' },
  { type: 'BWM', convention: 'BWM 2004', endorsementRule: 'HSSC_ANNUAL_AND_INTERMEDIATE', validityMonths: 60, pscCode: '01136', issuer: 'RO' },
  { type: 'ISSC', convention: 'SOLAS XI-2 / ISPS Code', endorsementRule: 'INTERMEDIATE_2_3', validityMonths: 60, pscCode: '01122', issuer: 'FLAG' },
  { type: 'SMC', convention: 'SOLAS IX / ISM Code', endorsementRule: 'INTERMEDIATE_2_3', validityMonths: 60, pscCode: '01107', issuer: 'FLAG' },
  { type: 'MLC', convention: 'MLC 2006', endorsementRule: 'INTERMEDIATE_2_3', validityMonths: 60, pscCode: '01139', issuer: 'FLAG' },
  { type: 'TONNAGE', convention: 'TONNAGE 69', endorsementRule: 'NONE', validityMonths: null, pscCode: '01132', issuer: 'RO' },
  { type: 'IEE', convention: 'MARPOL Annex VI', endorsementRule: 'NONE', validityMonths: null, pscCode: '01138', issuer: 'RO' },
];

export const DOC_RULE: CertRule = { type: 'DOC', convention: 'SOLAS IX / ISM Code', endorsementRule: 'ANNUAL_3M', validityMonths: 60, pscCode: '01106', issuer: 'FLAG' };

export interface ComponentClass {
  id: string;
  jobCode: string;
  /** PMS overhaul interval in running hours: a dataset design value, not an OEM figure. */
  intervalHours: number;
  /** Running hours per calendar day (range drawn per component). */
  rhPerDay: [number, number];
  /** Weibull life the generator samples from (and the fallback prior when failures are few). */
  beta: number;
  etaHours: number;
  parts: string[];
}

export const COMPONENT_CLASSES: readonly ComponentClass[] = [
  { id: 'ME_CYLINDER_UNIT', jobCode: 'ME-CU-OH', intervalHours: 16000, rhPerDay: [17, 21], beta: 2.2, etaHours: 26000, parts: ['piston rings', 'cylinder liner', 'exhaust valve'] },
  { id: 'TURBOCHARGER', jobCode: 'ME-TC-OH', intervalHours: 12000, rhPerDay: [17, 21], beta: 1.8, etaHours: 22000, parts: ['bearings', 'nozzle ring'] },
  { id: 'GENERATOR_ENGINE', jobCode: 'GE-OH', intervalHours: 12000, rhPerDay: [14, 20], beta: 2.0, etaHours: 20000, parts: ['cylinder head', 'fuel injectors'] },
  { id: 'FO_PURIFIER', jobCode: 'FOP-OH', intervalHours: 4000, rhPerDay: [20, 24], beta: 1.5, etaHours: 8000, parts: ['bowl seals', 'gravity disc'] },
  { id: 'STEERING_PUMP', jobCode: 'SG-P-OH', intervalHours: 20000, rhPerDay: [10, 16], beta: 1.6, etaHours: 40000, parts: ['pump seals', 'bearings'] },
  { id: 'FIRE_PUMP', jobCode: 'FP-OH', intervalHours: 1500, rhPerDay: [0.6, 1.2], beta: 1.4, etaHours: 3000, parts: ['impeller', 'mechanical seal'] },
];

export const COMPONENT_CLASS_BY_ID: ReadonlyMap<string, ComponentClass> = new Map(COMPONENT_CLASSES.map((c) => [c.id, c]));

/** CO2 conversion factors Cf, t CO2 per t fuel (MEPC.364(79)) [S28]. */
export const CF = { hfo: 3.114, mgo: 3.206, lng: 2.75 } as const;
