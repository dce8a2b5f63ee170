/**
 * CoT trees to XML: xmlbuilder2 with `wellFormed: true`, which refuses control characters instead
 * of writing them, and the `_flow-tags_` stamp CoT relays add. Shared by the export (main thread)
 * and the ingest's one-time serialisation (a kernel thread).
 */
import { create } from 'xmlbuilder2';
import type { XMLBuilder } from 'xmlbuilder2/lib/interfaces.js';
import { isElement, XMLNS_URI, type XmlAttr, type XmlElement, type XmlNode } from './xml.js';

export const attrs = (pairs: Record<string, string>): XmlAttr[] => Object.entries(pairs).map(([name, value]) => ({ name, prefix: '', local: name, uri: '', value }));
export const el = (name: string, a: Record<string, string>, children: XmlNode[] = []): XmlElement => ({ name, prefix: '', local: name, uri: '', attrs: attrs(a), children });

const significant = (n: XmlNode) => isElement(n) || /[^ \t\n\r]/.test(n.text);

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
