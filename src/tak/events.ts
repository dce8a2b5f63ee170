/**
 * What goes out to TAK, as CoT 2.0 events built with the project's serialiser: verdicts, military
 * aircraft of the ADS-B feed, and relayed ingested events. A track is described once (`TrackSpec`)
 * and rendered at each send with that send's `time` and `stale`; nothing is extrapolated, a resend
 * carries the position last reported.
 *
 * Types (MITRE CoT type catalog, after MIL-STD-2525B; `Q` is the catalog's drone/RPV function):
 * - a verdict is about a drone track: DENY → hostile `a-h-A-M-F-Q`, REVIEW → unknown `a-u-A-M-F-Q`,
 *   ALLOW → neutral `a-n-A-M-F-Q` (allowed to fly is not the same as friendly);
 * - an aircraft of the military feed is friendly military air, by its ADS-B emitter category:
 *   A7 rotorcraft `a-f-A-M-H`, B6 unmanned `a-f-A-M-F-Q`, A1–A6 fixed wing `a-f-A-M-F`, else `a-f-A-M`.
 */
import type { Snapshot } from '../adsb/feed.js';
import { API } from '../isomorphic/api.js';
import type { AdsbAircraft } from '../isomorphic/wire/adsb.js';
import { el, serialiseFragment, stampedEvent } from '../lib/cot/serialise.js';
import { isElement, XMLNS_URI, type XmlElement } from '../lib/cot/xml.js';
import type { StoredEvent } from '../cot/store.js';
import { nodeVerdict } from '../verdicts/detail.js';
import type { Verdict } from '../verdicts/verdict-service.js';
import type { CotFields, CotOut } from './output.js';

/** CoT's "unknown" for hae, ce and le. */
export const UNKNOWN_M = 9_999_999;
const FT_TO_M = 0.3048;
const KT_TO_MPS = 0.514444;

export const VERDICT_UID_PREFIX = 'svc-verdict-';

export const VERDICT_TYPE: Readonly<Record<string, string>> = { DENY: 'a-h-A-M-F-Q', REVIEW: 'a-u-A-M-F-Q', ALLOW: 'a-n-A-M-F-Q' };

/** A track as every send renders it: everything but the send's own `time` and `stale`. */
export interface TrackSpec {
  uid: string;
  type: string;
  how: string;
  opex?: string;
  /** When the reported position was fixed: the event's `start`. */
  startMs: number;
  lat: number;
  lon: number;
  hae: number;
  ce: number;
  le: number;
  detail: XmlElement[];
}

const fixed = (x: number, digits: number): string => x.toFixed(digits);
const metres = (x: number): string => (x === UNKNOWN_M ? '9999999.0' : fixed(x, 1));
const iso = (ms: number): string => new Date(ms).toISOString();

/** Inner XML of `<detail>`, as TAK Protocol v1's xmlDetail holds it. */
function innerXml(detail: XmlElement | undefined): string {
  if (!detail) return '';
  const xml = serialiseFragment(detail);
  if (xml.endsWith('/>')) return '';
  return xml.slice(xml.indexOf('>') + 1, xml.lastIndexOf('</'));
}

/** The detail of each spec, serialised by xmlbuilder2 once: a resend only changes the times. */
const detailCache = new WeakMap<TrackSpec, string>();

function detailOf(spec: TrackSpec): string {
  let xml = detailCache.get(spec);
  if (xml === undefined) {
    xml = spec.detail.map(writeElement).join('');
    detailCache.set(spec, xml);
  }
  return xml;
}

const TEXT_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/** A detail element the feed built (plain names, attributes and text: no namespaces, CDATA or comments). */
function writeElement(e: XmlElement): string {
  if (e.uri || e.prefix) throw new Error('a detail element with a namespace is not written by hand');
  const attrs = e.attrs.map((a) => attr(a.name, a.value)).join('');
  if (e.children.length === 0) return `<${e.name}${attrs}/>`;
  const inner = e.children
    .map((c) => {
      if (isElement(c)) return writeElement(c);
      if (c.cdata || NOT_XML_CHAR.test(c.text)) throw new Error('detail text XML cannot carry');
      return c.text.replace(/[&<>]/g, (ch) => TEXT_ESCAPES[ch]!);
    })
    .join('');
  return `<${e.name}${attrs}>${inner}</${e.name}>`;
}

/** Characters outside XML 1.0 `Char`: refused, as xmlbuilder2's wellFormed mode refuses them. */
const NOT_XML_CHAR = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
const ATTR_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\t': '&#x9;', '\n': '&#xA;', '\r': '&#xD;' };

