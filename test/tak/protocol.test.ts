import { expect } from 'chai';
import fc from 'fast-check';
import type { CotFields } from '../../src/tak/output.js';
import {
  decodeMeshDatagram,
  decodeTakMessage,
  decodeVarint,
  encodeTakMessage,
  encodeVarint,
  eventType,
  eventXml,
  frameMessage,
  meshDatagram,
  parseProtocolRequest,
  parseProtocolResponse,
  parseProtocolSupport,
  ping,
  pong,
  protocolRequest,
  protocolResponse,
  protocolSupport,
  StreamSplitter,
  streamFrame,
  streamXml,
  type StreamMessage,
} from '../../src/tak/protocol.js';
import { nodeCot, xsdValid } from '../helpers/cot-oracle.js';

const NOW = Date.UTC(2026, 10, 29, 6, 0, 0, 123);

const EVENT: CotFields = {
  uid: 'svc-track-7',
  type: 'a-h-A-M-F-Q',
  how: 'm-g',
  timeMs: NOW,
  startMs: NOW,
  staleMs: NOW + 90_000,
  lat: 51.50722,
  lon: -0.1275,
  hae: 120.5,
  ce: 35,
  le: 9999999,
  detailXml: '<contact callsign="UAS 7 &amp; co"/><remarks>decision=engage λ=0.82</remarks>',
  access: 'Unclassified',
  opex: 's',
};

/** The node-cot `from_proto` view of a TakMessage (loaded once; ESM-only, hence the dynamic import). */
interface ProtoCot {
  raw: { event: { _attributes: Record<string, string>; point: { _attributes: Record<string, string> }; detail: Record<string, { _attributes?: Record<string, string>; _text?: string }> } };
  to_proto(): Uint8Array;
}
async function nodeCotStatics(): Promise<{ from_proto(b: Uint8Array): ProtoCot; new (xml: string): ProtoCot }> {
  return (await nodeCot()) as unknown as { from_proto(b: Uint8Array): ProtoCot; new (xml: string): ProtoCot };
}

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const ascii = (s: string) => Buffer.from(s, 'ascii').toString('hex');

