/**
 * Mesh SA on loopback: a UDP socket in the test joins the group on 127.0.0.1 and receives what the
 * output sends, directly and through the TAK thread; the thread's queue drops the oldest and counts;
 * POST /verdict reaches the group within 1 s; /cot/status and /metrics show the output wired with
 * its live state; and with outputs on and nobody listening the verdict path stays near its baseline.
 */
import { createSocket, type Socket } from 'node:dgram';
import { expect } from 'chai';
import { MeshOutput, type MeshConfig } from '../../src/tak/mesh.js';
import { TakHost } from '../../src/tak/tak-host.js';
import { renderTrack } from '../../src/tak/events.js';
import type { CotOut } from '../../src/tak/output.js';
import { XML_DECLARATION } from '../../src/lib/cot/serialise.js';
import { VERDICT_EXAMPLES } from '../../src/verdicts/verdicts.routes.js';
import { buildTestApp, parsePrometheus } from '../helpers/app.js';
import { nodeCot, xsdValid } from '../helpers/cot-oracle.js';
import { until } from '../helpers/until.js';

const GROUP = '239.2.3.1';
const API = '/api/svc/v1';

interface Receiver {
  port: number;
  got: string[];
  close(): Promise<void>;
}

async function receiver(): Promise<Receiver> {
  const sock: Socket = createSocket({ type: 'udp4', reuseAddr: true });
  const got: string[] = [];
  sock.on('message', (m) => got.push(m.toString('utf8')));
  await new Promise<void>((resolve) => sock.bind(0, resolve));
  sock.addMembership(GROUP, '127.0.0.1');
  return { port: sock.address().port, got, close: () => new Promise((resolve) => sock.close(() => resolve())) };
}

const mesh = (port: number): MeshConfig => ({ enabled: true, group: GROUP, port, ttl: 1, interface: '127.0.0.1', protocol: 'xml', maxInFlight: 1000 });
const event = (i: number): CotOut => renderTrack({ uid: `t-${i}`, type: 'a-u-A', how: 'm-g', startMs: Date.now(), lat: 1, lon: 2, hae: 9_999_999, ce: 9_999_999, le: 9_999_999, detail: [] }, Date.now(), 60);
const uidOf = (xml: string) => /uid="([^"]+)"/.exec(xml)![1];

