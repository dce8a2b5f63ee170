/**
 * API payloads → targets. Each function reads only fields the API returned; nothing is inferred
 * or interpolated (spec honesty rule 1): an aircraft moves only when a new report arrives, and its
 * trail is the list of positions actually received.
 */
import { altitudeColor, altitudeFt, DECISION_STYLE, glyphFor, VESSEL_COLOR } from '../common/palette.js';
import { fmtAge, fmtLatLon, fmtNum } from '../common/format.js';
import { cotMetres, fmtAlt, fmtSpeed } from '../common/units.js';
import { METRES_PER_FT } from './measure.js';
import type { Target } from './draw.js';
import { cotFrame } from './cot-frame.js';
import type { SceneTrack, TrailPoint } from './track-types.js';
import type { AdsbAircraft, AdsbAnswer } from '../../../isomorphic/wire/adsb.js';
import { API, COT_TRACK_UID_PREFIX } from '../../../isomorphic/api.js';

/** Positions kept per target: 40 minutes of 10-second ADS-B polls; drawing takes only the chosen span. */
export const TRAIL_POINTS = 240;

export type { SceneTrack, TrailPoint } from './track-types.js';
/** Per-target age (s) after which an aircraft greys out, then is dropped, as users of ADS-B maps expect. */
export const FADE_S = 30;
export const HIDE_S = 60;

const KT_TO_MPS = 1852 / 3600;
const ftToM = (ft: number | null): number | null => (ft === null ? null : ft * METRES_PER_FT);

const v = (x: unknown): string => (x === null || x === undefined || x === '' ? '–' : String(x));

/** Seconds since the position was reported: upstream age plus the time since the service fetched it. */
export function aircraftAgeS(a: AdsbAircraft, fetchedAtMs: number | null, now: number): number | null {
  if (a.position_age_s === null || fetchedAtMs === null) return null;
  return a.position_age_s + Math.max(0, (now - fetchedAtMs) / 1000);
}

export function aircraftTarget(a: AdsbAircraft, doc: AdsbAnswer, trail: TrailPoint[], now: number): Target | null {
  const fetchedAtMs = doc.fetched_at ? Date.parse(doc.fetched_at) : null;
  const age = aircraftAgeS(a, fetchedAtMs, now);
  if (age !== null && age > HIDE_S) return null;
  const src = `/adsb · ${a.provider}`;
  const label = a.callsign ?? a.registration ?? a.hex;
  return {
    key: `ac:${a.hex}`,
    kind: 'aircraft',
    label,
    lon: a.lon,
    lat: a.lat,
    color: altitudeColor(a),
    glyph: glyphFor(a.category, a.type_code),
    decision: null,
    trackDeg: a.track_deg,
    altM: a.on_ground ? 0 : ftToM(altitudeFt(a)),
    origin: 'live feed',
    simulated: false,
    stale: age === null || age > FADE_S || !doc.live,
    trail,
    search: `${a.hex} ${a.callsign ?? ''} ${a.registration ?? ''} ${a.type_code ?? ''}`.toLowerCase(),
    details: (u) => [
      ['hex', a.hex, src],
      ['callsign', v(a.callsign), src],
      ['registration', v(a.registration), src],
      ['type', `${v(a.type_code)} ${a.type_desc ?? ''}`.trim(), src],
      ['category', `${v(a.category)} → glyph ${glyphFor(a.category, a.type_code)}`, `${src} (glyph: this page)`],
      ['position', fmtLatLon(a.lat, a.lon), `${src} · ${v(a.position_source)}`],
      ['position age', fmtAge(age), `position_age_s ${v(a.position_age_s)} + since fetched_at`],
      ['position time', v(a.position_time), src],
      ['altitude', a.on_ground ? 'ground' : `${fmtAlt(ftToM(altitudeFt(a)), u)} (baro ${v(a.alt_baro_ft)} ft, geom ${v(a.alt_geom_ft)} ft)`, src],
      ['ground speed', fmtSpeed(a.ground_speed_kt === null ? null : a.ground_speed_kt * KT_TO_MPS, u), src],
      ['track', a.track_deg === null ? '– (drawn unrotated)' : `${fmtNum(a.track_deg, 1)}°`, src],
      ['vertical rate', a.vertical_rate_fpm === null ? '–' : `${fmtNum(a.vertical_rate_fpm)} ft/min`, src],
      ['squawk', v(a.squawk), src],
      ['emergency', v(a.emergency), src],
      ['NACp', v(a.nac_p), src],
      ['feed', `live=${doc.live} · ${doc.reason ?? ''} · snapshot ${fmtAge(doc.age_s)} old`, '/adsb'],
      ['attribution', v(doc.attribution), '/adsb'],
    ],
  };
}

