/**
 * CoT 2.0 export. Tracks map to `<event>` trees, ingested events are re-emitted from their parsed
 * tree (so they round-trip), and everything is serialised by xmlbuilder2 with `wellFormed: true`,
 * which refuses control characters instead of writing them. Numbers are fixed-point strings:
 * xs:decimal has no exponent form.
 */
import type { StoredEvent } from './store.js';
import type { Track } from './tracks.js';
import { el, stampedEvent } from '../lib/cot/serialise.js';
import type { XmlElement } from '../lib/cot/xml.js';

export { serialiseEvent, serialiseEvents, serialiseFragment, stampedEvent, XML_DECLARATION } from '../lib/cot/serialise.js';

import { COT_TRACK_UID_PREFIX as UID_PREFIX } from '../isomorphic/api.js';

export { UID_PREFIX };
export const UNKNOWN = '9999999.0';

export interface ExportEntry {
  trackId: string;
  event: XmlElement;
}


const fixed = (x: number, digits: number) => x.toFixed(digits);
const metres = (x: number | null | undefined) => (x === null || x === undefined || !Number.isFinite(x) ? UNKNOWN : fixed(x, 1));

export function trackEvent(t: Track, nowMs: number, staleS: number): XmlElement {
  const time = new Date(nowMs).toISOString();
  const detail: XmlElement[] = [el('contact', { callsign: t.callsign })];
  if (t.courseDeg !== null && t.speedMps !== null && Number.isFinite(t.courseDeg) && Number.isFinite(t.speedMps)) {
    const course = ((t.courseDeg % 360) + 360) % 360;
    const track: Record<string, string> = { course: fixed(course, 1), speed: fixed(Math.max(0, t.speedMps), 2) };
    if (t.slopeDeg !== null && t.slopeDeg !== undefined && Number.isFinite(t.slopeDeg)) track.slope = fixed(Math.max(-90, Math.min(90, t.slopeDeg)), 1);
    detail.push(el('track', track));
  }
  detail.push(el('precisionlocation', { geopointsrc: 'CALC', altsrc: 'CALC' }));
  const remark = t.remarks ?? (t.simulated ? 'simulated track; not live' : 'track');
  detail.push(el('remarks', { source: 'svc' }, [{ text: remark }]));
  detail.push(el('_flow-tags_', { svc: time }));
  return el(
    'event',
    {
      version: '2.0',
      uid: `${UID_PREFIX}${t.id}`,
      type: t.cotType,
      // say "simulated" in the data, not only in prose
      how: t.simulated ? 'm-s' : 'm-g',
      time,
      start: time,
      stale: new Date(nowMs + staleS * 1000).toISOString(),
      ...(t.simulated ? { opex: 's' } : {}),
    },
    [el('point', { lat: fixed(t.lat, 7), lon: fixed(t.lon, 7), hae: metres(t.haeM), ce: metres(t.ceM), le: metres(t.leM) }), el('detail', {}, detail)],
  );
}

/** The stored event as received (layout whitespace dropped), stamped in `_flow-tags_` as CoT relays do. */
export function ingestedEvent(s: StoredEvent, nowMs: number): XmlElement {
  return stampedEvent(s.event, new Date(nowMs).toISOString());
}
