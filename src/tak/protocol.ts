/**
 * TAK Protocol, as the outputs and their peers speak it: version 0 is one CoT XML `<event>` per
 * message; version 1 is a protobuf `TakMessage` behind a mesh header (`0xbf 0x01 0xbf`) or a stream
 * frame (`0xbf <varint length>`). The protobuf is written and read by hand here: five message kinds
 * of plain scalar fields do not need a code generator, and the field numbers below are the wire
 * format facts of TAK's takproto (TakMessage, TakControl, CotEvent, Detail and its six structured
 * children). Decoding never throws: a malformed peer message is a value the caller counts and drops.
 */
import { isElement, parseXml, XmlRejection, type CotLimits, type XmlElement } from '../lib/cot/xml.js';
import type { CotFields } from './output.js';

/** The byte every v1 message starts with, on the mesh and on a stream. */
export const TAK_MAGIC = 0xbf;
/** The one protocol version above XML that exists. */
export const TAK_PROTOCOL_VERSION = 1;
/** A protobuf varint is at most ten bytes (64 bits, seven per byte). */
export const MAX_VARINT_BYTES = 10;

export const TYPE_PROTOCOL_SUPPORT = 't-x-takp-v';
export const TYPE_PROTOCOL_REQUEST = 't-x-takp-q';
export const TYPE_PROTOCOL_RESPONSE = 't-x-takp-r';
export const TYPE_PING = 't-x-c-t';
export const TYPE_PONG = 't-x-c-t-r';

/** CoT's "unknown" for `hae`, `ce` and `le`. */
const UNKNOWN = 9999999;

// ---------------------------------------------------------------- varints

/** The bytes of an unsigned varint (bigint for values beyond 2^53, as tests of the ten-byte form need). */
export function encodeVarint(value: number | bigint): Buffer {
  let v = BigInt(value);
  if (v < 0n || v >= 1n << 64n) throw new RangeError(`varint out of range: ${v}`);
  const out: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return Buffer.from(out);
}

/** A decoded varint: `value` is exact up to 2^53 and rounded above; `next` is the offset after it. */
export type VarintRead = { ok: true; value: number; next: number } | { ok: false; reason: 'incomplete' | 'too_long' };

export function decodeVarint(buf: Uint8Array, offset = 0): VarintRead {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < MAX_VARINT_BYTES; i++) {
    const at = offset + i;
    if (at >= buf.length) return { ok: false, reason: 'incomplete' };
    const byte = buf[at] as number;
    value += (byte & 0x7f) * scale;
    if ((byte & 0x80) === 0) return i < 7 ? { ok: true, value, next: at + 1 } : { ok: true, value: wideVarint(buf, offset, at), next: at + 1 };
    scale *= 128;
  }
  return { ok: false, reason: 'too_long' };
}

/** A varint of eight bytes or more summed exactly, then rounded once (summing doubles would round at every byte). */
function wideVarint(buf: Uint8Array, from: number, last: number): number {
  let v = 0n;
  for (let at = last; at >= from; at--) v = (v << 7n) | BigInt((buf[at] as number) & 0x7f);
  return Number(v);
}

// ---------------------------------------------------------------- protobuf writing

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_BYTES = 2;
const WIRE_FIXED32 = 5;

/** Appends fields in field-number order; proto3 leaves empty strings and absent messages out. */
class ProtoWriter {
  private readonly parts: Buffer[] = [];

  private key(field: number, wire: number): void {
    this.parts.push(encodeVarint(field * 8 + wire));
  }

  string(field: number, s: string | undefined): this {
    if (s) this.bytes(field, Buffer.from(s, 'utf8'));
    return this;
  }

  bytes(field: number, b: Buffer): this {
    this.key(field, WIRE_BYTES);
    this.parts.push(encodeVarint(b.length), b);
    return this;
  }

  uint(field: number, n: number): this {
    if (n === 0) return this;
    this.key(field, WIRE_VARINT);
    this.parts.push(encodeVarint(n));
    return this;
  }