export interface Vessel {
  imo: string;
  mmsi?: string;
  name?: string;
  ship_type?: string;
  flag?: { name?: string };
  position?: { lat: number; lon: number; kind?: string; method?: string; voyage_id?: string };
}

export function vesselTarget(x: Vessel, asOf: string | null): Target | null {
  const p = x.position;
  if (!p || !Number.isFinite(p.lat) || !Number.isFinite(p.lon)) return null;
  const src = '/fleet/vessels (synthetic dataset)';
  return {
    key: `vs:${x.imo}`,
    kind: 'vessel',
    label: x.name ?? x.imo,
    lon: p.lon,
    lat: p.lat,
    color: VESSEL_COLOR,
    glyph: null,
    decision: null,
    trackDeg: null,
    altM: null,
    origin: 'dataset',
    simulated: false,
    stale: false,
    trail: [],
    search: `${x.name ?? ''} ${x.imo} ${x.mmsi ?? ''}`.toLowerCase(),
    details: () => [
      ['name', v(x.name), src],
      ['IMO', x.imo, src],
      ['MMSI', v(x.mmsi), src],
      ['type', v(x.ship_type), src],
      ['flag', v(x.flag?.name), src],
      ['position', fmtLatLon(p.lat, p.lon), `${src} · ${v(p.kind)}`],
      ['method', v(p.method), src],
      ['voyage', v(p.voyage_id), src],
      ['as of', v(asOf), src],
    ],
  };
}


export function droneTarget(t: SceneTrack, trail: TrailPoint[], now: number): Target {
  const age = (now - Date.parse(t.ts_utc)) / 1000;
  const src = t.simulated ? '/edge/3d · simulated flight' : '/edge/3d';
  return {
    key: `dr:${t.track_id}`,
    kind: 'drone',
    label: t.track_id,
    lon: t.position.lon,
    lat: t.position.lat,
    color: DECISION_STYLE[t.decision]?.color ?? '#ffffff',
    glyph: null,
    decision: t.decision,
    trackDeg: null,
    altM: t.position.alt_m,
    origin: t.simulated ? 'simulated' : 'posted',
    simulated: t.simulated,
    stale: age > FADE_S,
    trail,
    search: `${t.track_id} ${t.decision} ${t.simulated ? 'simulated' : ''}`.toLowerCase(),
    details: (u) => [
      ['track', t.track_id, src],
      ['decision', `${t.decision} (${DECISION_STYLE[t.decision]?.shape ?? '?'})`, `${src} · latest verdict`],
      ['λ', fmtNum(t.lambda, 4), src],
      ['ledger index', String(t.ledger_index), src],
      ['position', fmtLatLon(t.position.lat, t.position.lon), src],
      ['altitude', fmtAlt(t.position.alt_m, u), src],
      ['sensor source', v(t.source), src],
      ['verdict time', t.ts_utc, src],
      ['age', fmtAge(age), 'this page'],
      ['simulated', String(t.simulated), src],
      ['receipt', `${API}/receipt/export?index=${t.ledger_index}`, 'ledger'],
      ['CoT uid', `${COT_TRACK_UID_PREFIX}${t.track_id}`, '/cot/export (the same track, listed once here)'],
    ],
  };
}

