/**
 * Hardened XML → element tree for CoT ingest, because a request body is hostile input. sax in
 * strict mode with `strictEntities` (only the five XML entities and numeric references) and
 * namespace resolution. Any DOCTYPE is refused before anything after it is read, so no entity can
 * be declared, let alone expanded or fetched (XXE, billion laughs). The limits sax lacks are
 * enforced here while parsing: depth, element count, attributes per element and in all, children of
 * the root's `<detail>`, name and value lengths, total text, duplicate attributes, characters
 * outside XML 1.0 `Char`, exactly one root. The text is fed in small chunks and the attributes sax
 * holds for an unfinished tag are counted after each, so a refused document costs the work up to
 * its limit, not its whole length.
 */
import sax from 'sax';
import { codePointsWithin } from '../code-points.js';
import { ServiceError } from '../service-error.js';

/** What one document may hold; beyond any of them it is refused as it is read. */
export interface CotLimits {
  /** Element nesting, root = 1 (real events are 3–4 deep). */
  maxDepth: number;
  maxElements: number;
  maxAttrsPerElement: number;
  /** Attributes of the whole document: parse, validation and export cost grow with each one. */
  maxAttributes: number;
  /** Elements directly under the root's `<detail>` (real events carry fewer than ten). */
  maxDetailChildren: number;
  maxNameLen: number;
  maxAttrValueLen: number;
  /** Characters of the element and attribute names of one document's start tags. */
  maxNameChars: number;
  /** Characters of all attribute values of one document. */
  maxAttrChars: number;
  /** `&` characters of one document: entity and character references cost sax ten times a plain character. */
  maxReferences: number;
  /** Text, CDATA, comments and processing instructions of one document (remarks are the only long text in real events). */
  maxTextChars: number;
  maxUidLen: number;
}

export interface XmlAttr {
  name: string;
  prefix: string;
  local: string;
  uri: string;
  value: string;
}

export interface XmlText {
  text: string;
  cdata?: true;
}

export interface XmlElement {
  name: string;
  prefix: string;
  local: string;
  uri: string;
  attrs: XmlAttr[];
  children: XmlNode[];
}

export type XmlNode = XmlElement | XmlText;

export const isElement = (n: XmlNode): n is XmlElement => 'attrs' in n;

export const XMLNS_URI = 'http://www.w3.org/2000/xmlns/';

export type RejectionKind = 'malformed' | 'doctype' | 'limit' | 'encoding';

export class XmlRejection extends ServiceError {
  readonly code = 'SVC_XML_REJECTED';

