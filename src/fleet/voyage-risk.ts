/**
 * Transparent voyage risk: score = Σ w_i·f_i with every f_i in [0, 1] and weights summing to 100.
 * The weights are this service's design choice, not an industry standard. Areas and zones are
 * simplified transcriptions, labelled as such in the body.
 */
import type { Certificate, FleetDataset, Voyage } from './dataset/types.js';
import { certificateState } from './certificates.js';
import { DAY_MS, HOUR_MS, inYearlyPeriod, toMs } from './dates.js';
import { pointInPolygon, type LatLon } from '../lib/geo.js';
import { pointAlong, polylineNm, samplePolyline } from './geo.js';

export const WEIGHTS = { war_piracy_area: 30, sanctions_exposure: 25, seasonal_weather: 15, psc_history: 15, certificate_status: 10, vessel_age: 5 } as const;
export const BANDS = [
  { band: 'LOW', from: 0, to: 25 },
  { band: 'MEDIUM', from: 25, to: 50 },
  { band: 'HIGH', from: 50, to: 75 },
  { band: 'SEVERE', from: 75, to: 100 },
] as const;
export type Band = (typeof BANDS)[number]['band'];
export const BAND_ORDER: readonly Band[] = ['LOW', 'MEDIUM', 'HIGH', 'SEVERE'];

/** Polygons as [lon, lat]. */
export const WAR_AREAS = [
  {
    id: 'JWLA-032-INDIAN-OCEAN-GULF-OF-ADEN-SOUTHERN-RED-SEA',
    edition: 'JWLA-032 (18 December 2023)',
    source: 'http://latitudebrokers.com/joint-war-committee-updates-war-listed-areas-on-18th-december-2023/',
    transcription: 'simplified envelope: Red Sea south of 18N, Gulf of Aden, Arabian Sea and Indian Ocean west of 78E and north of 12S; vertices approximate',
    coastal_12nm_exception: 'not modelled',
    polygon: [[32, 18], [60, 18], [78, 10], [78, -12], [40, -12], [32, 18]] as [number, number][],
  },
];

export const SEASONAL_ZONES = [
  { id: 'NORTH-ATLANTIC-WINTER-ZONE-I', transcription: 'approximate rectangle inside the Annex II zone', winter: { from: [10, 16] as [number, number], to: [4, 15] as [number, number] }, polygon: [[-60, 45], [-15, 45], [-15, 60], [-60, 60], [-60, 45]] as [number, number][] },
  { id: 'NORTH-ATLANTIC-WINTER-ZONE-II', transcription: 'approximate rectangle inside the Annex II zone', winter: { from: [11, 1] as [number, number], to: [3, 31] as [number, number] }, polygon: [[-75, 36], [-15, 36], [-15, 45], [-75, 45], [-75, 36]] as [number, number][] },
];

export const SANCTIONS = { edition: '2025-06-30', jurisdictions: ['CU', 'IR', 'KP', 'SY'], note: 'comprehensively sanctioned jurisdictions of the US OFAC country programs; illustrative list, not legal advice' };

export function warAreaFactor(waypoints: readonly LatLon[]): { value: number; first_hit: LatLon | null; area: string | null } {
  for (const p of samplePolyline(waypoints, 25)) {
    for (const a of WAR_AREAS) if (pointInPolygon(p, a.polygon)) return { value: 1, first_hit: { lat: p.lat, lon: p.lon }, area: a.id };
  }
  return { value: 0, first_hit: null, area: null };
}

/** Fraction of voyage time (sampled every 6 h at constant speed along the legs) inside a zone during its winter period. */
export function seasonalFactor(waypoints: readonly LatLon[], departMs: number, arriveMs: number): { value: number; samples: number; in_winter_zone: number } {
  const total = polylineNm(waypoints);
  const steps = Math.max(1, Math.ceil((arriveMs - departMs) / (6 * HOUR_MS)));
  let hits = 0;
  for (let k = 0; k < steps; k++) {
    const f = (k + 0.5) / steps;
    const t = departMs + f * (arriveMs - departMs);
    const p = pointAlong(waypoints, f * total);
    if (SEASONAL_ZONES.some((z) => inYearlyPeriod(t, z.winter.from, z.winter.to) && pointInPolygon(p, z.polygon))) hits++;
  }
  return { value: hits / steps, samples: steps, in_winter_zone: hits };
}

export function sanctionsFactor(v: Voyage): { value: number; port_in_list: boolean; indicators_present: string[] } {
  const portInList = [v.load_port, v.discharge_port].some((l) => SANCTIONS.jurisdictions.includes(l.slice(0, 2)));
  const ind = v.indicators;
  const present = [ind.ais_gap_hours_max > 24 && 'ais_gap_gt_24h', ind.sts_transfer && 'sts_transfer', ind.flag_changed_12m && 'flag_changed_12m', ind.ownership_changed_12m && 'ownership_changed_12m'].filter(Boolean) as string[];
  return { value: portInList ? 1 : Math.min(1, 0.25 * present.length), port_in_list: portInList, indicators_present: present };
}

