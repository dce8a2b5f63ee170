import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { Socket } from 'node:net';
import { ListenerOutput, type ListenerConfig } from '../../src/tak/listener.js';
import type { CotFields, CotOut } from '../../src/tak/output.js';
import {
  decodeTakMessage,
  eventType,
  eventXml,
  parseProtocolResponse,
  ping,
  protocolRequest,
  StreamSplitter,
  streamFrame,
  streamXml,
  type StreamMessage,
} from '../../src/tak/protocol.js';
import { nodeCot, xsdValid, type NodeCot } from '../helpers/cot-oracle.js';
import { loadNodeTak, nodeTakConnect, type NodeTak } from '../helpers/node-tak.js';
import { makeTakCerts, type TakCerts } from '../helpers/tak-certs.js';
import { until } from '../helpers/until.js';

const HOUR = 3_600_000;

/** A track event as the feed would hand it over: fields, and the XML serialised from them. */
function track(uid: string, lat: number, lon: number, staleMs = Date.now() + HOUR, callsign = uid): CotOut {
  const now = Date.now();
  const fields: CotFields = {
    uid,
    type: 'a-h-A-M-F-Q',
    how: 'm-g',
    timeMs: now,
    startMs: now,
    staleMs,
    lat,
    lon,
    hae: 120.5,
    ce: 35,
    le: 9999999,
    detailXml: `<contact callsign="${callsign}"/><remarks>test track ${uid}</remarks>`,
  };
  return { fields, xml: eventXml(fields) };
}

interface ReceivedEvent {
  kind: 'xml' | 'v1';
  uid: string;
  xml?: string;
  fields?: CotFields;
}

/** A client of our own that records every message, switching its splitter to v1 once the listener grants it. */
interface RawClient {
  socket: Socket;
  messages: StreamMessage[];
  closed: boolean;
  /** The events (not control messages) received, as XML text or decoded v1 fields. */
  events(): ReceivedEvent[];
}

/** The event a message carries, or null for control messages (`t-x-…`) and errors. */
function eventOf(m: StreamMessage): ReceivedEvent | null {
  if (m.kind === 'xml') {
    const type = eventType(m.xml) ?? '';
    return type.startsWith('t-x-') ? null : { kind: 'xml', uid: /uid="([^"]*)"/.exec(m.xml)![1]!, xml: m.xml };
  }
  if (m.kind === 'v1') {
    const r = decodeTakMessage(m.message);
    return !r.ok || !r.event || r.event.type.startsWith('t-x-') ? null : { kind: 'v1', uid: r.event.uid, fields: r.event };
  }
  return null;
}

function record(socket: Socket): RawClient {
  const splitter = new StreamSplitter(1 << 20);
  const received: ReceivedEvent[] = [];
  const client: RawClient = { socket, messages: [], closed: false, events: () => received };
  socket.on('data', (chunk: Buffer) => {
    splitter.push(chunk);
    for (let m = splitter.next(); m; m = splitter.next()) {
      client.messages.push(m);
      const ev = eventOf(m);
      if (ev) received.push(ev);
      if (m.kind === 'xml' && parseProtocolResponse(m.xml) === true) splitter.useV1();
    }
  });
  socket.on('error', () => undefined);
  socket.on('close', () => (client.closed = true));
  return client;
}

function tlsClient(port: number, cert: string, key: string, ca: string, paused = false): Promise<RawClient> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ host: '127.0.0.1', port, cert: readFileSync(cert), key: readFileSync(key), ca: readFileSync(ca), servername: 'localhost' });
    const c = record(s);
    if (paused) s.pause();
    s.once('secureConnect', () => resolve(c));
    s.once('error', reject);
  });
}

function tcpClient(port: number): Promise<RawClient> {
  return new Promise((resolve, reject) => {
    const s = tcpConnect({ host: '127.0.0.1', port });
    const c = record(s);
    s.once('connect', () => resolve(c));
    s.once('error', reject);
  });
}