  double(field: number, x: number): this {
    this.key(field, WIRE_FIXED64);
    const b = Buffer.allocUnsafe(8);
    b.writeDoubleLE(x, 0);
    this.parts.push(b);
    return this;
  }

  finish(): Buffer {
    return Buffer.concat(this.parts);
  }
}

/** The protobuf `CotEvent` of one event; the whole detail travels as `xmlDetail`, which every receiver reads. */
function cotEventBytes(f: CotFields): Buffer {
  const detail = new ProtoWriter().string(1, f.detailXml).finish();
  const w = new ProtoWriter()
    .string(1, f.type)
    .string(2, f.access)
    .string(4, f.opex)
    .string(5, f.uid)
    .uint(6, f.timeMs)
    .uint(7, f.startMs)
    .uint(8, f.staleMs)
    .string(9, f.how)
    .double(10, f.lat)
    .double(11, f.lon)
    .double(12, f.hae)
    .double(13, f.ce)
    .double(14, f.le);
  return w.bytes(15, detail).finish();
}

/** A `TakMessage` holding one `CotEvent` (times must be whole, non-negative milliseconds). */
export function encodeTakMessage(f: CotFields): Buffer {
  return new ProtoWriter().bytes(2, cotEventBytes(f)).finish();
}

/** The UDP mesh datagram: `0xbf 0x01 0xbf` + TakMessage. */
export function meshDatagram(f: CotFields): Buffer {
  return Buffer.concat([Buffer.from([TAK_MAGIC, TAK_PROTOCOL_VERSION, TAK_MAGIC]), encodeTakMessage(f)]);
}

/** One stream frame: `0xbf <varint length>` + TakMessage. */
export function streamFrame(f: CotFields): Buffer {
  return frameMessage(encodeTakMessage(f));
}

/** Frames an already encoded TakMessage for a stream. */
export function frameMessage(takMessage: Buffer): Buffer {
  return Buffer.concat([Buffer.from([TAK_MAGIC]), encodeVarint(takMessage.length), takMessage]);
}

// ---------------------------------------------------------------- protobuf reading

type Field = { field: number; wire: typeof WIRE_VARINT; n: number } | { field: number; wire: typeof WIRE_FIXED64; x: number } | { field: number; wire: typeof WIRE_BYTES; b: Buffer } | { field: number; wire: typeof WIRE_FIXED32 };

/** The fields of one message in order, or null when the bytes are not protobuf (groups, overruns, bad keys). */
function readFields(buf: Buffer): Field[] | null {
  const out: Field[] = [];
  let at = 0;
  while (at < buf.length) {
    const key = decodeVarint(buf, at);
    if (!key.ok) return null;
    const field = Math.floor(key.value / 8);
    const wire = key.value % 8;
    if (field === 0) return null;
    at = key.next;
    if (wire === WIRE_VARINT) {
      const v = decodeVarint(buf, at);
      if (!v.ok) return null;
      out.push({ field, wire, n: v.value });
      at = v.next;
    } else if (wire === WIRE_FIXED64) {
      if (at + 8 > buf.length) return null;
      out.push({ field, wire, x: buf.readDoubleLE(at) });
      at += 8;
    } else if (wire === WIRE_BYTES) {
      const len = decodeVarint(buf, at);
      if (!len.ok || len.next + len.value > buf.length) return null;
      out.push({ field, wire, b: buf.subarray(len.next, len.next + len.value) });
      at = len.next + len.value;
    } else if (wire === WIRE_FIXED32) {
      if (at + 4 > buf.length) return null;
      out.push({ field, wire });
      at += 4;
    } else {
      return null;
    }
  }
  return out;
}

/** A sub-message's string fields by number (the structured detail children are all strings but three). */
function stringsOf(fields: Field[]): Map<number, string> {
  const m = new Map<number, string>();
  for (const f of fields) if (f.wire === WIRE_BYTES) m.set(f.field, f.b.toString('utf8'));
  return m;
}

export function escapeXmlAttr(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] as string);
}