export interface CotEvent {
  uid: string;
  type: string;
  callsign: string | null;
  time: string;
  stale: string;
  start: string;
  how: string | null;
  lat: number;
  lon: number;
  hae: number | null;
  course: number | null;
  speed: number | null;
  remarks: string | null;
}

/** CoT 2.0 XML (one `<event>` or an `<events>` list) → events with a point. */
export function parseCot(xml: string): CotEvent[] {
  const doc = new DOMParser().parseFromString(xml, 'application/xml');
  if (doc.querySelector('parsererror')) throw new Error('CoT export is not well-formed XML');
  const num = (s: string | null | undefined) => (s === null || s === undefined || s === '' || !Number.isFinite(Number(s)) ? null : Number(s));
  const out: CotEvent[] = [];
  for (const e of Array.from(doc.getElementsByTagName('event'))) {
    const p = e.getElementsByTagName('point')[0];
    const lat = num(p?.getAttribute('lat'));
    const lon = num(p?.getAttribute('lon'));
    if (lat === null || lon === null) continue;
    const track = e.getElementsByTagName('track')[0];
    out.push({
      uid: e.getAttribute('uid') ?? '?',
      type: e.getAttribute('type') ?? '?',
      callsign: e.getElementsByTagName('contact')[0]?.getAttribute('callsign') ?? null,
      time: e.getAttribute('time') ?? '',
      start: e.getAttribute('start') ?? '',
      stale: e.getAttribute('stale') ?? '',
      how: e.getAttribute('how'),
      lat,
      lon,
      // 9999999 is CoT's "unknown" height, not a height
      hae: cotMetres(num(p?.getAttribute('hae'))),
      course: num(track?.getAttribute('course')),
      speed: num(track?.getAttribute('speed')),
      remarks: e.getElementsByTagName('remarks')[0]?.textContent ?? null,
    });
  }
  return out;
}

export function cotTarget(e: CotEvent, trail: TrailPoint[], now: number): Target | null {
  const stale = Date.parse(e.stale);
  // a stale time before start means "drop track" in CoT; past stale by 5 min: removed
  if (Number.isFinite(stale) && (stale < Date.parse(e.start) || now - stale > 300_000)) return null;
  const src = '/cot/export (sample tracks)';
  const frame = cotFrame(e.type);
  return {
    key: `cot:${e.uid}`,
    kind: 'cot',
    label: e.callsign ?? e.uid,
    lon: e.lon,
    lat: e.lat,
    color: frame.fill,
    frame,
    glyph: null,
    decision: null,
    trackDeg: e.course,
    altM: e.hae,
    origin: e.how === 'm-s' ? 'simulated' : 'sample',
    simulated: e.how === 'm-s',
    stale: Number.isFinite(stale) && now > stale,
    trail,
    search: `${e.uid} ${e.callsign ?? ''} ${e.type}`.toLowerCase(),
    details: (u) => [
      ['uid', e.uid, src],
      ['type', e.type, src],
      ['frame', `${frame.affiliation} · ${frame.dimension} · ${frame.shape}${frame.open ? ` (open at the ${frame.open})` : ''}`, 'this page, from the type (MIL-STD-2525D / APP-6(D) frames)'],
      ['callsign', v(e.callsign), src],
      ['how', v(e.how), src],
      ['position', fmtLatLon(e.lat, e.lon), src],
      ['hae', fmtAlt(e.hae, u), src],
      ['course', e.course === null ? '–' : `${fmtNum(e.course, 1)}°`, src],
      ['speed', fmtSpeed(e.speed, u), src],
      ['time', e.time, src],
      ['stale', e.stale, src],
      ['remarks', v(e.remarks), src],
    ],
  };
}

/** Appends a received position unless it equals the last one; keeps the newest TRAIL_POINTS. */
export function pushTrail(trail: TrailPoint[], lon: number, lat: number, atMs: number): TrailPoint[] {
  const last = trail[trail.length - 1];
  if (!last || last[0] !== lon || last[1] !== lat) trail.push([lon, lat, atMs]);
  if (trail.length > TRAIL_POINTS) trail.splice(0, trail.length - TRAIL_POINTS);
  return trail;
}
