/**
 * API payloads → targets. Each function reads only fields the API returned; nothing is inferred
 * or interpolated (spec honesty rule 1): an aircraft moves only when a new report arrives, and its
 * trail is the list of positions actually received.
 */
import { altitudeColor, altitudeFt, DECISION_STYLE, glyphFor, VESSEL_COLOR, type Decision } from '../common/palette.js';
import { fmtAge, fmtLatLon, fmtNum } from '../common/format.js';
import type { Target } from './draw.js';
import { cotFrame } from './cot-frame.js';
import type { AdsbAircraft, AdsbAnswer } from '../../../isomorphic/wire/adsb.js';
import { API } from '../../../isomorphic/api.js';

export const TRAIL_POINTS = 30;
/** Per-target age (s) after which an aircraft greys out, then is dropped, as users of ADS-B maps expect. */
export const FADE_S = 30;
export const HIDE_S = 60;

const v = (x: unknown): string => (x === null || x === undefined || x === '' ? '–' : String(x));

/** Seconds since the position was reported: upstream age plus the time since the service fetched it. */
export function aircraftAgeS(a: AdsbAircraft, fetchedAtMs: number | null, now: number): number | null {
  if (a.position_age_s === null || fetchedAtMs === null) return null;
  return a.position_age_s + Math.max(0, (now - fetchedAtMs) / 1000);
}

export function aircraftTarget(a: AdsbAircraft, doc: AdsbAnswer, trail: [number, number][], now: number): Target | null {
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
    altFt: a.on_ground ? 0 : altitudeFt(a),
    stale: age === null || age > FADE_S || !doc.live,
    trail,
    search: `${a.hex} ${a.callsign ?? ''} ${a.registration ?? ''} ${a.type_code ?? ''}`.toLowerCase(),
    details: () => [
      ['hex', a.hex, src],
      ['callsign', v(a.callsign), src],
      ['registration', v(a.registration), src],
      ['type', `${v(a.type_code)} ${a.type_desc ?? ''}`.trim(), src],
      ['category', `${v(a.category)} → glyph ${glyphFor(a.category, a.type_code)}`, `${src} (glyph: this page)`],
      ['position', fmtLatLon(a.lat, a.lon), `${src} · ${v(a.position_source)}`],
      ['position age', fmtAge(age), `position_age_s ${v(a.position_age_s)} + since fetched_at`],
      ['position time', v(a.position_time), src],
      ['altitude', a.on_ground ? 'ground' : `${fmtNum(altitudeFt(a))} ft (baro ${v(a.alt_baro_ft)}, geom ${v(a.alt_geom_ft)})`, src],
      ['ground speed', a.ground_speed_kt === null ? '–' : `${fmtNum(a.ground_speed_kt, 1)} kt`, src],
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
    altFt: null,
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

export interface SceneTrack {
  track_id: string;
  source: string | null;
  position: { lat: number; lon: number; alt_m: number | null };
  lambda: number;
  decision: Decision;
  ledger_index: number;
  ts_utc: string;
  simulated: boolean;
}

export function droneTarget(t: SceneTrack, trail: [number, number][], now: number): Target {
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
    altFt: t.position.alt_m === null ? null : t.position.alt_m * 3.28084,
    stale: age > FADE_S,
    trail,
    search: `${t.track_id} ${t.decision}`.toLowerCase(),
    details: () => [
      ['track', t.track_id, src],
      ['decision', `${t.decision} (${DECISION_STYLE[t.decision]?.shape ?? '?'})`, `${src} · latest verdict`],
      ['λ', fmtNum(t.lambda, 4), src],
      ['ledger index', String(t.ledger_index), src],
      ['position', fmtLatLon(t.position.lat, t.position.lon), src],
      ['altitude', t.position.alt_m === null ? '–' : `${fmtNum(t.position.alt_m, 1)} m`, src],
      ['sensor source', v(t.source), src],
      ['verdict time', t.ts_utc, src],
      ['age', fmtAge(age), 'this page'],
      ['simulated', String(t.simulated), src],
      ['receipt', `${API}/receipt/export?index=${t.ledger_index}`, 'ledger'],
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
      hae: num(p?.getAttribute('hae')),
      course: num(track?.getAttribute('course')),
      speed: num(track?.getAttribute('speed')),
      remarks: e.getElementsByTagName('remarks')[0]?.textContent ?? null,
    });
  }
  return out;
}

export function cotTarget(e: CotEvent, trail: [number, number][], now: number): Target | null {
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
    altFt: e.hae === null ? null : e.hae * 3.28084,
    stale: Number.isFinite(stale) && now > stale,
    trail,
    search: `${e.uid} ${e.callsign ?? ''} ${e.type}`.toLowerCase(),
    details: () => [
      ['uid', e.uid, src],
      ['type', e.type, src],
      ['frame', `${frame.affiliation} · ${frame.dimension} · ${frame.shape}${frame.open ? ` (open at the ${frame.open})` : ''}`, 'this page, from the type (MIL-STD-2525D / APP-6(D) frames)'],
      ['callsign', v(e.callsign), src],
      ['how', v(e.how), src],
      ['position', fmtLatLon(e.lat, e.lon), src],
      ['hae', e.hae === null ? '–' : `${fmtNum(e.hae, 1)} m`, src],
      ['course', e.course === null ? '–' : `${fmtNum(e.course, 1)}°`, src],
      ['speed', e.speed === null ? '–' : `${fmtNum(e.speed, 2)} m/s`, src],
      ['time', e.time, src],
      ['stale', e.stale, src],
      ['remarks', v(e.remarks), src],
    ],
  };
}

/** Appends a received position unless it equals the last one; keeps the newest TRAIL_POINTS. */
export function pushTrail(trail: [number, number][], lon: number, lat: number): [number, number][] {
  const last = trail[trail.length - 1];
  if (!last || last[0] !== lon || last[1] !== lat) trail.push([lon, lat]);
  if (trail.length > TRAIL_POINTS) trail.splice(0, trail.length - TRAIL_POINTS);
  return trail;
}