/** An empty element with the attributes that are set, or '' when none is. */
function emptyElement(name: string, attrs: [string, string | undefined][]): string {
  const set = attrs.filter((a): a is [string, string] => a[1] !== undefined && a[1] !== '');
  if (set.length === 0) return '';
  return `<${name}${set.map(([k, v]) => ` ${k}="${escapeXmlAttr(v)}"`).join('')}/>`;
}

/** `Detail` back to XML: `xmlDetail` followed by the structured children a sender moved out of it. */
function detailXmlOf(buf: Buffer): string | null {
  const fields = readFields(buf);
  if (!fields) return null;
  let xml = '';
  const extra: string[] = [];
  for (const f of fields) {
    if (f.wire !== WIRE_BYTES) continue;
    const sub = f.field === 1 ? null : readFields(f.b);
    if (f.field !== 1 && !sub) return null;
    const s = sub ? stringsOf(sub) : new Map<number, string>();
    const num = (n: number): string | undefined => {
      const v = sub?.find((x) => x.field === n);
      if (!v) return undefined;
      return v.wire === WIRE_VARINT ? String(v.n) : v.wire === WIRE_FIXED64 ? String(v.x) : undefined;
    };
    if (f.field === 1) xml = f.b.toString('utf8');
    else if (f.field === 2) extra.push(emptyElement('contact', [['endpoint', s.get(1)], ['callsign', s.get(2)]]));
    else if (f.field === 3) extra.push(emptyElement('__group', [['name', s.get(1)], ['role', s.get(2)]]));
    else if (f.field === 4) extra.push(emptyElement('precisionlocation', [['geopointsrc', s.get(1)], ['altsrc', s.get(2)]]));
    else if (f.field === 5) extra.push(emptyElement('status', [['battery', num(1)]]));
    else if (f.field === 6) extra.push(emptyElement('takv', [['device', s.get(1)], ['platform', s.get(2)], ['os', s.get(3)], ['version', s.get(4)]]));
    else if (f.field === 7) extra.push(emptyElement('track', [['speed', num(1) ?? '0'], ['course', num(2) ?? '0']]));
  }
  return xml + extra.join('');
}

export interface TakControlFields {
  minProtoVersion: number;
  maxProtoVersion: number;
  contactUid: string;
}

export type TakMessageRead =
  | { ok: true; event: CotFields | null; control: TakControlFields | null }
  | { ok: false; reason: string };

/** A `TakMessage` back to fields; `event` is null for a control-only message. Missing doubles read as proto3's 0. */
export function decodeTakMessage(buf: Buffer): TakMessageRead {
  const top = readFields(buf);
  if (!top) return { ok: false, reason: 'not a protobuf message' };
  let event: CotFields | null = null;
  let control: TakControlFields | null = null;
  for (const f of top) {
    if (f.wire !== WIRE_BYTES) continue;
    if (f.field === 1) {
      const c = readFields(f.b);
      if (!c) return { ok: false, reason: 'malformed TakControl' };
      const n = (k: number) => c.find((x) => x.field === k && x.wire === WIRE_VARINT) as { n: number } | undefined;
      control = { minProtoVersion: n(1)?.n ?? 0, maxProtoVersion: n(2)?.n ?? 0, contactUid: stringsOf(c).get(3) ?? '' };
    } else if (f.field === 2) {
      const r = cotEventOf(f.b);
      if (!r) return { ok: false, reason: 'malformed CotEvent' };
      event = r;
    }
  }
  return { ok: true, event, control };
}

