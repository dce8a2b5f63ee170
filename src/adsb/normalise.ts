/**
 * Upstream payload → normalised aircraft records. Every record comes from one upstream entry with a
 * current position; nothing is inferred, interpolated or filled in. `rr_lat`/`rr_lon` (a
 * receiver-location guess) and `lastPosition` (an old fix) are never read.
 */
import type { AdsbAircraft, AdsbDropped } from '../isomorphic/wire/adsb.js';
import { ServiceError } from '../lib/service-error.js';

export interface ParsedSnapshot {
  /** Upstream clock, epoch ms (null when absent). */
  upstreamNowMs: number | null;
  upstreamTotal: number;
  aircraft: AdsbAircraft[];
  dropped: AdsbDropped;
}

export class BadPayload extends ServiceError {
  readonly code = 'SVC_ADSB_BAD_PAYLOAD';
}

type Raw = Record<string, unknown>;

const isObject = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

/** A field-name list such as `mlat: ["lat","lon"]` says the position came from that technique. */
function positionSource(e: Raw): string | null {
  const derived = (key: string) => Array.isArray(e[key]) && (e[key] as unknown[]).includes('lat');
  if (derived('mlat')) return 'mlat';
  if (derived('tisb')) return 'tisb';
  return str(e.type);
}

/** jv2 `now` is epoch ms, native readsb's is seconds: below 10¹¹ (1973 in ms) it must be seconds. */
function upstreamNow(v: unknown): number | null {
  const n = num(v);
  if (n === null || n <= 0) return null;
  return n < 1e11 ? Math.round(n * 1000) : Math.round(n);
}

/**
 * Validates the envelope strictly (a block page or an HTML error must not look like "no
 * aircraft"), then keeps each military entry that has a current position.
 */
export function parseSnapshot(body: unknown, provider: string, maxPositionAgeS: number, fetchedAtMs: number): ParsedSnapshot {
  if (!isObject(body)) throw new BadPayload('payload is not a JSON object');
  const list = Array.isArray(body.ac) ? body.ac : Array.isArray(body.aircraft) ? body.aircraft : null;
  if (!list) throw new BadPayload('payload has no `ac` or `aircraft` array');
  for (const [i, e] of list.entries()) {
    if (!isObject(e) || typeof e.hex !== 'string' || e.hex === '') throw new BadPayload(`entry ${i} is not an object with a string hex`);
  }
  const nowMs = upstreamNow(body.now);
  const reference = nowMs ?? fetchedAtMs;
  const dropped: AdsbDropped = { no_position: 0, stale_position: 0, not_military: 0, duplicate: 0 };
  const byHex = new Map<string, AdsbAircraft>();
  for (const e of list as Raw[]) {
    const flags = num(e.dbFlags);
    // defence in depth: an upstream that ignored the military filter must not leak civil aircraft
    if (flags === null || (flags & 1) !== 1) {
      dropped.not_military++;
      continue;
    }
    const lat = num(e.lat);
    const lon = num(e.lon);
    if (lat === null || lon === null || Math.abs(lat) > 90 || Math.abs(lon) > 180) {
      dropped.no_position++;
      continue;
    }
    const seenPos = num(e.seen_pos);
    if (seenPos !== null && seenPos > maxPositionAgeS) {
      dropped.stale_position++;
      continue;
    }
    const rawHex = (e.hex as string).trim().toLowerCase();
    const hex = rawHex.replace(/^~/, '');
    if (byHex.has(hex)) {
      dropped.duplicate++;
      continue;
    }
    const altBaro = e.alt_baro;
    byHex.set(hex, {
      hex,
      non_icao: rawHex.startsWith('~'),
      callsign: str(e.flight),
      registration: str(e.r),
      type_code: str(e.t),
      type_desc: str(e.desc),
      military: true,
      lat,
      lon,
      position_age_s: seenPos,
      position_time: seenPos === null ? null : new Date(reference - seenPos * 1000).toISOString(),
      on_ground: altBaro === 'ground',
      alt_baro_ft: num(altBaro),
      alt_geom_ft: num(e.alt_geom),
      ground_speed_kt: num(e.gs),
      track_deg: num(e.track),
      vertical_rate_fpm: num(e.baro_rate) ?? num(e.geom_rate),
      squawk: str(e.squawk),
      emergency: str(e.emergency),
      category: str(e.category),
      position_source: positionSource(e),
      nac_p: num(e.nac_p),
      seen_s: num(e.seen),
      provider,
    });
  }
  // sorted by hex so equal snapshots give byte-identical bodies
  const aircraft = [...byHex.values()].sort((a, b) => (a.hex < b.hex ? -1 : a.hex > b.hex ? 1 : 0));
  return { upstreamNowMs: nowMs, upstreamTotal: list.length, aircraft, dropped };
}

export interface BBox {
  lat_min: number;
  lat_max: number;
  lon_min: number;
  lon_max: number;
}

/** Inclusive box; `lon_min > lon_max` crosses the antimeridian (RFC 7946 §5.2 west > east). */
export function inBox(a: { lat: number; lon: number }, b: BBox): boolean {
  if (a.lat < b.lat_min || a.lat > b.lat_max) return false;
  return b.lon_min <= b.lon_max ? a.lon >= b.lon_min && a.lon <= b.lon_max : a.lon >= b.lon_min || a.lon <= b.lon_max;
}
