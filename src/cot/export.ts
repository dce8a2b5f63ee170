/**
 * CoT 2.0 export (adsb-cot note 3.5). Tracks map to `<event>` trees, ingested events are re-emitted
 * from their parsed tree (so they round-trip), and everything is serialised by xmlbuilder2 with
 * `wellFormed: true`, which refuses control characters instead of writing them. Numbers are
 * fixed-point strings: xs:decimal has no exponent form.
 */
import { create } from 'xmlbuilder2';
import type { XMLBuilder } from 'xmlbuilder2/lib/interfaces.js';
import type { StoredEvent } from './store.js';
import type { Track } from './tracks.js';
import { isElement, XMLNS_URI, type XmlAttr, type XmlElement, type XmlNode } from './xml.js';

export const UID_PREFIX = 'svc-track-';
export const UNKNOWN = '9999999.0';

export interface ExportEntry {
  trackId: string;
  event: XmlElement;
}

const attrs = (pairs: Record<string, string>): XmlAttr[] => Object.entries(pairs).map(([name, value]) => ({ name, prefix: '', local: name, uri: '', value }));
const el = (name: string, a: Record<string, string>, children: XmlNode[] = []): XmlElement => ({ name, prefix: '', local: name, uri: '', attrs: attrs(a), children });

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

const significant = (n: XmlNode) => isElement(n) || /[^ \t\n\r]/.test(n.text);

/** The stored event as received (layout whitespace dropped), stamped in `_flow-tags_` as CoT relays do. */
export function ingestedEvent(s: StoredEvent, nowMs: number): XmlElement {
  return stampedEvent(s.event, new Date(nowMs).toISOString());
}

/** The stored event with `stamp` as its `_flow-tags_` svc value (a marker lets the export cache the rest). */
export function stampedEvent(ev: XmlElement, stamp: string): XmlElement {
  const children = ev.children.filter(isElement).map((c) => {
    if (!(c.uri === '' && c.local === 'detail')) return c;
    let stamped = false;
    const kids = c.children.filter(significant).map((k) => {
      if (!isElement(k) || k.uri !== '' || k.local !== '_flow-tags_') return k;
      stamped = true;
      return { ...k, attrs: [...k.attrs.filter((a) => !(a.uri === '' && a.name === 'svc')), ...attrs({ svc: stamp })] };
    });
    if (!stamped) kids.push(el('_flow-tags_', { svc: stamp }));
    return { ...c, children: kids };
  });
  if (!children.some((c) => c.uri === '' && c.local === 'detail')) children.push(el('detail', {}, [el('_flow-tags_', { svc: stamp })]));
  return { ...ev, children };
}

function append(parent: XMLBuilder, e: XmlElement): void {
  const node = e.uri ? parent.ele(e.uri, e.name) : parent.ele(e.name);
  for (const a of e.attrs) {
    if (a.uri === XMLNS_URI) continue; // xmlbuilder2 declares the namespaces it needs
    if (a.uri) node.att(a.uri, a.name, a.value);
    else node.att(a.name, a.value);
  }
  for (const c of e.children) {
    if (isElement(c)) append(node, c);
    else if (c.cdata) node.dat(c.text);
    else node.txt(c.text);
  }
}

const declaration = () => create({ version: '1.0', encoding: 'UTF-8', standalone: true });

/** What `declaration()` writes first, so fragments can be concatenated into one document. */
export const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>';

/** One `<event>` without the XML declaration: a fragment of the multi-event document. */
export function serialiseFragment(e: XmlElement): string {
  const doc = serialiseEvent(e);
  if (!doc.startsWith(XML_DECLARATION)) throw new Error('unexpected XML declaration from xmlbuilder2');
  return doc.slice(XML_DECLARATION.length);
}

/** One bare `<event>` document. */
export function serialiseEvent(e: XmlElement): string {
  const doc = declaration();
  append(doc, e);
  return doc.end({ wellFormed: true });
}

/** The multi-event form TAK Server answers with: `<events><event/>…</events>`. */
export function serialiseEvents(events: readonly XmlElement[]): string {
  const doc = declaration();
  const root = doc.ele('events');
  for (const e of events) append(root, e);
  return doc.end({ wellFormed: true });
}