function cotEventOf(buf: Buffer): CotFields | null {
  const fields = readFields(buf);
  if (!fields) return null;
  const e: CotFields = { uid: '', type: '', how: '', timeMs: 0, startMs: 0, staleMs: 0, lat: 0, lon: 0, hae: 0, ce: 0, le: 0, detailXml: '' };
  const strings: Record<number, 'type' | 'access' | 'opex' | 'uid' | 'how'> = { 1: 'type', 2: 'access', 4: 'opex', 5: 'uid', 9: 'how' };
  const times: Record<number, 'timeMs' | 'startMs' | 'staleMs'> = { 6: 'timeMs', 7: 'startMs', 8: 'staleMs' };
  const doubles: Record<number, 'lat' | 'lon' | 'hae' | 'ce' | 'le'> = { 10: 'lat', 11: 'lon', 12: 'hae', 13: 'ce', 14: 'le' };
  for (const f of fields) {
    const s = strings[f.field];
    const t = times[f.field];
    const d = doubles[f.field];
    if (f.wire === WIRE_BYTES && s) e[s] = f.b.toString('utf8');
    else if (f.wire === WIRE_VARINT && t) e[t] = f.n;
    else if (f.wire === WIRE_FIXED64 && d) e[d] = f.x;
    else if (f.wire === WIRE_BYTES && f.field === 15) {
      const d = detailXmlOf(f.b);
      if (d === null) return null;
      e.detailXml = d;
    }
  }
  return e;
}

/** A mesh datagram back to fields, or why not. */
export function decodeMeshDatagram(buf: Buffer): TakMessageRead {
  if (buf.length < 3 || buf[0] !== TAK_MAGIC || buf[2] !== TAK_MAGIC) return { ok: false, reason: 'no TAK mesh header' };
  if (buf[1] !== TAK_PROTOCOL_VERSION) return { ok: false, reason: `unsupported mesh version ${buf[1]}` };
  return decodeTakMessage(buf.subarray(3));
}

// ---------------------------------------------------------------- XML events

/** ISO 8601 with milliseconds, as CoT writes its times. */
const iso = (ms: number): string => new Date(ms).toISOString();

/** A complete `<event>` (no declaration) from fields. */
export function eventXml(f: CotFields): string {
  const opt = (k: string, v: string | undefined) => (v ? ` ${k}="${escapeXmlAttr(v)}"` : '');
  return (
    `<event version="2.0" uid="${escapeXmlAttr(f.uid)}" type="${escapeXmlAttr(f.type)}" how="${escapeXmlAttr(f.how)}"` +
    ` time="${iso(f.timeMs)}" start="${iso(f.startMs)}" stale="${iso(f.staleMs)}"${opt('access', f.access)}${opt('opex', f.opex)}>` +
    `<point lat="${f.lat}" lon="${f.lon}" hae="${f.hae}" ce="${f.ce}" le="${f.le}"/>` +
    `<detail>${f.detailXml}</detail></event>`
  );
}

/** The declaration TAK streams put before each event. */
export const XML_DECL = '<?xml version="1.0" encoding="UTF-8"?>';

/** One streamed XML message: declaration, newline, event, and nothing after `</event>` (TAK servers require it). */
export function streamXml(eventElement: string): string {
  return `${XML_DECL}\n${eventElement}`;
}

/** A control event: placed nowhere (0,0 with unknown errors), live for `staleS` seconds. */
function controlFields(uid: string, type: string, how: string, nowMs: number, detailXml: string, staleS = 60): CotFields {
  return { uid, type, how, timeMs: nowMs, startMs: nowMs, staleMs: nowMs + staleS * 1000, lat: 0, lon: 0, hae: 0, ce: UNKNOWN, le: UNKNOWN, detailXml };
}

/** The server's offer: `t-x-takp-v` with `<TakControl><TakProtocolSupport version="1"/>`. */
export function protocolSupport(nowMs: number, versions: readonly number[] = [TAK_PROTOCOL_VERSION], uid = 'protouid'): CotFields {
  const support = versions.map((v) => `<TakProtocolSupport version="${v}"/>`).join('');
  return controlFields(uid, TYPE_PROTOCOL_SUPPORT, 'm-g', nowMs, `<TakControl>${support}</TakControl>`);
}

/** The client's request: `t-x-takp-q` with `<TakControl><TakRequest version="1"/>`. */
export function protocolRequest(nowMs: number, version = TAK_PROTOCOL_VERSION, uid = 'protouid'): CotFields {
  return controlFields(uid, TYPE_PROTOCOL_REQUEST, 'm-g', nowMs, `<TakControl><TakRequest version="${version}"/></TakControl>`);
}