describe('src/tak/protocol: TAK Protocol v1 and the XML stream', () => {
  describe('varints', () => {
    it('encodes the protobuf reference values byte for byte', () => {
      expect(encodeVarint(0).toString('hex')).to.equal('00');
      expect(encodeVarint(1).toString('hex')).to.equal('01');
      expect(encodeVarint(127).toString('hex')).to.equal('7f');
      expect(encodeVarint(128).toString('hex')).to.equal('8001');
      expect(encodeVarint(300).toString('hex')).to.equal('ac02');
      expect(encodeVarint(2n ** 64n - 1n).toString('hex')).to.equal('ffffffffffffffffff01');
      expect(encodeVarint(2n ** 64n - 1n)).to.have.length(10);
      expect(() => encodeVarint(2n ** 64n)).to.throw(RangeError);
      expect(() => encodeVarint(-1)).to.throw(RangeError);
    });

    it('decodes every width from 1 to 10 bytes back to its value (exact to 2^53)', () => {
      fc.assert(
        fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.nat(5), (v, pad) => {
          const bytes = Buffer.concat([Buffer.alloc(pad, 0xaa), encodeVarint(v), Buffer.from([0x55])]);
          const r = decodeVarint(bytes, pad);
          expect(r.ok).to.equal(true);
          if (!r.ok) return;
          expect(r.value).to.equal(Number(v));
          if (v <= BigInt(Number.MAX_SAFE_INTEGER)) expect(BigInt(r.value)).to.equal(v);
          expect(r.next).to.equal(pad + encodeVarint(v).length);
        }),
      );
    });

    it('an eleventh continuation byte is too long; a cut varint is incomplete', () => {
      expect(decodeVarint(Buffer.alloc(11, 0x80))).to.deep.equal({ ok: false, reason: 'too_long' });
      expect(decodeVarint(Buffer.from([0x80, 0x80]))).to.deep.equal({ ok: false, reason: 'incomplete' });
      expect(decodeVarint(Buffer.alloc(0))).to.deep.equal({ ok: false, reason: 'incomplete' });
    });
  });

  describe('TakMessage', () => {
    it('encodes a small event to the bytes built by hand from the takproto field numbers', () => {
      const small: CotFields = { uid: 'a', type: 'a-f-G', how: 'm-g', timeMs: 1000, startMs: 1000, staleMs: 2000, lat: 1.5, lon: -2.25, hae: 0, ce: 1, le: 2, detailXml: '' };
      const cotEvent =
        `0a05${ascii('a-f-G')}` + // 1 type
        `2a01${ascii('a')}` + // 5 uid
        '30e807' + // 6 sendTime 1000
        '38e807' + // 7 startTime 1000
        '40d00f' + // 8 staleTime 2000
        `4a03${ascii('m-g')}` + // 9 how
        '51000000000000f83f' + // 10 lat 1.5 (double, little-endian)
        '5900000000000002c0' + // 11 lon -2.25
        '610000000000000000' + // 12 hae 0
        '69000000000000f03f' + // 13 ce 1
        '710000000000000040' + // 14 le 2
        '7a00'; // 15 detail, empty
      const expected = hex(`12${(cotEvent.length / 2).toString(16)}${cotEvent}`);
      expect(encodeTakMessage(small).toString('hex')).to.equal(expected.toString('hex'));
      expect(decodeTakMessage(expected)).to.deep.equal({ ok: true, event: small, control: null });
      expect(meshDatagram(small).toString('hex')).to.equal(`bf01bf${expected.toString('hex')}`);
      expect(streamFrame(small).toString('hex')).to.equal(`bf${expected.length.toString(16)}${expected.toString('hex')}`);
    });

    it('round-trips arbitrary events through the message, the mesh datagram and a stream frame', () => {
      const text = fc.string({ unit: 'grapheme', maxLength: 40 });
      const ms = fc.integer({ min: 0, max: 2 ** 48 });
      const fields = fc.record({
        uid: text, type: text, how: text, timeMs: ms, startMs: ms, staleMs: ms,
        lat: fc.double({ noNaN: true }), lon: fc.double({ noNaN: true }), hae: fc.double({ noNaN: true }), ce: fc.double({ noNaN: true }), le: fc.double({ noNaN: true }),
        detailXml: fc.string({ unit: 'grapheme', maxLength: 300 }),
      });
      fc.assert(
        fc.property(fields, (f) => {
          const want = { ...f, lat: f.lat + 0, lon: f.lon + 0, hae: f.hae + 0, ce: f.ce + 0, le: f.le + 0 };
          const got = decodeTakMessage(encodeTakMessage(f));
          expect(got.ok && { ...got.event, lat: got.event!.lat + 0, lon: got.event!.lon + 0, hae: got.event!.hae + 0, ce: got.event!.ce + 0, le: got.event!.le + 0 }).to.deep.equal(want);
          expect(decodeMeshDatagram(meshDatagram(f))).to.deep.equal(got);
          const split = new StreamSplitter(1 << 20);
          split.useV1();
          split.push(streamFrame(f));
          const m = split.next();
          expect(m?.kind).to.equal('v1');
          expect(decodeTakMessage((m as { message: Buffer }).message)).to.deep.equal(got);
        }),
        { numRuns: 300 },
      );
      const withOptional = decodeTakMessage(encodeTakMessage(EVENT));
      expect(withOptional).to.deep.equal({ ok: true, event: EVENT, control: null });
    });

    it('@tak-ps/node-cot reads our bytes as the same event, and we read its bytes (structured detail back to XML)', async () => {
      const CoT = await nodeCotStatics();
      const peer = CoT.from_proto(encodeTakMessage(EVENT));
      const a = peer.raw.event._attributes;
      expect([a.uid, a.type, a.how, a.time, a.start, a.stale, a.access, a.opex]).to.deep.equal([EVENT.uid, EVENT.type, EVENT.how, new Date(NOW).toISOString(), new Date(NOW).toISOString(), new Date(NOW + 90_000).toISOString(), 'Unclassified', 's']);
      expect(peer.raw.event.point._attributes).to.deep.equal({ lat: String(EVENT.lat), lon: String(EVENT.lon), hae: String(EVENT.hae), le: String(EVENT.le), ce: String(EVENT.ce) });
      expect(peer.raw.event.detail.contact?._attributes).to.deep.equal({ callsign: 'UAS 7 & co' });
      expect(peer.raw.event.detail.remarks?._text).to.equal('decision=engage λ=0.82');

      // node-cot moves contact, __group, track… into the structured Detail fields
      const xml = `<event version="2.0" uid="p1" type="a-f-G-U-C" how="h-e" time="2026-11-29T06:00:00.000Z" start="2026-11-29T06:00:00.000Z" stale="2026-11-29T06:05:00.000Z"><point lat="10.5" lon="20.25" hae="5" ce="9" le="8"/><detail><contact callsign="ALPHA" endpoint="*:-1:stcp"/><track course="90.5" speed="3"/><remarks>hi</remarks></detail></event>`;
      const r = decodeTakMessage(Buffer.from(new CoT(xml).to_proto()));
      expect(r.ok).to.equal(true);
      if (!r.ok || !r.event) throw new Error('no event');
      const { detailXml, ...rest } = r.event;
      expect(rest).to.deep.equal({ uid: 'p1', type: 'a-f-G-U-C', how: 'h-e', timeMs: Date.UTC(2026, 10, 29, 6), startMs: Date.UTC(2026, 10, 29, 6), staleMs: Date.UTC(2026, 10, 29, 6, 5), lat: 10.5, lon: 20.25, hae: 5, ce: 9, le: 8 });
      expect(detailXml).to.contain('<remarks>hi</remarks>');
      expect(detailXml).to.contain('<contact endpoint="*:-1:stcp" callsign="ALPHA"/>');
      expect(detailXml).to.contain('<track speed="3" course="90.5"/>');
    });

    it('refuses bytes that are not protobuf without throwing', () => {
      expect(decodeTakMessage(hex('12ff'))).to.deep.equal({ ok: false, reason: 'not a protobuf message' });
      expect(decodeTakMessage(hex('0b'))).to.deep.equal({ ok: false, reason: 'not a protobuf message' }); // group start
      expect(decodeTakMessage(hex('1203ffffff'))).to.deep.equal({ ok: false, reason: 'malformed CotEvent' });
      expect(decodeMeshDatagram(hex('bf02bf'))).to.deep.equal({ ok: false, reason: 'unsupported mesh version 2' });
      expect(decodeMeshDatagram(Buffer.from('<event/>'))).to.deep.equal({ ok: false, reason: 'no TAK mesh header' });
      const control = hex('0a06080110011a00'); // TakControl min 1 max 1 (and an empty uid)
      expect(decodeTakMessage(control)).to.deep.equal({ ok: true, event: null, control: { minProtoVersion: 1, maxProtoVersion: 1, contactUid: '' } });
    });
  });

  describe('XML negotiation and keep-alive events', () => {
    it('build the four control events, which parse back, validate against the XSD and parse with node-cot', async () => {
      const docs: string[] = [protocolSupport(NOW), protocolRequest(NOW), protocolResponse(NOW, true), protocolResponse(NOW, false), ping(NOW), pong(NOW), EVENT].map((f) => streamXml(eventXml(f)));
      const doc = (i: number) => docs[i] as string;
      expect(doc(0)).to.equal(
        '<?xml version="1.0" encoding="UTF-8"?>\n' +
          '<event version="2.0" uid="protouid" type="t-x-takp-v" how="m-g" time="2026-11-29T06:00:00.123Z" start="2026-11-29T06:00:00.123Z" stale="2026-11-29T06:01:00.123Z">' +
          '<point lat="0" lon="0" hae="0" ce="9999999" le="9999999"/><detail><TakControl><TakProtocolSupport version="1"/></TakControl></detail></event>',
      );
      expect(docs.map(eventType)).to.deep.equal(['t-x-takp-v', 't-x-takp-q', 't-x-takp-r', 't-x-takp-r', 't-x-c-t', 't-x-c-t-r', 'a-h-A-M-F-Q']);
      expect(parseProtocolSupport(doc(0))).to.deep.equal([1]);
      expect(parseProtocolSupport(streamXml(eventXml(protocolSupport(NOW, [1, 2]))))).to.deep.equal([1, 2]);
      expect(parseProtocolRequest(doc(1))).to.equal(1);
      expect(parseProtocolResponse(doc(2))).to.equal(true);
      expect(parseProtocolResponse(doc(3))).to.equal(false);
      expect([parseProtocolSupport(doc(1)), parseProtocolRequest(doc(0)), parseProtocolResponse(doc(4))]).to.deep.equal([null, null, null]);
      expect(parseProtocolResponse('<event type="t-x-takp-r"><detail><TakControl><TakResponse status="true"/>')).to.equal(null); // not well-formed
      expect(await xsdValid(docs)).to.deep.equal(docs.map(() => true));
      const CoT = await nodeCotStatics();
      for (const d of docs) expect(new CoT(d).raw.event._attributes.type).to.equal(eventType(d));
    });

    it('reads the type from the start tag only, past quoted `>` and single quotes', () => {
      expect(eventType(`<event uid="a>b" version='2.0' type='t-x-c-t'><detail/></event>`)).to.equal('t-x-c-t');
      expect(eventType('<event uid="x"><detail><thing type="a-f-G"/></detail></event>')).to.equal(null);
      expect(eventType('<evently type="a-f-G"/>')).to.equal(null);
    });

    it('the stream form has nothing after </event>', () => {
      expect(streamXml(eventXml(ping(NOW)))).to.match(/<\/event>$/);
    });
  });

  describe('StreamSplitter', () => {
    const xmlMessages = [
      streamXml(eventXml(protocolSupport(NOW))),
      eventXml(EVENT), // no declaration
      `<?xml version='1.0' standalone='yes'?>\r\n${eventXml(ping(NOW))}`,
      eventXml({ ...EVENT, detailXml: '<remarks>&lt;/event&gt; is text</remarks><eventually/>' }).replace('</event>', '</event   >'),
    ];
    const frames = [EVENT, pong(NOW), { ...EVENT, detailXml: 'x'.repeat(300) }].map((f) => encodeTakMessage(f));

    /** The whole stream: XML events with whitespace between them, then the v1 frames. */
    function stream(gaps: string[]): Buffer {
      const xml = xmlMessages.map((m, i) => gaps[i % gaps.length] + m).join('');
      return Buffer.concat([Buffer.from(xml, 'utf8'), ...frames.map(frameMessage)]);
    }

    /** Feeds `bytes` in pieces cut at `cuts`, switching to v1 after the last XML message, as a client does after t-x-takp-r. */
    function split(bytes: Buffer, cuts: number[], max = 1 << 16): StreamMessage[] {
      const s = new StreamSplitter(max);
      const out: StreamMessage[] = [];
      const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
      let from = 0;
      for (const at of [...points, bytes.length]) {
        s.push(bytes.subarray(from, at));
        from = at;
        for (let m = s.next(); m; m = s.next()) {
          out.push(m);
          if (out.filter((x) => x.kind === 'xml').length === xmlMessages.length && s.mode === 'xml') s.useV1();
        }
      }
      return out;
    }

    const expected: StreamMessage[] = [...xmlMessages.map((xml) => ({ kind: 'xml' as const, xml })), ...frames.map((message) => ({ kind: 'v1' as const, message }))];

    it('yields every XML event and every v1 frame whole, wherever the chunks are cut', () => {
      fc.assert(
        fc.property(fc.array(fc.nat(), { maxLength: 40 }), fc.array(fc.constantFrom('', '\n', '\r\n', ' \t\n'), { minLength: 1, maxLength: 4 }), (cuts, gaps) => {
          expect(split(stream(gaps), cuts)).to.deep.equal(expected);
        }),
        { numRuns: 300 },
      );
      // one byte at a time, which splits the UTF-8 of λ too
      const bytes = stream(['\n']);
      expect(split(bytes, Array.from({ length: bytes.length }, (_, i) => i))).to.deep.equal(expected);
    });

    it('cuts off an XML message that grows past the limit without ending, and then yields nothing', () => {
      const s = new StreamSplitter(1000);
      s.push(Buffer.from('<event version="2.0"><detail><remarks>'));
      for (let i = 0; i < 9; i++) s.push(Buffer.alloc(100, 0x61));
      expect(s.next()).to.equal(null);
      s.push(Buffer.alloc(100, 0x61));
      expect(s.next()).to.deep.equal({ kind: 'error', reason: 'XML message over 1000 bytes' });
      expect(s.buffered).to.equal(0);
      s.push(Buffer.from(eventXml(ping(NOW))));
      expect(s.next()).to.equal(null);
    });

    it('an XML message exactly at the limit passes; one byte more does not', () => {
      const msg = eventXml(ping(NOW));
      const ok = new StreamSplitter(Buffer.byteLength(msg));
      ok.push(Buffer.from(msg + msg));
      expect(ok.drain()).to.deep.equal([{ kind: 'xml', xml: msg }, { kind: 'xml', xml: msg }]);
      const over = new StreamSplitter(Buffer.byteLength(msg) - 1);
      over.push(Buffer.from(msg));
      expect(over.drain()).to.deep.equal([{ kind: 'error', reason: `XML message over ${Buffer.byteLength(msg) - 1} bytes` }]);
    });

    it('refuses a v1 frame over the limit from its length alone, a bad magic byte and an 11-byte length', () => {
      const big = new StreamSplitter(100);
      big.useV1();
      big.push(Buffer.concat([Buffer.from([0xbf]), encodeVarint(101)]));
      expect(big.next()).to.deep.equal({ kind: 'error', reason: 'v1 frame of 101 bytes over 100' });
      const exact = new StreamSplitter(100);
      exact.useV1();
      exact.push(Buffer.concat([Buffer.from([0xbf]), encodeVarint(100), Buffer.alloc(100)]));
      expect(exact.next()).to.deep.equal({ kind: 'v1', message: Buffer.alloc(100) });
      const magic = new StreamSplitter(100);
      magic.useV1();
      magic.push(Buffer.from('<event/>'));
      expect(magic.next()).to.deep.equal({ kind: 'error', reason: 'v1 frame starts with 0x3c, not 0xbf' });
      const long = new StreamSplitter(100);
      long.useV1();
      long.push(Buffer.concat([Buffer.from([0xbf]), Buffer.alloc(9, 0x80)]));
      expect(long.next()).to.equal(null); // a tenth byte may still end it
      long.push(Buffer.from([0x80]));
      expect(long.next()).to.deep.equal({ kind: 'error', reason: 'v1 frame length varint over 10 bytes' });
    });
  });
});
