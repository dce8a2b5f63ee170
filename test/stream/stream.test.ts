import { expect } from 'chai';
import { createPublicKey, verify } from 'node:crypto';
import { request } from 'node:http';
import { EventSource } from 'eventsource';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { openSse } from '../helpers/sse.js';
import { until } from '../helpers/until.js';
import { loadConfig } from '../../src/config/load.js';

const STREAM = '/api/svc/v1/stream/verdicts';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function verifies(data: { receipt: { dsse: { payload: string; payloadType: string; signatures: { sig: string }[] } } }, pem: string): boolean {
  const body = Buffer.from(data.receipt.dsse.payload, 'base64');
  const type = data.receipt.dsse.payloadType;
  const pae = Buffer.concat([Buffer.from(`DSSEv1 ${Buffer.byteLength(type)} ${type} ${body.length} `), body]);
  return verify('sha256', pae, createPublicKey(pem), Buffer.from(data.receipt.dsse.signatures[0]!.sig, 'base64'));
}

describe('SSE verdict stream', function () {
  // above the waits' own 60 s limits, so a slow machine fails on the condition it waited for
  this.timeout(180_000);
  let t: TestApp;
  let pem: string;
  before(async () => {
    t = await buildTestApp({ stream: { tickMs: 50, heartbeatMs: 200 } });
    pem = (await t.http.get('/api/svc/v1/edge/pubkey.pem')).text;
  });
  after(() => t.close());

  it('an EventSource client receives signed verdicts whose signatures verify, with increasing ids', async () => {
    const es = new EventSource(`${t.baseUrl}${STREAM}`);
    const got: MessageEvent[] = [];
    await new Promise<void>((resolve, reject) => {
      es.addEventListener('verdict', (e) => {
        got.push(e);
        if (got.length === 8) resolve();
      });
      es.onerror = () => reject(new Error('stream error'));
    });
    es.close();
    const ids = got.map((e) => Number(e.lastEventId));
    for (let i = 1; i < ids.length; i++) expect(ids[i]).to.be.greaterThan(ids[i - 1]!);
    for (const e of got) {
      const data = JSON.parse(e.data as string);
      expect(data.ledger.index).to.equal(Number(e.lastEventId));
      expect(data.simulated).to.equal(true);
      expect(data.lambda).to.be.a('number');
      expect(verifies(data, pem)).to.equal(true);
    }
  });

  it('sends retry once and : ping heartbeats, with SSE headers and no compression', async () => {
    const r = await openSse(`${t.baseUrl}${STREAM}`, { 'accept-encoding': 'gzip' });
    await until('a heartbeat', () => r.comments.includes(': ping'), 60_000);
    r.close();
    expect(r.res.headers['content-type']).to.match(/^text\/event-stream/);
    expect(r.res.headers['cache-control']).to.equal('no-cache, no-transform');
    expect(r.res.headers['content-encoding']).to.equal(undefined);
    expect(r.comments.filter((c) => c === ': ping').length).to.be.greaterThan(0);
  });

  it('two viewers see the same events from one flight; resuming with Last-Event-ID replays exactly the missed ones', async () => {
    const a = await openSse(`${t.baseUrl}${STREAM}`);
    const b = await openSse(`${t.baseUrl}${STREAM}`);
    await a.waitFor(12);
    await b.waitFor(12);
    const common = a.events.map((e) => e.id).filter((id) => b.events.some((x) => x.id === id));
    expect(common.length).to.be.greaterThan(4);
    for (const id of common) expect(a.events.find((e) => e.id === id)!.data).to.equal(b.events.find((e) => e.id === id)!.data);
    // one flight: each drone appears once per tick, not once per viewer
    const perTick = a.events.slice(0, 8).map((e) => JSON.parse(e.data).track_id as string);
    expect(new Set(perTick.slice(0, 4)).size).to.equal(4);
    const lastSeen = Number(b.events[5]!.id);
    b.close();
    // events flow while B is away
    await a.waitFor(a.events.length + 3);
    const resumed = await openSse(`${t.baseUrl}${STREAM}`, { 'last-event-id': String(lastSeen) });
    await resumed.waitFor(5);
    const replayed = resumed.events.map((e) => Number(e.id));
    // let A catch up to what the replay covers
    await until('A to see the last replayed event', () => a.events.some((e) => Number(e.id) >= replayed.at(-1)!), 60_000);
    const upTo = Math.min(replayed.at(-1)!, Number(a.events.at(-1)!.id));
    const seenByA = a.events.map((e) => Number(e.id));
    // exactly the events A saw after lastSeen: nothing missed, nothing repeated
    expect(replayed.filter((id) => id <= upTo)).to.deep.equal(seenByA.filter((id) => id > lastSeen && id <= upTo));
    expect(replayed.length).to.be.greaterThan(0);
    a.close();
    resumed.close();
  });

  it('the flight stops when the last viewer leaves', async () => {
    const ledgerSize = async (): Promise<number> => (await t.http.get('/api/svc/v1/ledger/readiness')).body.integrity.nodes;
    // precondition: a flight really runs while someone watches (the ledger grows, wire C is not idle)
    const viewer = await openSse(`${t.baseUrl}${STREAM}`);
    await viewer.waitFor(4);
    const running = await ledgerSize();
    await until('the ledger to grow', async () => (await ledgerSize()) > running, 60_000);
    expect((await t.http.get('/mesh/state')).body.wires.C.status).to.not.equal('IDLE');
    viewer.close();
    await until('wire C to go idle', async () => (await t.http.get('/mesh/state')).body.wires.C.status === 'IDLE', 60_000);
    const size1 = await ledgerSize();
    // a window of eight 50 ms ticks in which a flight still running would append
    await sleep(400);
    const size2 = await ledgerSize();
    expect(size2).to.equal(size1);
    const mesh = (await t.http.get('/mesh/state')).body;
    expect(mesh.wires.C.status).to.equal('IDLE');
  });

  it('a viewer that never reads falls megabytes behind while the others keep receiving', async () => {
    // A fast flight, so the stalled viewer is really behind (the old version sent a few KB, which
    // the stalled socket had simply read). Loopback kernel buffers here absorb ~36 MB (tcp_rmem max
    // 32 MB + tcp_wmem max 4 MB), far more than a test can send, so the drop at sendBufferBytes is
    // tested in hub.test.ts with a response whose writableLength grows; this test pins the fan-out.
    const fast = await buildTestApp({ stream: { tickMs: 10, heartbeatMs: 200 } });
    try {
      const good = await openSse(`${fast.baseUrl}${STREAM}`);
      const stalled = await new Promise<import('node:http').IncomingMessage>((resolve) => {
        const req = request(`${fast.baseUrl}${STREAM}`, (res) => {
          res.pause();
          resolve(res);
        });
        req.end();
      });
      const bytes = (): number => good.events.reduce((acc, e) => acc + e.data.length, 0);
      const start = bytes();
      // a loaded machine takes longer to send 2 MB; a limit, not a speed bound
      await until('2 MB to reach the reading viewer', () => bytes() - start >= 2_000_000, 120_000).catch(() => null);
      const sent = bytes() - start;
      // the stalled viewer stopped reading after its first buffer, yet every event went to both
      expect(sent, 'bytes the reading viewer received while the other stalled').to.be.at.least(2_000_000);
      expect(stalled.socket.bytesRead).to.be.below(sent / 10);
      expect(stalled.socket.destroyed).to.equal(false);
      const seen = good.events.length;
      await until('more events for the reading viewer', () => good.events.length > seen, 60_000);
      good.close();
      stalled.destroy();
    } finally {
      await fast.close();
    }
  });

  it('refuses viewers above the cap with 503', async () => {
    const capped = await buildTestApp({ stream: { maxViewers: 1, tickMs: 1000 } });
    try {
      const first = await openSse(`${capped.baseUrl}${STREAM}`);
      const second = await capped.http.get(STREAM);
      expect(second.status).to.equal(503);
      expect(second.headers['retry-after']).to.equal('1');
      first.close();
    } finally {
      await capped.close();
    }
  });
});