/** The server's answer: `t-x-takp-r` with `<TakControl><TakResponse status="true|false"/>`. */
export function protocolResponse(nowMs: number, status: boolean, uid = 'protouid'): CotFields {
  return controlFields(uid, TYPE_PROTOCOL_RESPONSE, 'm-g', nowMs, `<TakControl><TakResponse status="${status}"/></TakControl>`);
}

/** A keep-alive ping `t-x-c-t`, as TAK clients send it. */
export function ping(nowMs: number, uid = 'takPing'): CotFields {
  return controlFields(uid, TYPE_PING, 'h-g-i-g-o', nowMs, '', 20);
}

/** The answer to a ping, `t-x-c-t-r`. */
export function pong(nowMs: number, uid = 'takPong'): CotFields {
  return controlFields(uid, TYPE_PONG, 'h-g-i-g-o', nowMs, '', 20);
}

// control events are small: these limits refuse anything a real one would never need
const CONTROL_LIMITS: CotLimits = {
  maxDepth: 8,
  maxElements: 64,
  maxAttrsPerElement: 32,
  maxAttributes: 256,
  maxDetailChildren: 32,
  maxNameLen: 128,
  maxAttrValueLen: 4096,
  maxNameChars: 8192,
  maxAttrChars: 65536,
  maxReferences: 4096,
  maxTextChars: 65536,
  maxUidLen: 256,
};

