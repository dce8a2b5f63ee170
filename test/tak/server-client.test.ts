import { expect } from 'chai';
import type { CotFields, CotOut } from '../../src/tak/output.js';
import { eventXml, streamXml } from '../../src/tak/protocol.js';
import { backoffDelayMs, ServerClientOutput, type ServerClientConfig } from '../../src/tak/server-client.js';
import { FakeTakServer, opensslVerifyingServer, type FakeTakServerOptions, type Received } from '../helpers/fake-tak-server.js';
import { nodeCot, xsdValid } from '../helpers/cot-oracle.js';
import { makeTakCerts, type TakCerts } from '../helpers/tak-certs.js';
import { until } from '../helpers/until.js';

const T0 = Date.UTC(2026, 10, 29, 6, 0, 0, 0);

/** The defaults the config schema gives (listed at the top of ServerClientConfig). */
const DEFAULTS: Omit<ServerClientConfig, 'host'> = {
  enabled: false,
  port: 8089,
  tls: true,
  p12Path: null,
  p12Password: null,
  certPath: null,
  keyPath: null,
  caPath: null,
  servername: null,
  protocol: 'auto',
  bufferSize: 1000,
  backoffBaseMs: 1000,
  backoffMaxMs: 60_000,
  pingIntervalMs: 15_000,
  negotiationWaitMs: 1000,
  responseTimeoutMs: 5000,
  connectTimeoutMs: 10_000,
  maxMessageBytes: 1 << 20,
  uid: 'drone-intel-svc',
};

/** One track event as the feed would hand it over: fields and the XML serialised from them. */
function track(i: number): CotOut {
  const fields: CotFields = {
    uid: `svc-track-${i}`,
    type: 'a-h-A-M-F-Q',
    how: 'm-g',
    timeMs: T0 + i,
    startMs: T0 + i,
    staleMs: T0 + i + 120_000,
    lat: 51.5 + i / 1000,
    lon: -0.12 - i / 1000,
    hae: 150 + i,
    ce: 25,
    le: 9999999,
    detailXml: `<contact callsign="UAS ${i}"/><remarks>decision=engage &amp; λ=0.${i}</remarks>`,
  };
  return { fields, xml: eventXml(fields) };
}

interface ProtoCot {
  raw: { event: { _attributes: Record<string, string> } };
}
async function peerParsers(): Promise<{ fromXml(xml: string): ProtoCot; fromProto(b: Buffer): ProtoCot }> {
  const CoT = (await nodeCot()) as unknown as { from_proto(b: Uint8Array): ProtoCot; new (xml: string): ProtoCot };
  return { fromXml: (xml) => new CoT(xml), fromProto: (b) => CoT.from_proto(b) };
}