export const pscFactor = (detentions: number, deficiencies: number, inspections: number): number => Math.min(1, 0.5 * detentions + 0.05 * (inspections ? deficiencies / inspections : 0));

export function certificateFactor(certs: readonly Certificate[], etd: string, eta: string): { value: number; at_etd: string[]; expiring_before_eta: string[] } {
  const etdDate = etd.slice(0, 10);
  const bad = certs.filter((c) => ['EXPIRED', 'ENDORSEMENT_OVERDUE'].includes(certificateState(c, etdDate).status)).map((c) => c.cert_id);
  const expiring = certs.filter((c) => c.expiry_date !== null && c.expiry_date >= etdDate && c.expiry_date < eta.slice(0, 10)).map((c) => c.cert_id);
  return { value: bad.length ? 1 : expiring.length ? 0.5 : 0, at_etd: bad, expiring_before_eta: expiring };
}

export const ageFactor = (ageYears: number): number => Math.min(1, Math.max(0, (ageYears - 15) / 10));

export const bandOf = (score: number): Band => BANDS.find((b) => score < b.to)?.band ?? 'SEVERE';

export function voyageRiskPayload(ds: FleetDataset, psc: { imo: string; inspections_36m: number; deficiencies_36m: number; detentions_36m: number }[]) {
  const items = ds.voyages.map((v) => {
    const vessel = ds.vessels.find((x) => x.imo === v.vessel_imo)!;
    const s = psc.find((x) => x.imo === v.vessel_imo)!;
    const company = vessel.ism_company.imo_company_number;
    const certs = ds.certificates.filter((c) => c.vessel_imo === v.vessel_imo || c.company_imo === company);
    const ageYears = (toMs(v.etd) - toMs(vessel.delivered)) / (365.25 * DAY_MS);
    const war = warAreaFactor(v.waypoints);
    const sanc = sanctionsFactor(v);
    const season = seasonalFactor(v.waypoints, toMs(v.atd ?? v.etd), toMs(v.ata ?? v.eta));
    const cert = certificateFactor(certs, v.etd, v.eta);
    const factors = [
      { factor: 'war_piracy_area', value: war.value, inputs: { area: war.area, first_hit: war.first_hit }, source: 'JWLA-032 listed areas [S34, S35]' },
      { factor: 'sanctions_exposure', value: sanc.value, inputs: { port_in_list: sanc.port_in_list, indicators_present: sanc.indicators_present }, source: 'US maritime sanctions advisory, May 2020 [S33]' },
      { factor: 'seasonal_weather', value: season.value, inputs: { samples: season.samples, in_winter_zone: season.in_winter_zone }, source: 'Load Line Annex II seasonal zones [S38]; climatology, not a forecast' },
      { factor: 'psc_history', value: pscFactor(s.detentions_36m, s.deficiencies_36m, s.inspections_36m), inputs: { detentions_36m: s.detentions_36m, deficiencies_36m: s.deficiencies_36m, inspections_36m: s.inspections_36m }, source: 'computed from /fleet/port-state-deficiencies' },
      { factor: 'certificate_status', value: cert.value, inputs: { not_valid_at_etd: cert.at_etd, expiring_before_eta: cert.expiring_before_eta }, source: 'computed from /fleet/compliance-certificates rules' },
      { factor: 'vessel_age', value: ageFactor(ageYears), inputs: { age_years_at_etd: ageYears }, source: 'dataset delivery date' },
    ].map((f) => {
      const weight = WEIGHTS[f.factor as keyof typeof WEIGHTS];
      return { factor: f.factor, weight, value: f.value, contribution: weight * f.value, inputs: f.inputs, source: f.source };
    });
    const score = factors.reduce((a, f) => a + f.contribution, 0);
    return { voyage_id: v.voyage_id, vessel_imo: v.vessel_imo, score, band: bandOf(score), factors };
  });
  return {
    method: {
      formula: 'score = sum(weight_i x value_i), value_i in [0, 1], weights sum to 100',
      weights: WEIGHTS,
      bands: BANDS,
      factor_rules: {
        war_piracy_area: '1 if any leg (sampled every 25 nm) enters a listed area, else 0',
        sanctions_exposure: '1 if a port is in a listed jurisdiction, else 0.25 per deceptive-practice indicator (AIS gap > 24 h, STS transfer, flag change 12 m, ownership change 12 m), capped at 1',
        seasonal_weather: 'fraction of 6-hourly samples inside a winter seasonal zone during its winter period',
        psc_history: 'min(1, 0.5 x detentions_36m + 0.05 x deficiencies per inspection)',
        certificate_status: '1 if any certificate is expired or endorsement-overdue at ETD; 0.5 if one expires before ETA; else 0',
        vessel_age: 'clamp((age at ETD - 15) / 10, 0, 1)',
      },
      disclaimer: 'The weights are a stated design choice of this service, not an industry standard.',
    },
    reference_areas: { war: WAR_AREAS, seasonal_zones: SEASONAL_ZONES, sanctions: SANCTIONS },
    items,
  };
}

export type VoyageRiskPayload = ReturnType<typeof voyageRiskPayload>;