describe('edge scene', () => {
  let t: TestApp;
  const mast = { name: 'mast 1', lat: 36.21, lon: -115.19, alt_m: 25 };
  before(async () => {
    t = await buildTestApp({ stream: { maxFramesPerRequest: 4, sensors: [mast] } });
  });
  after(() => t.close());

  const frame = (id: string, lat: number) => ({ track_id: id, source: 'ADS-B', lat, lon: -115.16, alt_m: 80, speed_mps: 10, rssi_dbm: -50, id_authenticated: true, n_observations: 500 });

  it('POST evaluates, signs and appends every frame, and the scene shows them with ledger indices', async () => {
    const res = await t.http.post('/api/svc/v1/edge/3d').send({ frames: [frame('a00001', 36.3), frame('a00002', 36.225)] });
    expect(res.status).to.equal(200);
    expect(res.body.appended.map((a: { ledger_index: number }) => a.ledger_index)).to.deep.equal([0, 1]);
    const scene = (await t.http.get('/api/svc/v1/edge/3d')).body;
    const inside = scene.tracks.find((tr: { track_id: string }) => tr.track_id === 'a00002');
    expect(inside).to.include({ decision: 'DENY', geofence_inside: true, ledger_index: 1 });
    expect(scene.zones[0].id).to.equal('nfz-demo-1');
    expect(scene.tracks.find((tr: { track_id: string }) => tr.track_id === 'a00001').position.enu.n).to.be.closeTo(11119.5, 1);
    // configured sensor sites, in the scene's ENU frame too (0.01° of latitude ≈ 1,111.9 m north)
    expect(scene.sensors).to.have.length(1);
    expect(scene.sensors[0]).to.deep.include(mast);
    expect(scene.sensors[0].enu.n).to.be.closeTo(1111.9, 0.2);
    expect(scene.sensors[0].enu.u).to.equal(15);
  });

  it('sensor sites come from SVC_SENSOR_SITES as JSON; a bad list stops start-up naming the variable', () => {
    const c = loadConfig({ env: { NODE_ENV: 'test', SVC_SENSOR_SITES: JSON.stringify([{ name: 'a', lat: 1, lon: 2 }]) } });
    expect(c.stream.sensors).to.deep.equal([{ name: 'a', lat: 1, lon: 2, alt_m: null }]);
    expect(loadConfig({ env: { NODE_ENV: 'test' } }).stream.sensors).to.deep.equal([]);
    expect(() => loadConfig({ env: { NODE_ENV: 'test', SVC_SENSOR_SITES: '[{' } })).to.throw(/stream\.sensors \(env SVC_SENSOR_SITES\)/);
    expect(() => loadConfig({ env: { NODE_ENV: 'test', SVC_SENSOR_SITES: '[{"name":"a","lat":91,"lon":0}]' } })).to.throw(/SVC_SENSOR_SITES/);
    expect(() => loadConfig({ env: { NODE_ENV: 'test', SVC_SENSOR_SITES: '[{"name":"a","lat":1,"lon":0},{"name":"a","lat":2,"lon":0}]' } })).to.throw(/SVC_SENSOR_SITES/);
  });

  it('a batch with one bad frame is 422 and appends nothing; the frame limit is enforced', async () => {
    const size = (await t.http.get('/api/svc/v1/ledger/readiness')).body.integrity.nodes;
    const bad = await t.http.post('/api/svc/v1/edge/3d').send({ frames: [frame('a00003', 36.3), { ...frame('a00004', 36.3), lat: 'north' }] });
    expect(bad.status).to.equal(422);
    expect(bad.body.detail[0]).to.include({ type: 'float_type' });
    expect(bad.body.detail[0].loc).to.deep.equal(['body', 'frames', 1, 'lat']);
    const many = await t.http.post('/api/svc/v1/edge/3d').send({ frames: Array.from({ length: 5 }, (_, i) => frame(`b0000${i}`, 36.3)) });
    expect(many.status).to.equal(422);
    expect(many.body.detail[0]).to.include({ type: 'too_long' });
    expect((await t.http.get('/api/svc/v1/ledger/readiness')).body.integrity.nodes).to.equal(size);
  });
});