describe('TAK mesh output', () => {
  let rx: Receiver;
  beforeEach(async () => {
    rx = await receiver();
  });
  afterEach(() => rx.close());

  it('sends one XML event per datagram to the group, XSD-valid and parsed by node-cot', async () => {
    const out = new MeshOutput(mesh(rx.port));
    await out.start();
    out.send(event(1));
    out.send(event(2));
    await until('two datagrams', () => rx.got.length >= 2);
    await out.close();
    expect(rx.got.map(uidOf)).to.have.members(['t-1', 't-2']);
    expect(rx.got.every((d) => d.startsWith(`${XML_DECLARATION}\n<event `))).to.equal(true);
    expect(await xsdValid(rx.got)).to.deep.equal([true, true]);
    const CoT = await nodeCot();
    expect(rx.got.map((d) => new CoT(d).uid())).to.have.members(['t-1', 't-2']);
    expect(out.status()).to.deep.include({ wired: true, state: 'stopped', sent: 2, dropped: 0, errors: 0 });
    // closed: nothing is sent, the event is counted
    out.send(event(3));
    expect(out.status().dropped).to.equal(1);
  });

  it('the TAK thread: a bounded queue that drops the oldest and counts, then sends what it kept', async () => {
    const host = new TakHost({ plan: { mesh: mesh(rx.port) }, queueMax: 3, statusIntervalMs: 100, log: { warn() {} } });
    host.start();
    // queued before the thread has started its outputs: 10 events into a queue of 3
    for (let i = 0; i < 10; i++) host.post(event(i));
    expect(host.queueState()).to.deep.equal({ depth: 3, max: 3, dropped: 7, posted: 0 });
    await until('three datagrams', () => rx.got.length >= 3);
    expect(rx.got.map(uidOf)).to.deep.equal(['t-7', 't-8', 't-9']);
    const status = await until('the mesh reporting 3 sent', async () => ((await host.refresh()).mesh?.sent === 3 ? host.outputs() : null));
    expect(status.mesh).to.deep.include({ wired: true, state: 'sending', sent: 3, dropped: 0, errors: 0 });
    expect(host.queueState()).to.deep.equal({ depth: 0, max: 3, dropped: 7, posted: 3 });
    await host.close();
    expect(host.state).to.equal('closed');
  });

  describe('in the service', () => {
    it('POST /verdict reaches the group within 1 s; /cot/status and /metrics show the output wired with its state', async function () {
      this.timeout(30_000);
      const own = await receiver();
      const t = await buildTestApp({ stream: { flight: 'off' }, server: { publicBaseUrl: 'https://svc.example.org' }, tak: { mesh: mesh(own.port), statusIntervalMs: 100, aircraft: false } });
      try {
        await t.provided.tak!.host.started();
        const postedAt = Date.now();
        const res = await t.http.post(`${API}/verdict`).send(VERDICT_EXAMPLES.deny.value);
        expect(res.status).to.equal(200);
        await until('the verdict datagram', () => own.got.find((d) => d.includes(`uid="svc-verdict-${VERDICT_EXAMPLES.deny.value.track_id}"`)), 1000);
        expect(Date.now() - postedAt).to.be.below(1000);
        const d = own.got.find((x) => x.includes('svc-verdict-'))!;
        expect(d).to.contain('type="a-h-A-M-F-Q"').and.to.contain(`https://svc.example.org${API}/receipt/export?index=${res.body.ledger.index}`);
        expect(await xsdValid([d])).to.deep.equal([true]);
        const status = await until('status with the datagram counted', async () => {
          const body = (await t.http.get(`${API}/cot/status`)).body;
          return body.roadmap.udp_multicast_emit.sent >= 1 ? body : null;
        });
        expect(status.roadmap.udp_multicast_emit).to.deep.include({ wired: true, state: 'sending', target_group: `${GROUP}:${own.port}`, dropped: 0, errors: 0 });
        expect(status.roadmap.live_tak_server_stream).to.deep.include({ wired: false, state: 'off', sent: 0 });
        expect(status.roadmap.tak_listener).to.deep.include({ wired: false, state: 'off' });
        expect(status.honesty).to.contain('sent live to the wired TAK outputs');
        const metrics = parsePrometheus((await t.http.get('/metrics')).text);
        const sent = metrics.get('svc_tak_events_sent_total')!.find((s) => s.labels.output === 'mesh')!;
        expect(sent.value).to.be.at.least(1);
        expect(metrics.get('svc_tak_output_state')!.filter((s) => s.value === 1).map((s) => `${s.labels.output}:${s.labels.state}`)).to.have.members(['mesh:sending', 'server:off', 'listener:off']);
        expect(metrics.get('svc_tak_live_tracks')![0]!.value).to.equal(1);
      } finally {
        await t.close();
        await own.close();
      }
    });

    it('with every output off, /cot/status reports each as not wired and the service opens no TAK thread', async () => {
      const t = await buildTestApp({ stream: { flight: 'off' } });
      try {
        expect(t.provided.tak).to.equal(null);
        const body = (await t.http.get(`${API}/cot/status`)).body;
        for (const k of ['udp_multicast_emit', 'live_tak_server_stream', 'tak_listener']) expect(body.roadmap[k]).to.deep.include({ wired: false, state: 'off', sent: 0, dropped: 0, errors: 0 });
        expect(body.honesty).to.contain('Nothing is emitted over the network.');
      } finally {
        await t.close();
      }
    });
  });
});