  constructor(
    readonly kind: RejectionKind,
    message: string,
    readonly ctx: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

// XML 1.0 Char: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]; lone surrogates fail too
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
const UTF8_NAMES = new Set(['utf-8', 'utf8', 'us-ascii', 'ascii']);
/** Characters per sax write: small enough that one tag's pending attributes stay few, large enough that writes are cheap. */
const CHUNK = 1024;

/** sax's parser with the buffers it fills before it calls a handler (public fields, not in @types/sax). */
type PendingParser = sax.SAXParser & {
  attribList: [string, string][];
  attribName: string;
  attribValue: string;
  tagName: string;
  entity: string;
  doctype: string | boolean;
  textNode: string;
  cdata: string;
  comment: string;
  procInstBody: string;
  sgmlDecl: string;
};

/**
 * Whether one name or value is longer than `max` characters (code points, as every string limit
 * of the service counts). The document totals (maxNameChars, maxAttrChars, maxTextChars) bound
 * the parser's work and stay in UTF-16 code units.
 */
function overChars(s: string, max: number): boolean {
  return !codePointsWithin(s, 0, max);
}

/** Occurrences of `&` in `s`: each starts an entity or character reference, which sax decodes slowly. */
function ampersands(s: string): number {
  let n = 0;
  for (let i = s.indexOf('&'); i !== -1; i = s.indexOf('&', i + 1)) n++;
  return n;
}

/** Throws XmlRejection; returns the root element. `text` is already decoded (UTF-8 checked by the caller). */
export function parseXml(input: string, limits: CotLimits): XmlElement {
  const text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  // strictEntities exists in sax 1.6 but not in @types/sax; no position tracking, which cost a
  // third of sax's time: a refusal says how far the text had been read instead of line and column
  const options = { xmlns: true, strictEntities: true, position: false };
  const parser = sax.parser(true, options as sax.SAXOptions) as PendingParser;
  let read = 0;
  const where = () => ({ chars_read: read });
  const fail = (kind: RejectionKind, message: string, ctx: Record<string, unknown> = {}): never => {
    throw new XmlRejection(kind, message, { ...ctx, ...where() });
  };
  const limit = (name: keyof CotLimits, message: string): never => fail('limit', message, { limit: name, max: limits[name] });
  const checkChars = (s: string, what: string) => {
    if (NOT_XML_CHAR.test(s)) fail('malformed', `${what} contains a character that XML 1.0 does not allow`);
  };

  const stack: XmlElement[] = [];
  let root: XmlElement | null = null;
  let elements = 0;
  let attributes = 0;
  let detailChildren = 0;
  let attrChars = 0;
  let nameChars = 0;
  let references = 0;
  let textChars = 0;
  let declSeen = false;
  let seenAnything = false;
  let attrNames = new Set<string>();

  const tooManyNameChars = (): never => limit('maxNameChars', `more than ${limits.maxNameChars} UTF-16 code units in element and attribute names`);
  const tooManyAttrChars = (): never => limit('maxAttrChars', `more than ${limits.maxAttrChars} UTF-16 code units in attribute values`);
  const tooMuchText = (): never => limit('maxTextChars', `more than ${limits.maxTextChars} UTF-16 code units of text, comments and processing instructions`);
  const addText = (s: string, cdata: boolean) => {
    seenAnything = true;
    checkChars(s, 'text');
    textChars += s.length;
    if (textChars > limits.maxTextChars) tooMuchText();
    const parent = stack.at(-1);
    if (!parent) return; // whitespace around the root (sax rejects anything else there)
    const last = parent.children.at(-1);
    if (!cdata && last && !isElement(last) && !last.cdata) last.text += s;
    else parent.children.push(cdata ? { text: s, cdata: true } : { text: s });
  };
  // one object literal, not parser.onX = …, which would keep this document's tree alive through
  // minor GCs (the no-restricted-syntax rule in eslint.config.js)
  const handlers: Partial<sax.SAXParser> = {
    onerror: (err) => fail('malformed', `XML is not well-formed: ${err.message.split('\n')[0]}`),
    ondoctype: () => fail('doctype', 'DOCTYPE is not allowed: document type declarations and entities are refused'),
    onprocessinginstruction: (pi) => {
      if (pi.name.toLowerCase() === 'xml') {
        // sax accepts a declaration anywhere; XML allows it only as the very first thing
        if (declSeen || seenAnything || !/^<\?xml[\s?]/.test(text)) fail('malformed', 'XML is not well-formed: the XML declaration is allowed only at the start');
        declSeen = true;
        const enc = /encoding\s*=\s*["']([^"']*)["']/.exec(pi.body)?.[1];
        if (enc !== undefined && !UTF8_NAMES.has(enc.toLowerCase())) fail('encoding', `encoding '${enc}' is not supported: send UTF-8`, { encoding: enc });
      }
      seenAnything = true;
      if ((textChars += pi.body.length) > limits.maxTextChars) tooMuchText();
    },
    oncomment: (c) => {
      checkChars(c, 'a comment');
      seenAnything = true;
      if ((textChars += c.length) > limits.maxTextChars) tooMuchText();
    },
    onopentagstart: (tag) => {
      seenAnything = true;
      if (root && stack.length === 0) fail('malformed', 'XML is not well-formed: more than one root element');
      if (++elements > limits.maxElements) limit('maxElements', `more than ${limits.maxElements} elements`);
      if (stack.length + 1 > limits.maxDepth) limit('maxDepth', `elements nested deeper than ${limits.maxDepth}`);
      if (overChars(tag.name, limits.maxNameLen)) limit('maxNameLen', `an element name is longer than ${limits.maxNameLen} characters`);
      if ((nameChars += tag.name.length) > limits.maxNameChars) tooManyNameChars();
      const parent = stack.at(-1);
      if (stack.length === 2 && parent!.local === 'detail' && parent!.uri === '' && ++detailChildren > limits.maxDetailChildren) {
        limit('maxDetailChildren', `more than ${limits.maxDetailChildren} elements directly under <detail>`);
      }
      attrNames = new Set();
    },
    onattribute: (a) => {
      // sax keeps the last of two equal attributes silently; XML forbids them
      if (attrNames.has(a.name)) fail('malformed', `XML is not well-formed: attribute '${a.name.slice(0, 64)}' appears twice`);
      attrNames.add(a.name);
      if (++attributes > limits.maxAttributes) limit('maxAttributes', `more than ${limits.maxAttributes} attributes in the document`);
      if (attrNames.size > limits.maxAttrsPerElement) limit('maxAttrsPerElement', `more than ${limits.maxAttrsPerElement} attributes on one element`);
      if (overChars(a.name, limits.maxNameLen)) limit('maxNameLen', `an attribute name is longer than ${limits.maxNameLen} characters`);
      if ((nameChars += a.name.length) > limits.maxNameChars) tooManyNameChars();
      if (overChars(a.value, limits.maxAttrValueLen)) limit('maxAttrValueLen', `an attribute value is longer than ${limits.maxAttrValueLen} characters`);
      if ((attrChars += a.value.length) > limits.maxAttrChars) tooManyAttrChars();
      checkChars(a.value, `attribute '${a.name.slice(0, 64)}'`);
    },
    onopentag: (tag) => {
      const t = tag as sax.QualifiedTag;
      const attrs = Object.values(t.attributes).map((a) => ({ name: a.name, prefix: a.prefix, local: a.local, uri: a.uri, value: a.value }));
      const el: XmlElement = { name: t.name, prefix: t.prefix, local: t.local, uri: t.uri, attrs, children: [] };
      if (stack.length) stack.at(-1)!.children.push(el);
      else root = el;
      stack.push(el);
    },
    onclosetag: () => {
      stack.pop();
    },
    ontext: (s) => addText(s, false),
    oncdata: (s) => addText(s, true),
  };
  Object.assign(parser, handlers);

  /**
   * The limits again, counting what sax holds but has not handed over yet. sax walks every
   * character (about 0.1 µs each) and reports a name, a value, a comment or a tag's attributes only
   * once it ends; it also checks each attribute of a tag against all the earlier ones (quadratic).
   * Checked between chunks, a document over a limit is refused within one chunk of reaching it.
   */
  const checkPending = () => {
    const p = parser;
    if (p.doctype) fail('doctype', 'DOCTYPE is not allowed: document type declarations and entities are refused');
    if (overChars(p.tagName, limits.maxNameLen)) limit('maxNameLen', `an element name is longer than ${limits.maxNameLen} characters`);
    if (overChars(p.attribName, limits.maxNameLen)) limit('maxNameLen', `an attribute name is longer than ${limits.maxNameLen} characters`);
    if (overChars(p.entity, limits.maxNameLen)) limit('maxNameLen', `an entity or character reference is longer than ${limits.maxNameLen} characters`);
    if (overChars(p.attribValue, limits.maxAttrValueLen)) limit('maxAttrValueLen', `an attribute value is longer than ${limits.maxAttrValueLen} characters`);
    const pending = p.attribList;
    if (pending.length > limits.maxAttrsPerElement) limit('maxAttrsPerElement', `more than ${limits.maxAttrsPerElement} attributes on one element`);
    if (attributes + pending.length > limits.maxAttributes) limit('maxAttributes', `more than ${limits.maxAttributes} attributes in the document`);
    let values = attrChars + p.attribValue.length;
    let names = nameChars + p.tagName.length + p.attribName.length;
    for (const [n, v] of pending) {
      names += n.length;
      values += v.length;
    }
    if (values > limits.maxAttrChars) tooManyAttrChars();
    if (names > limits.maxNameChars) tooManyNameChars();
    if (textChars + p.textNode.length + p.cdata.length + p.comment.length + p.procInstBody.length + p.sgmlDecl.length > limits.maxTextChars) tooMuchText();
  };
  for (let at = 0; at < text.length; at += CHUNK) {
    const chunk = text.slice(at, at + CHUNK);
    read = at + chunk.length;
    if ((references += ampersands(chunk)) > limits.maxReferences) {
      limit('maxReferences', `more than ${limits.maxReferences} '&' characters (entity and character references, or literal in comments and CDATA)`);
    }
    parser.write(chunk);
    checkPending();
  }
  parser.close();
  if (!root) fail('malformed', 'XML is not well-formed: no root element');
  return root!;
}