function attr(name: string, value: string): string {
  if (NOT_XML_CHAR.test(value)) throw new Error(`${name} holds a character XML cannot carry`);
  return ` ${name}="${value.replace(/[&<>"\t\n\r]/g, (c) => ATTR_ESCAPES[c]!)}"`;
}

/**
 * One send of `spec` at `nowMs`: time = now, start = the fix, stale = now + staleS. The event's
 * shell is written here around the detail serialised once (a resend costs a few string joins, not
 * a tree walk on the main thread); the tests hold it equal to xmlbuilder2's output.
 */
export function renderTrack(spec: TrackSpec, nowMs: number, staleS: number): CotOut {
  const startMs = Math.min(spec.startMs, nowMs);
  const staleMs = nowMs + staleS * 1000;
  const detailXml = detailOf(spec);
  const lat = fixed(spec.lat, 7);
  const lon = fixed(spec.lon, 7);
  const xml =
    `<event version="2.0"${attr('uid', spec.uid)}${attr('type', spec.type)}${attr('how', spec.how)} time="${iso(nowMs)}" start="${iso(startMs)}" stale="${iso(staleMs)}"` +
    `${spec.opex ? attr('opex', spec.opex) : ''}><point lat="${lat}" lon="${lon}" hae="${metres(spec.hae)}" ce="${metres(spec.ce)}" le="${metres(spec.le)}"/>` +
    (detailXml ? `<detail>${detailXml}</detail>` : '<detail/>') +
    '</event>';
  const fields: CotFields = {
    uid: spec.uid,
    type: spec.type,
    how: spec.how,
    timeMs: nowMs,
    startMs,
    staleMs,
    lat: Number(lat),
    lon: Number(lon),
    hae: spec.hae,
    ce: spec.ce,
    le: spec.le,
    detailXml,
    ...(spec.opex ? { opex: spec.opex } : {}),
  };
  return { fields, xml };
}

/** The same event as xmlbuilder2 writes it from a tree (the reference renderTrack is held to). */
export function renderTrackTree(spec: TrackSpec, nowMs: number, staleS: number): string {
  const event = el(
    'event',
    {
      version: '2.0',
      uid: spec.uid,
      type: spec.type,
      how: spec.how,
      time: iso(nowMs),
      start: iso(Math.min(spec.startMs, nowMs)),
      stale: iso(nowMs + staleS * 1000),
      ...(spec.opex ? { opex: spec.opex } : {}),
    },
    [el('point', { lat: fixed(spec.lat, 7), lon: fixed(spec.lon, 7), hae: metres(spec.hae), ce: metres(spec.ce), le: metres(spec.le) }), el('detail', {}, spec.detail)],
  );
  return serialiseFragment(event);
}

function trackDetail(courseDeg: number | null | undefined, speedMps: number | null | undefined): XmlElement[] {
  if (typeof courseDeg !== 'number' || typeof speedMps !== 'number' || !Number.isFinite(courseDeg) || !Number.isFinite(speedMps)) return [];
  return [el('track', { course: fixed(((courseDeg % 360) + 360) % 360, 1), speed: fixed(Math.max(0, speedMps), 2) })];
}

/** Where a verdict's signed receipt is served (null without `server.publicBaseUrl`: a path alone opens nothing on a TAK device). */
export function receiptUrl(publicBaseUrl: string | null, index: number): string | null {
  return publicBaseUrl ? `${publicBaseUrl.replace(/\/+$/, '')}${API}/receipt/export?index=${index}` : null;
}

/**
 * A verdict as a track, told from its ledger node (so every replica tells it the same): the
 * decision and λ from the signed receipt, the position from the frame stored with it. A node
 * without its frame has no position to show and is not sent.
 */
export function verdictTrack(v: Pick<Verdict, 'node'>, publicBaseUrl: string | null): TrackSpec | null {
  const { receipt, subject, detail } = nodeVerdict(v.node, true);
  if (!detail || !subject) return null;
  const f = detail.frame;
  const link = receiptUrl(publicBaseUrl, v.node.index);
  const lambda = `\u03bb ${fixed(receipt.lambda, 3)} (floor ${fixed(receipt.lambda_floor, 3)})`;
  const where = f.alt_m === undefined ? '' : `; reported altitude ${fixed(f.alt_m, 1)} m`;
  const remarks = `${receipt.decision} ${lambda}; ${f.source ?? 'unknown source'}${where}; signed receipt #${v.node.index}${link ? ` ${link}` : ''}${v.node.simulated ? '; simulated' : ''}`;
  const kids: XmlElement[] = [el('contact', { callsign: `${receipt.decision} ${subject.track_id}` }), ...trackDetail(f.heading_deg, f.speed_mps), el('remarks', { source: 'svc' }, [{ text: remarks }])];
  if (link) kids.push(el('link', { url: link, remarks: `signed receipt #${v.node.index}`, relation: 'r-u' }));
  return {
    uid: `${VERDICT_UID_PREFIX}${subject.track_id}`,
    type: VERDICT_TYPE[receipt.decision] ?? 'a-u-A-M-F-Q',
    how: v.node.simulated ? 'm-s' : 'm-g',
    ...(v.node.simulated ? { opex: 's' } : {}),
    startMs: Date.parse(v.node.tsUtc),
    lat: f.lat,
    lon: f.lon,
    // the frame's altitude has no stated datum, so height above the ellipsoid stays unknown
    hae: UNKNOWN_M,
    ce: UNKNOWN_M,
    le: UNKNOWN_M,
    detail: kids,
  };
}