describe('src/tak/server-client: the TAK Server client output', function () {
  this.timeout(30_000);
  let certs: TakCerts;
  const open: { close(): Promise<void> }[] = [];
  const servers: FakeTakServer[] = [];

  before(async () => {
    certs = await makeTakCerts();
  });
  after(async () => {
    await certs.cleanup();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  });

  async function server(opts: Partial<FakeTakServerOptions> & { plain?: boolean; otherServerCert?: boolean } = {}): Promise<FakeTakServer> {
    const tls = opts.plain ? undefined : opts.otherServerCert ? { cert: certs.otherServerCert, key: certs.otherServerKey, ca: certs.caCert } : { cert: certs.serverCert, key: certs.serverKey, ca: certs.caCert };
    const s = new FakeTakServer({ offerV1: false, ...opts, ...(tls ? { tls } : {}) });
    await s.start();
    servers.push(s);
    return s;
  }

  function client(s: FakeTakServer, over: Partial<ServerClientConfig> = {}): ServerClientOutput {
    const cfg: ServerClientConfig = {
      ...DEFAULTS,
      enabled: true,
      host: '127.0.0.1',
      port: s.port,
      certPath: certs.clientCert,
      keyPath: certs.clientKey,
      caPath: certs.caCert,
      backoffBaseMs: 20,
      backoffMaxMs: 200,
      pingIntervalMs: 0,
      negotiationWaitMs: 300,
      responseTimeoutMs: 1000,
      connectTimeoutMs: 5000,
      ...over,
    };
    const c = new ServerClientOutput(cfg);
    open.push(c);
    return c;
  }

  /** Every event received parses with node-cot to the uid sent, and every XML one validates against the XSD. */
  async function checkWithPeers(received: Received[]): Promise<void> {
    const peer = await peerParsers();
    const xml = received.filter((r): r is Extract<Received, { kind: 'xml' }> => r.kind === 'xml');
    for (const r of received) {
      const parsed = r.kind === 'xml' ? peer.fromXml(r.xml) : peer.fromProto(r.message);
      expect(parsed.raw.event._attributes.uid).to.equal(r.kind === 'xml' ? /uid="([^"]+)"/.exec(r.xml)?.[1] : r.fields.uid);
    }
    if (xml.length > 0) expect(await xsdValid(xml.map((r) => r.xml))).to.deep.equal(xml.map(() => true));
  }

  it('streams XML over mutual TLS: held events first, then live ones, each `<?xml …?>` + event with nothing after </event>', async () => {
    const s = await server();
    const c = client(s, { protocol: 'auto' });
    const events = [0, 1, 2, 3, 4, 5].map(track);
    for (const e of events.slice(0, 3)) c.send(e); // before start: held
    expect(c.status().detail.buffered).to.equal(3);
    await c.start();
    await until('connected', () => c.status().state === 'connected');
    for (const e of events.slice(3)) c.send(e);
    await until('six events', () => s.events().length === 6);
    const got = s.events();
    expect(got.map((r) => (r.kind === 'xml' ? r.xml : null))).to.deep.equal(events.map((e) => streamXml(e.xml)));
    expect(s.bytes).to.equal(got.reduce((n, r) => n + Buffer.byteLength((r as { xml: string }).xml), 0));
    expect(got[0]).to.include({ kind: 'xml', type: 'a-h-A-M-F-Q' });
    expect((got[0] as { xml: string }).xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<event ')).to.equal(true);
    await checkWithPeers(got);
    expect(s.peers).to.deep.equal([certs.clientCn]);
    const st = c.status();
    expect(st).to.deep.include({ wired: true, state: 'connected', sent: 6, dropped: 0, errors: 0 });
    expect(st.detail).to.deep.include({ protocol: 'xml', serverVersions: null, buffered: 0, connects: 1, reconnects: 0, lastError: null, tls: true, port: s.port });
  });

  it('negotiates TAK Protocol v1 when offered (client certificate as .p12) and sends frames that decode to the same fields', async () => {
    const s = await server({ offerV1: true });
    const c = client(s, { certPath: null, keyPath: null, p12Path: certs.clientP12, p12Password: certs.p12Password, negotiationWaitMs: 5000 });
    const events = [10, 11, 12].map(track);
    c.send(events[0] as CotOut);
    await c.start();
    await until('v1', () => c.status().detail.protocol === 'v1');
    for (const e of events.slice(1)) c.send(e);
    await until('three frames', () => s.events().length === 3);
    const requests = s.ofType('t-x-takp-q');
    expect(requests).to.have.length(1);
    expect(requests[0]).to.include({ kind: 'xml' });
    // the request is the last XML the client sends; everything after it is a frame
    expect(s.received.map((r) => `${r.kind}:${r.type}`)).to.deep.equal(['xml:t-x-takp-q', 'v1:a-h-A-M-F-Q', 'v1:a-h-A-M-F-Q', 'v1:a-h-A-M-F-Q']);
    expect(s.events().map((r) => (r.kind === 'v1' ? r.fields : null))).to.deep.equal(events.map((e) => e.fields));
    await checkWithPeers(s.events());
    expect(s.peers).to.deep.equal([certs.clientCn]);
    expect(c.status().detail).to.deep.include({ protocol: 'v1', serverVersions: [1] });
  });

  it('stays XML when configured so, when the server says no, and after a server that never answers', async () => {
    const offering = await server({ offerV1: true });
    const xmlOnly = client(offering, { protocol: 'xml' });
    await xmlOnly.start();
    xmlOnly.send(track(1));
    await until('event', () => offering.events().length === 1);
    expect(offering.ofType('t-x-takp-q')).to.have.length(0);
    expect(offering.events()[0]?.kind).to.equal('xml');

    const refusing = await server({ offerV1: true, acceptV1: false });
    const c2 = client(refusing);
    await c2.start();
    await until('negotiated', () => c2.status().state === 'connected' && refusing.ofType('t-x-takp-q').length === 1);
    c2.send(track(2));
    await until('event', () => refusing.events().length === 1);
    expect(refusing.events()[0]?.kind).to.equal('xml');
    expect(c2.status().detail).to.deep.include({ protocol: 'xml', serverVersions: [1] });

    const silent = await server({ offerV1: true, silentOnRequest: true });
    const c3 = client(silent, { responseTimeoutMs: 200 });
    c3.send(track(3));
    await c3.start();
    await until('second connection streams', () => silent.events().length === 1);
    expect(silent.ofType('t-x-takp-q')).to.have.length(1); // asked once, never again
    expect(silent.events()[0]).to.include({ kind: 'xml', conn: 2 });
    expect(c3.status().detail).to.deep.include({ protocol: 'xml', reconnects: 1 });
    expect((c3.status().detail.lastError as { kind: string }).kind).to.equal('protocol');
  });

  it('reconnects after the server restarts: events sent while it was down arrive, up to the buffer; the rest are dropped and counted', async () => {
    const s = await server();
    const c = client(s, { bufferSize: 5 });
    await c.start();
    await until('connected', () => c.status().state === 'connected');
    c.send(track(0));
    c.send(track(1));
    await until('two events', () => s.events().length === 2);
    await s.stop();
    await until('backoff', () => c.status().state === 'backoff');
    for (let i = 2; i < 10; i++) c.send(track(i));
    expect(c.status()).to.deep.include({ dropped: 3 });
    expect(c.status().detail.buffered).to.equal(5);
    await s.start();
    await until('held events flushed', () => s.events().length === 7);
    expect(s.events().map((r) => (r.kind === 'xml' ? /uid="([^"]+)"/.exec(r.xml)?.[1] : null))).to.deep.equal([0, 1, 5, 6, 7, 8, 9].map((i) => `svc-track-${i}`));
    expect(s.events().map((r) => r.conn)).to.deep.equal([1, 1, 2, 2, 2, 2, 2]);
    const st = c.status();
    expect(st).to.deep.include({ state: 'connected', sent: 7, dropped: 3 });
    expect(st.detail.buffered).to.equal(0);
    expect(st.detail.reconnects as number).to.be.at.least(1);
    expect(st.detail.connects).to.equal(2);
    expect(['closed', 'connect']).to.include((st.detail.lastError as { kind: string }).kind);
    await checkWithPeers(s.events());
  });

  it('a client certificate from another CA is refused with a TLS alert: the state says so, nothing is sent, it retries with backoff', async () => {
    const s = await opensslVerifyingServer(certs.serverCert, certs.serverKey, certs.caCert);
    open.push({ close: () => s.stop() });
    const c = client({ port: s.port } as FakeTakServer, { certPath: certs.otherClientCert, keyPath: certs.otherClientKey, negotiationWaitMs: 5000 });
    c.send(track(1));
    await c.start();
    await until('three refused attempts', () => (c.status().detail.reconnects as number) >= 3);
    const st = c.status();
    expect(st.errors).to.be.at.least(3);
    expect(st.detail.lastError, JSON.stringify(st.detail.lastError)).to.deep.include({ kind: 'client_certificate_rejected', code: 'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA' });
    expect(st.sent).to.equal(0);
    expect(st.detail.buffered).to.equal(1);
  });

  it('a server that drops the untrusted client certificate silently is reported as closed right after the handshake', async () => {
    const s = await server();
    // the wait for a v1 offer keeps the held event back, so the connection ends before either side wrote
    const c = client(s, { certPath: certs.otherClientCert, keyPath: certs.otherClientKey, negotiationWaitMs: 5000 });
    c.send(track(1));
    await c.start();
    await until('three refused attempts', () => (c.status().detail.reconnects as number) >= 3 && s.tlsErrors.length >= 3);
    const st = c.status();
    expect(st.errors).to.be.at.least(3);
    expect((st.detail.lastError as { kind: string }).kind, JSON.stringify(st.detail.lastError)).to.equal('closed_after_handshake');
    expect(st.sent).to.equal(0);
    expect(s.events()).to.deep.equal([]);
    expect(s.peers).to.deep.equal([]);
  });

  it('over TLS in XML mode too, events wait out the refusal window instead of going into a connection about to be refused', async () => {
    const s = await server();
    const c = client(s, { protocol: 'xml', certPath: certs.otherClientCert, keyPath: certs.otherClientKey, negotiationWaitMs: 5000 });
    c.send(track(1));
    await c.start();
    await until('two refused attempts', () => (c.status().detail.reconnects as number) >= 2 && s.tlsErrors.length >= 2);
    const st = c.status();
    expect((st.detail.lastError as { kind: string }).kind).to.equal('closed_after_handshake');
    expect([st.sent, st.detail.buffered]).to.deep.equal([0, 1]);
  });

  it('refuses a server whose certificate the configured CA did not sign, and keeps the events held', async () => {
    const s = await server({ otherServerCert: true });
    const c = client(s);
    c.send(track(1));
    c.send(track(2));
    await c.start();
    await until('two refused attempts', () => (c.status().detail.reconnects as number) >= 2);
    const st = c.status();
    const err = st.detail.lastError as { kind: string; code: string };
    expect(err.kind).to.equal('server_certificate_untrusted');
    expect(err.code).to.equal('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    expect(st.detail.buffered).to.equal(2);
    expect(st.sent).to.equal(0);
    expect(s.events()).to.deep.equal([]);
  });

  it('checks the server certificate against the name it is told to expect, not only the CA', async () => {
    const s = await server();
    const c = client(s, { servername: 'tak.example.org' });
    await c.start();
    await until('a refused attempt', () => c.status().detail.lastError !== null);
    expect(c.status().detail.lastError).to.deep.include({ kind: 'server_certificate_untrusted', code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
    const ok = client(s, { servername: 'localhost' });
    await ok.start();
    await until('connected by name', () => ok.status().state === 'connected');
  });

  it('answers server pings with pongs, in XML and in v1, and sends its own keep-alive pings', async () => {
    const xmlServer = await server();
    const c = client(xmlServer, { pingIntervalMs: 50 });
    await c.start();
    await until('connected', () => c.status().state === 'connected');
    xmlServer.sendPing();
    await until('pong', () => xmlServer.ofType('t-x-c-t-r').length === 1);
    expect(xmlServer.ofType('t-x-c-t-r')[0]?.kind).to.equal('xml');
    await until('two keep-alive pings', () => xmlServer.ofType('t-x-c-t').length >= 2);
    await checkWithPeers([...xmlServer.ofType('t-x-c-t-r'), ...xmlServer.ofType('t-x-c-t')]);

    const v1Server = await server({ offerV1: true });
    const c2 = client(v1Server, { negotiationWaitMs: 5000 });
    await c2.start();
    await until('v1', () => c2.status().detail.protocol === 'v1');
    v1Server.sendPing();
    await until('v1 pong', () => v1Server.ofType('t-x-c-t-r').length === 1);
    expect(v1Server.ofType('t-x-c-t-r')[0]?.kind).to.equal('v1');
    expect(c2.status().detail.pongsSent).to.equal(1);
  });

  it('plain TCP (the anonymous 8087 input): no certificates, XML stream', async () => {
    const s = await server({ plain: true });
    const c = client(s, { tls: false, certPath: null, keyPath: null, caPath: null });
    await c.start();
    c.send(track(4));
    await until('event', () => s.events().length === 1);
    expect((s.events()[0] as { xml: string }).xml).to.equal(streamXml(track(4).xml));
    expect(c.status().detail).to.deep.include({ tls: false, protocol: 'xml' });
  });

  it('close() stops it for good: no reconnection, no more sending', async () => {
    const s = await server();
    const c = client(s);
    await c.start();
    await until('connected', () => c.status().state === 'connected');
    await c.close();
    expect(c.status().state).to.equal('stopped');
    c.send(track(1));
    await until('server saw the close', () => s.openConnections().length === 0);
    expect(s.connections).to.equal(1);
    expect(s.events()).to.deep.equal([]);
  });

  it('a missing certificate file is an error in the state, retried, never a throw', async () => {
    const s = await server();
    const c = client(s, { certPath: `${certs.dir}/missing.pem` });
    await c.start();
    await until('two attempts', () => (c.status().detail.reconnects as number) >= 2);
    expect((c.status().detail.lastError as { kind: string; code: string })).to.deep.include({ kind: 'certificate_files', code: 'ENOENT' });
  });

  it('cuts off a server that sends a message longer than the limit, and connects again', async () => {
    const s = await server({ plain: true });
    const c = client(s, { tls: false, maxMessageBytes: 1000 });
    await c.start();
    await until('connected', () => c.status().state === 'connected');
    s.sendRaw(`<event version="2.0"><detail><remarks>${'a'.repeat(1500)}`);
    await until('second connection', () => s.connections === 2);
    expect(c.status().detail.lastError).to.deep.include({ kind: 'protocol', message: 'XML message over 1000 bytes' });
  });

  it('without a host it dials nothing and says so', async () => {
    const s = await server({ plain: true });
    const c = client(s, { host: '', tls: false });
    await c.start();
    c.send(track(1));
    expect(c.status()).to.deep.include({ state: 'error', errors: 1 });
    expect(c.status().detail.lastError).to.deep.include({ kind: 'connect', message: 'no TAK Server host is configured' });
    expect(c.status().detail.buffered).to.equal(1);
    expect(s.connections).to.equal(0);
  });

  it('backoff is full jitter under min(max, base · 2^attempt)', () => {
    expect([0, 1, 2, 3, 4, 5, 40].map((a) => backoffDelayMs(a, 100, 1000, () => 0.999999))).to.deep.equal([99, 199, 399, 799, 999, 999, 999]);
    expect(backoffDelayMs(3, 100, 1000, () => 0)).to.equal(0);
    expect(backoffDelayMs(2, 100, 1000, () => 0.5)).to.equal(200);
  });
});