const types = (c: RawClient): string[] =>
  c.messages.map((m) => (m.kind === 'xml' ? (eventType(m.xml) ?? '?') : m.kind === 'v1' ? `v1:${(decodeTakMessage(m.message) as { event?: { type: string } }).event?.type ?? 'control'}` : 'error'));

describe('TAK streaming listener', function () {
  let certs: TakCerts;
  const outputs: ListenerOutput[] = [];
  const sockets: Socket[] = [];
  const taks: NodeTak[] = [];

  before(async () => {
    [certs] = await Promise.all([makeTakCerts(), loadNodeTak(), nodeCot()]);
  });
  after(async () => {
    await certs?.cleanup();
  });
  afterEach(async () => {
    for (const t of taks.splice(0)) t.destroy();
    for (const s of sockets.splice(0)) s.destroy();
    await Promise.all(outputs.splice(0).map((o) => o.close()));
  });

  async function listener(over: Partial<ListenerConfig> = {}): Promise<ListenerOutput> {
    const out = new ListenerOutput({
      enabled: true,
      host: '127.0.0.1',
      port: 0,
      transport: 'tls',
      certPath: certs.serverCert,
      keyPath: certs.serverKey,
      caPath: certs.caCert,
      maxClients: 8,
      clientBufferBytes: 1 << 20,
      pingIntervalMs: 0,
      maxMessageBytes: 65536,
      pictureMax: 100,
      ...over,
    });
    outputs.push(out);
    await out.start();
    return out;
  }

  async function client(out: ListenerOutput, cert = certs.clientCert, key = certs.clientKey, paused = false): Promise<RawClient> {
    const c = await tlsClient(out.port!, cert, key, certs.caCert, paused);
    sockets.push(c.socket);
    return c;
  }

  const clientCount = (out: ListenerOutput) => out.status().detail.clientCount as number;

  it('a TAK client (node-tak) with a certificate from the CA receives an event within 1 s of send, and its ping is answered', async () => {
    const out = await listener();
    const tak = await nodeTakConnect('listener-test', out.port!, { cert: readFileSync(certs.clientCert, 'utf8'), key: readFileSync(certs.clientKey, 'utf8') });
    taks.push(tak);
    let raw = '';
    tak.client!.on('data', (d: Buffer) => (raw += d.toString('utf8')));
    const got: { uid: string; at: number; cot: NodeCot }[] = [];
    tak.on('cot', (cot) => got.push({ uid: cot.uid(), at: Date.now(), cot }));
    // node-tak pings on connect; the listener's t-x-c-t-r is what sets `open`
    await until('the pong to node-tak', () => tak.open);
    await until('the client listed', () => clientCount(out) === 1);

    const ev = track('svc-track-1', 51.5007, -0.1246, Date.now() + HOUR, 'UAS 1');
    const sentAt = Date.now();
    out.send(ev);
    const hit = await until('the event at node-tak', () => got.find((g) => g.uid === 'svc-track-1'), 1000);
    expect(hit.at - sentAt).to.be.below(1000);
    expect(hit.cot.callsign()).to.equal('UAS 1');
    expect(Number(hit.cot.raw.event.point._attributes.lat)).to.equal(51.5007);
    expect(Number(hit.cot.raw.event.point._attributes.lon)).to.equal(-0.1246);
    expect(hit.cot.raw.event._attributes.type).to.equal('a-h-A-M-F-Q');

    // what went over the wire: the offer first, then the pong and the event, each schema-valid
    const docs = raw.split(/(?=<\?xml)/).filter((d) => d.trim());
    expect(eventType(docs[0]!)).to.equal('t-x-takp-v');
    expect(docs.some((d) => eventType(d) === 't-x-c-t-r')).to.equal(true);
    const evDoc = docs.find((d) => d.includes('uid="svc-track-1"'))!;
    expect(evDoc.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<event')).to.equal(true);
    expect(evDoc.endsWith('</event>')).to.equal(true);
    expect(await xsdValid(docs)).to.deep.equal(docs.map(() => true));
    const st = out.status();
    expect(st.state).to.equal('listening');
    expect(st.sent).to.equal(1);
    expect((st.detail.clients as { subject: string; protocol: string }[])[0]).to.include({ subject: certs.clientCn, protocol: 'xml' });
  });

  it('refuses a client whose certificate another CA issued, and one with no certificate', async () => {
    const out = await listener();
    const tak = await nodeTakConnect('intruder', out.port!, { cert: readFileSync(certs.otherClientCert, 'utf8'), key: readFileSync(certs.otherClientKey, 'utf8') });
    taks.push(tak);
    const got: string[] = [];
    tak.on('cot', (cot) => got.push(cot.uid()));
    let ended = false;
    tak.client!.on('close', () => (ended = true));
    await until('the intruder cut off', () => ended);
    await until('one failed handshake counted', () => out.status().detail.handshakeFailures === 1);

    const bare = tlsConnect({ host: '127.0.0.1', port: out.port!, ca: readFileSync(certs.caCert), servername: 'localhost' });
    sockets.push(bare);
    let bareData = 0;
    let bareClosed = false;
    bare.on('data', (d: Buffer) => (bareData += d.length));
    bare.on('error', () => undefined);
    bare.on('close', () => (bareClosed = true));
    await until('the bare client cut off', () => bareClosed);
    await until('two failed handshakes counted', () => out.status().detail.handshakeFailures === 2);

    out.send(track('after-refusal', 1, 2));
    expect(got).to.deep.equal([]);
    expect(bareData).to.equal(0);
    expect(clientCount(out)).to.equal(0);
    expect(out.status().sent).to.equal(0);
  });

  it('drops a client that never reads while a reading client receives every event in order', async () => {
    const bound = 256 * 1024;
    const out = await listener({ clientBufferBytes: bound });
    await client(out, certs.clientCert, certs.clientKey, true);
    const fast = await client(out);
    await until('both clients listed', () => clientCount(out) === 2);

    let n = 0;
    // the reader is waited for after each batch, so only the slow client falls behind; the kernel's
    // socket buffers take megabytes before Node's queue grows, hence the generous cap
    while (out.status().detail.droppedSlowClients === 0 && n < 200_000) {
      for (let i = 0; i < 200; i++, n++) out.send(track(`seq-${n}`, 10 + (n % 1000) / 1000, 20));
      const want = n;
      await until(`the reader at ${want}`, () => fast.events().length === want);
    }
    const st = out.status();
    expect(st.detail.droppedSlowClients, `no drop after ${n} events`).to.equal(1);
    // the events still in the dropped client's own queue: at least the one that went over its bound
    expect(st.dropped).to.be.within(1, n);
    expect(clientCount(out)).to.equal(1);
    // the reader goes on receiving after the drop
    for (let i = 0; i < 50; i++, n++) out.send(track(`seq-${n}`, 11, 21));
    await until('the reader after the drop', () => fast.events().length === n);
    expect(fast.events().map((e) => e.uid)).to.deep.equal(Array.from({ length: n }, (_, i) => `seq-${i}`));
    const remaining = (out.status().detail.clients as { queuedBytes: number }[])[0]!;
    expect(remaining.queuedBytes).to.be.at.most(bound);
    expect(fast.closed).to.equal(false);
  });

  it('t-x-takp: a client that asks for version 1 gets status true and v1 frames; another stays on XML; pings answered in each', async () => {
    const out = await listener();
    const v1 = await client(out);
    const xml = await client(out);
    await until('the offers', () => v1.messages.length >= 1 && xml.messages.length >= 1);
    expect(types(v1)[0]).to.equal('t-x-takp-v');
    expect(types(xml)[0]).to.equal('t-x-takp-v');

    v1.socket.write(streamXml(eventXml(protocolRequest(Date.now(), 1))));
    await until('the response', () => types(v1).includes('t-x-takp-r'));
    const resp = v1.messages.find((m) => m.kind === 'xml' && eventType(m.xml) === 't-x-takp-r') as { xml: string };
    expect(parseProtocolResponse(resp.xml)).to.equal(true);
    await until('the listener moved the client to v1', () => (out.status().detail.clients as { protocol: string }[]).filter((c) => c.protocol === 'v1').length === 1);

    const ev = track('dual-1', -33.8568, 151.2153, Date.now() + HOUR, 'Harbour');
    out.send(ev);
    await until('the event on both', () => v1.events().length === 1 && xml.events().length === 1);
    const got1 = v1.events()[0]!;
    expect(got1.kind).to.equal('v1');
    expect(got1.fields).to.deep.equal({ ...ev.fields });
    const got0 = xml.events()[0]!;
    expect(got0.kind).to.equal('xml');
    expect(got0.xml).to.equal(streamXml(ev.xml));

    // the peer parser reads both: the XML as sent, the v1 event as XML rebuilt from its fields
    const Cot = await nodeCot();
    for (const doc of [got0.xml!, eventXml(got1.fields!)]) {
      const c = new Cot(doc);
      expect(c.uid()).to.equal('dual-1');
      expect(c.callsign()).to.equal('Harbour');
    }
    expect(await xsdValid([got0.xml!, eventXml(got1.fields!)])).to.deep.equal([true, true]);

    // pings: v1 in a v1 frame, XML in XML; each answered in the client's own protocol
    v1.socket.write(streamFrame(ping(Date.now())));
    xml.socket.write(streamXml(eventXml(ping(Date.now()))));
    await until('both pongs', () => types(v1).includes('v1:t-x-c-t-r') && types(xml).includes('t-x-c-t-r'));
    expect(types(xml).filter((t) => t.startsWith('v1:'))).to.deep.equal([]);
  });

  it('refuses a request for a version it does not speak and keeps the client on XML', async () => {
    const out = await listener();
    const c = await client(out);
    c.socket.write(streamXml(eventXml(protocolRequest(Date.now(), 2))));
    await until('the response', () => types(c).includes('t-x-takp-r'));
    const resp = c.messages.find((m) => m.kind === 'xml' && eventType(m.xml) === 't-x-takp-r') as { xml: string };
    expect(parseProtocolResponse(resp.xml)).to.equal(false);
    out.send(track('still-xml', 1, 1));
    await until('the event', () => c.events().length === 1);
    expect(c.events()[0]!.kind).to.equal('xml');
  });

  it('gives a new client the current picture at once: the latest event of each live track, nothing stale', async () => {
    const out = await listener();
    out.send(track('alpha', 1, 1));
    out.send(track('bravo', 2, 2));
    out.send(track('alpha', 1.5, 1.5, Date.now() + HOUR, 'alpha moved'));
    out.send(track('charlie', 3, 3, Date.now() - 1));
    out.send(track('delta', 4, 4));
    out.send(track('delta', 4, 4, Date.now() - 1)); // delta ended: its last word is already stale
    const c = await client(out);
    await until('the picture', () => c.events().length === 2);
    const got = c.events();
    expect(got.map((e) => e.uid)).to.deep.equal(['bravo', 'alpha']);
    expect(got[1]!.xml).to.include('callsign="alpha moved"');
    expect(types(c)[0]).to.equal('t-x-takp-v');
    expect(out.status().detail.pictureTracks).to.equal(2);
  });

  // bounds below and at the socket's own high-water mark (16 KiB on Node 20, 64 KiB from Node 22)
  for (const bound of [8 * 1024, 64 * 1024]) {
    it(`sends a picture larger than a ${bound / 1024} KiB client bound as the client reads it, a live update taking the place of an older one`, async () => {
      const tracks = 30_000;
      const out = await listener({ clientBufferBytes: bound, pictureMax: tracks });
      for (let i = 0; i < tracks; i++) out.send(track(`pic-${i}`, i / tracks, 1));
      const c = await client(out, certs.clientCert, certs.clientKey, true);
      const backlog = () => (out.status().detail.clients as { pictureBacklog: number }[])[0]?.pictureBacklog ?? 0;
      // the paused client holds the rest of the picture back: a live update of a track still waiting goes first
      await until('the client listed with a picture to catch up on', () => backlog() > 1);
      const last = `pic-${tracks - 1}`;
      out.send(track(last, 45, 45, Date.now() + HOUR, 'live update'));
      c.socket.resume();
      await until('the whole picture', () => c.events().length === tracks, 60_000);
      const got = c.events();
      expect(got.filter((e) => e.uid === last).map((e) => /callsign="([^"]*)"/.exec(e.xml!)![1])).to.deep.equal(['live update']);
      expect(new Set(got.map((e) => e.uid)).size).to.equal(tracks);
      expect(out.status().dropped).to.equal(0);
      expect(backlog()).to.equal(0);
    });
  }

  it('holds at most maxClients: one more is closed, and a freed place is taken again', async () => {
    const out = await listener({ maxClients: 2 });
    const a = await client(out);
    await client(out);
    await until('two clients', () => clientCount(out) === 2);
    const third = await client(out);
    await until('the third closed', () => third.closed);
    expect(third.messages).to.deep.equal([]);
    expect(out.status().detail.refusedOverMax).to.equal(1);
    a.socket.destroy();
    await until('a place freed', () => clientCount(out) === 1);
    const fourth = await client(out);
    await until('the fourth served', () => types(fourth)[0] === 't-x-takp-v');
    expect(clientCount(out)).to.equal(2);
  });

  it('pings an idle client and closes one silent for three intervals', async () => {
    const out = await listener({ pingIntervalMs: 100 });
    const c = await client(out);
    await until('a ping', () => types(c).includes('t-x-c-t'));
    await until('the silent client closed', () => c.closed);
    expect(out.status().detail.idleClosed).to.equal(1);
  });

  it('closes a client that sends a message over the size bound', async () => {
    const out = await listener({ maxMessageBytes: 1024 });
    const c = await client(out);
    await until('listed', () => clientCount(out) === 1);
    c.socket.write(`<event uid="x">${'a'.repeat(2048)}`);
    await until('closed', () => c.closed);
    expect(out.status().detail.protocolErrors).to.equal(1);
    expect(clientCount(out)).to.equal(0);
  });

  it('plain TCP mode serves XML and says in its status that it is unauthenticated', async () => {
    const out = await listener({ transport: 'tcp', certPath: null, keyPath: null, caPath: null });
    const c = await tcpClient(out.port!);
    sockets.push(c.socket);
    out.send(track('lab-1', 5, 5));
    await until('the event', () => c.events().length === 1);
    const st = out.status();
    expect(st.detail.transport).to.equal('tcp');
    expect(st.detail.warning).to.match(/no encryption and no client authentication/);
  });

  it('close() ends connections still in their TLS handshake at once, not after the handshake timeout', async () => {
    const out = await listener();
    const raw = await tcpClient(out.port!); // TCP only: no ClientHello ever comes
    sockets.push(raw.socket);
    const t0 = Date.now();
    await out.close();
    await until('the half-open peer closed', () => raw.closed, 1000);
    expect(Date.now() - t0).to.be.below(1000);
    expect(out.status().state).to.equal('stopped');
  });

  it('a TLS listener without its certificate files does not start, and says why', async () => {
    const out = new ListenerOutput({
      enabled: true,
      host: '127.0.0.1',
      port: 0,
      transport: 'tls',
      certPath: null,
      keyPath: null,
      caPath: null,
      maxClients: 1,
      clientBufferBytes: 1024,
      pingIntervalMs: 0,
      maxMessageBytes: 1024,
      pictureMax: 1,
    });
    outputs.push(out);
    let err: Error | null = null;
    await out.start().catch((e: Error) => (err = e));
    expect(err).to.be.instanceOf(Error);
    expect(out.status().state).to.equal('error');
    expect(out.status().wired).to.equal(false);
  });
});