/** The 95 % horizontal error bound of each NACp value (DO-260B), in metres; 0 is unknown. */
const NACP_EPU_M = [UNKNOWN_M, 18_520, 7408, 3704, 1852, 926, 555.6, 185.2, 92.6, 30, 10, 3];

export function aircraftType(category: string | null): string {
  if (category === 'A7') return 'a-f-A-M-H';
  if (category === 'B6') return 'a-f-A-M-F-Q';
  if (category && /^A[1-6]$/.test(category)) return 'a-f-A-M-F';
  return 'a-f-A-M';
}

/** A military aircraft of a snapshot, from what it reported only. */
export function aircraftTrack(ac: AdsbAircraft, snap: Pick<Snapshot, 'fetchedAtMs' | 'attribution'>): TrackSpec {
  const fixMs = ac.position_time ? Date.parse(ac.position_time) : snap.fetchedAtMs;
  const ce = typeof ac.nac_p === 'number' && ac.nac_p >= 0 && ac.nac_p < NACP_EPU_M.length ? NACP_EPU_M[ac.nac_p]! : UNKNOWN_M;
  const callsign = ac.callsign ?? ac.registration ?? ac.hex.toUpperCase();
  const facts = [ac.type_code, ac.registration, ac.squawk ? `squawk ${ac.squawk}` : null, ac.on_ground ? 'on ground' : null].filter((x): x is string => !!x);
  const remarks = `ADS-B military${facts.length ? ` (${facts.join(', ')})` : ''}; from ${ac.provider}: ${snap.attribution}`;
  return {
    uid: `ICAO-${ac.hex.toUpperCase()}`,
    type: aircraftType(ac.category),
    how: 'm-g',
    startMs: Number.isFinite(fixMs) ? fixMs : snap.fetchedAtMs,
    lat: ac.lat,
    lon: ac.lon,
    hae: typeof ac.alt_geom_ft === 'number' ? ac.alt_geom_ft * FT_TO_M : UNKNOWN_M,
    ce,
    le: UNKNOWN_M,
    detail: [el('contact', { callsign }), ...trackDetail(ac.track_deg, typeof ac.ground_speed_kt === 'number' ? ac.ground_speed_kt * KT_TO_MPS : null), el('remarks', { source: 'svc' }, [{ text: remarks }])],
  };
}

const attrsOf = (e: XmlElement): Record<string, string> => Object.fromEntries(e.attrs.filter((a) => a.uri !== XMLNS_URI).map((a) => [a.name, a.value]));

/** An ingested event relayed as received, stamped in `_flow-tags_` as CoT relays do; its own times stand. */
export function relayedEvent(s: StoredEvent, nowMs: number): CotOut {
  const stamp = iso(nowMs);
  const event = stampedEvent(s.event, stamp);
  const a = attrsOf(event);
  const point = event.children.find((c): c is XmlElement => isElement(c) && c.local === 'point');
  const detail = event.children.find((c): c is XmlElement => isElement(c) && c.local === 'detail');
  const p = point ? attrsOf(point) : {};
  const xml = s.exported ? s.exported.head + stamp + s.exported.tail : serialiseFragment(event);
  const fields: CotFields = {
    uid: a.uid!,
    type: a.type!,
    how: a.how ?? '',
    timeMs: Date.parse(a.time!),
    startMs: Date.parse(a.start!),
    staleMs: Date.parse(a.stale!),
    lat: Number(p.lat),
    lon: Number(p.lon),
    hae: Number(p.hae),
    ce: Number(p.ce),
    le: Number(p.le),
    detailXml: innerXml(detail),
    ...(a.access ? { access: a.access } : {}),
    ...(a.opex ? { opex: a.opex } : {}),
  };
  return { fields, xml };
}