// quoted values may hold `>`, so the tag ends at the first `>` outside quotes
const START_TAG = /<event\b(?:[^>"']|"[^"]*"|'[^']*')*>/;
const TYPE_ATTR = /\stype\s*=\s*(?:"([^"]*)"|'([^']*)')/;

/** The `type` of a streamed event read from its start tag alone, so relayed traffic is classified without a parse. */
export function eventType(xml: string): string | null {
  const tag = START_TAG.exec(xml);
  if (!tag) return null;
  const t = TYPE_ATTR.exec(tag[0]);
  return t ? (t[1] ?? t[2] ?? null) : null;
}

function parsed(xml: string): XmlElement | null {
  try {
    const root = parseXml(xml, CONTROL_LIMITS);
    return root.local === 'event' ? root : null;
  } catch (e) {
    if (e instanceof XmlRejection) return null;
    throw e;
  }
}

/** The `<TakControl>` children of an event's `<detail>`. */
function takControlChildren(root: XmlElement): XmlElement[] {
  const detail = root.children.find((c): c is XmlElement => isElement(c) && c.local === 'detail');
  const control = detail?.children.find((c): c is XmlElement => isElement(c) && c.local === 'TakControl');
  return control ? control.children.filter(isElement) : [];
}

const attr = (e: XmlElement, name: string): string | undefined => e.attrs.find((a) => a.local === name)?.value;

/** The versions a `t-x-takp-v` offers, or null when `xml` is not one. */
export function parseProtocolSupport(xml: string): number[] | null {
  const root = eventType(xml) === TYPE_PROTOCOL_SUPPORT ? parsed(xml) : null;
  if (!root) return null;
  return takControlChildren(root)
    .filter((c) => c.local === 'TakProtocolSupport')
    .map((c) => Number(attr(c, 'version')))
    .filter((v) => Number.isInteger(v) && v >= 0);
}

/** The version a `t-x-takp-q` asks for, or null when `xml` is not one. */
export function parseProtocolRequest(xml: string): number | null {
  const root = eventType(xml) === TYPE_PROTOCOL_REQUEST ? parsed(xml) : null;
  const req = root && takControlChildren(root).find((c) => c.local === 'TakRequest');
  const v = req ? Number(attr(req, 'version')) : NaN;
  return Number.isInteger(v) && v >= 0 ? v : null;
}

/** The status of a `t-x-takp-r`, or null when `xml` is not one. */
export function parseProtocolResponse(xml: string): boolean | null {
  const root = eventType(xml) === TYPE_PROTOCOL_RESPONSE ? parsed(xml) : null;
  const res = root && takControlChildren(root).find((c) => c.local === 'TakResponse');
  if (!res) return null;
  return attr(res, 'status') === 'true';
}

// ---------------------------------------------------------------- the stream splitter

export type StreamMessage = { kind: 'xml'; xml: string } | { kind: 'v1'; message: Buffer } | { kind: 'error'; reason: string };

const END_TAG = Buffer.from('</event');
const isSpace = (b: number | undefined) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;

/**
 * Splits a TAK stream into messages: XML events up to each `</event>` while in XML mode, v1 frames
 * after `useV1()`. It holds at most `maxMessageBytes` of one unfinished message: a peer that sends
 * more without finishing it gets an error, and after an error the splitter yields nothing more.
 */
export class StreamSplitter {
  private buf: Buffer = Buffer.alloc(0);
  /** Where the search for `</event` resumes, so a message arriving in pieces is scanned once. */
  private scanFrom = 0;
  private failed: string | null = null;
  mode: 'xml' | 'v1' = 'xml';

  constructor(readonly maxMessageBytes: number) {}

  push(chunk: Buffer): void {
    if (this.failed) return;
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
  }

  /** From the next message on, frames are v1 (after `t-x-takp-r` true, or after sending `t-x-takp-q` for a server). */
  useV1(): void {
    this.mode = 'v1';
    this.scanFrom = 0;
  }

  /** Bytes held that belong to no complete message yet. */
  get buffered(): number {
    return this.buf.length;
  }

  /** The next complete message, or null until more bytes arrive. */
  next(): StreamMessage | null {
    if (this.failed) return null;
    const r = this.mode === 'xml' ? this.nextXml() : this.nextFrame();
    if (r?.kind === 'error') {
      this.failed = r.reason;
      this.buf = Buffer.alloc(0);
    }
    return r;
  }

  /** Every message complete now. */
  drain(): StreamMessage[] {
    const out: StreamMessage[] = [];
    for (let m = this.next(); m; m = this.next()) out.push(m);
    return out;
  }

  private take(n: number): Buffer {
    const head = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    this.scanFrom = 0;
    return head;
  }

  private nextXml(): StreamMessage | null {
    let start = 0;
    while (start < this.buf.length && isSpace(this.buf[start])) start++;
    if (start > 0) {
      this.take(start);
    }
    for (;;) {
      const at = this.buf.indexOf(END_TAG, this.scanFrom);
      if (at === -1) {
        this.scanFrom = Math.max(0, this.buf.length - END_TAG.length);
        break;
      }
      let end = at + END_TAG.length;
      while (end < this.buf.length && isSpace(this.buf[end])) end++;
      if (end >= this.buf.length) {
        this.scanFrom = at;
        break;
      }
      if (this.buf[end] === 0x3e) {
        if (end + 1 > this.maxMessageBytes) return { kind: 'error', reason: `XML message over ${this.maxMessageBytes} bytes` };
        return { kind: 'xml', xml: this.take(end + 1).toString('utf8') };
      }
      // `</eventually>` or similar: not the end tag, keep looking after it
      this.scanFrom = at + 1;
    }
    if (this.buf.length > this.maxMessageBytes) return { kind: 'error', reason: `XML message over ${this.maxMessageBytes} bytes` };
    return null;
  }

  private nextFrame(): StreamMessage | null {
    if (this.buf.length === 0) return null;
    if (this.buf[0] !== TAK_MAGIC) return { kind: 'error', reason: `v1 frame starts with 0x${(this.buf[0] as number).toString(16)}, not 0xbf` };
    const len = decodeVarint(this.buf, 1);
    if (!len.ok) return len.reason === 'too_long' ? { kind: 'error', reason: 'v1 frame length varint over 10 bytes' } : null;
    if (len.value > this.maxMessageBytes) return { kind: 'error', reason: `v1 frame of ${len.value} bytes over ${this.maxMessageBytes}` };
    if (this.buf.length < len.next + len.value) return null;
    const frame = this.take(len.next + len.value);
    return { kind: 'v1', message: Buffer.from(frame.subarray(len.next)) };
  }
}
