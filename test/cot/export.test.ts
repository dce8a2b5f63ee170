import { expect } from 'chai';
import dgram from 'node:dgram';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import tls from 'node:tls';
import { serialiseEvent, serialiseEvents } from '../../src/cot/export.js';
import { CotService } from '../../src/cot/service.js';
import { SAMPLE_MARITIME, type Track } from '../../src/cot/tracks.js';
import { buildTestApp, withTestApp } from '../helpers/app.js';
import { nodeCot, xsdValid } from '../helpers/cot-oracle.js';

const DRONES: Track[] = [
  { id: 'test-ae1f42', callsign: 'test-ae1f42', cotType: 'a-u-A-M-F-Q', lat: 36.19, lon: -115.17, haeM: 115, courseDeg: -30, speedMps: 25, slopeDeg: 2.5, simulated: true },
  { id: 'test-sys-17', callsign: 'test-sys-17', cotType: 'a-u-A-C-F-q', lat: 36.255, lon: -115.21, haeM: null, courseDeg: 725, speedMps: 8, simulated: true },
];

describe('CoT export and status', () => {
  const app = withTestApp();
  before(() => app().provided.cot.tracks.register('test-drones', () => DRONES));

  it('exports every track as a schema-valid event that node-cot reads back as the track record', async () => {
    const all = await app().http.get('/api/svc/v1/cot/export');
    expect(all.status).to.equal(200);
    expect(all.headers['content-type']).to.equal('application/xml; charset=utf-8');
    expect(all.text).to.match(/^<\?xml version="1\.0" encoding="UTF-8" standalone="yes"\?><events><event /);
    const tracks = [...SAMPLE_MARITIME, ...DRONES];
    // plus the simulated flight's four drones, registered by the stream feature
    expect(all.text.match(/<event /g)).to.have.length(tracks.length + 4);
    const flight = await app().http.get('/api/svc/v1/cot/export/sys-17');
    expect(flight.text).to.include('uid="svc-track-sys-17"').and.include('how="m-s"').and.include('opex="s"');
    const before = Date.now();
    const singles = await Promise.all(tracks.map((tr) => app().http.get(`/api/svc/v1/cot/export/${tr.id}`)));
    const after = Date.now();
    expect(await xsdValid(singles.map((r) => r.text))).to.deep.equal(tracks.map(() => true));
    const CoT = await nodeCot();
    for (const [i, tr] of tracks.entries()) {
      const cot = new CoT(singles[i]!.text);
      const a = cot.raw.event._attributes;
      expect(cot.uid()).to.equal(`svc-track-${tr.id}`);
      expect(cot.callsign()).to.equal(tr.callsign);
      expect(a).to.include({ type: tr.cotType, how: 'm-s', opex: 's', version: '2.0' });
      expect(a.time).to.equal(a.start);
      expect(Date.parse(a.stale!) - Date.parse(a.time!)).to.equal(120_000);
      // stamped while it was asked for (a second either side for a time written to the second)
      expect(Date.parse(a.time!)).to.be.within(before - 1000, after + 1000);
      const p = cot.raw.event.point._attributes;
      expect([Number(p.lat), Number(p.lon)]).to.deep.equal([Number(tr.lat.toFixed(7)), Number(tr.lon.toFixed(7))]);
      expect(p.hae).to.equal(tr.haeM === null ? '9999999.0' : tr.haeM.toFixed(1));
      const track = cot.raw.event.detail!.track!._attributes!;
      expect(Number(track.course)).to.be.closeTo((((tr.courseDeg ?? 0) % 360) + 360) % 360, 0.05);
      expect(Number(track.course)).to.be.within(0, 359.99);
      expect(Number(track.speed)).to.be.closeTo(tr.speedMps!, 0.005);
      expect(cot.raw.event.detail!.precisionlocation!._attributes).to.deep.equal({ geopointsrc: 'CALC', altsrc: 'CALC' });
    }
    expect(singles[4]!.text).to.include('slope="2.5"');
  });

  it('single and multi exports are byte-identical for the same clock; numbers are fixed-point', () => {
    const svc = new CotService(app().provided.cot.tracks, app().services.config.cot, () => Date.parse('2026-03-01T12:00:00.123Z'));
    const entries = svc.entries();
    const multi = serialiseEvents(entries.map((e) => e.event));
    for (const e of entries) {
      const single = serialiseEvent(e.event).replace(/^<\?xml[^>]*\?>/, '');
      expect(multi).to.include(single);
    }
    expect(multi).to.include('time="2026-03-01T12:00:00.123Z"').and.include('stale="2026-03-01T12:02:00.123Z"');
    expect(multi).to.not.match(/="[-\d.]+e[-+]?\d+"/i);
  });

  it('404 for an unknown track id', async () => {
    const res = await app().http.get('/api/svc/v1/cot/export/nope');
    expect(res.status).to.equal(404);
    expect(res.body).to.deep.equal({ detail: "track 'nope' not found" });
  });

  it('/cot/status is exactly the 2.4 document with counts from the real export', async () => {
    const { body } = await app().http.get('/api/svc/v1/cot/status');
    expect(Object.keys(body)).to.have.members(['capability', 'standard', 'live', 'roadmap', 'routes', 'data_kind', 'honesty', 'sources']);
    expect(body.live).to.deep.equal({ cot_xml_export: true, schema_shape_validation: true, cot_xml_ingest: true, tracks_total: 10, tracks_cot_valid: 10, all_tracks_emittable: true });
    expect(Object.keys(body.roadmap)).to.have.members(['udp_multicast_emit', 'live_tak_server_stream', 'tak_listener', 'tls_client_cert_enrolment']);
    for (const r of Object.values(body.roadmap) as { wired: boolean; note: string }[]) expect(r).to.include({ wired: false }).and.to.have.property('note');
    expect(body.roadmap.udp_multicast_emit.target_group).to.equal('239.2.3.1:6969');
    expect(body.routes).to.deep.equal(['/api/svc/v1/cot/export', '/api/svc/v1/cot/export/{track_id}', '/api/svc/v1/cot/ingest', '/api/svc/v1/cot/status']);
    expect(body.data_kind).to.equal('computed_from_sample_tracks');
    for (const s of body.sources) expect(Object.keys(s)).to.have.members(['leader', 'kind', 'url', 'data_kind']);
    expect(app().provided.cot.status.tracksTotal()).to.equal(10);
  });

  it('counts an unemittable track as not valid', async () => {
    // an app of its own: the broken track stays out of the shared one
    const other = await buildTestApp();
    try {
      other.provided.cot.tracks.register('broken', () => [{ ...DRONES[0]!, id: 'bad-type', cotType: 'a_u' }]);
      const { body } = await other.http.get('/api/svc/v1/cot/status');
      expect(body.live).to.include({ tracks_total: 9, tracks_cot_valid: 8, all_tracks_emittable: false });
      expect(() => other.provided.cot.tracks.register('broken', () => [])).to.throw(/twice/);
    } finally {
      await other.close();
    }
  });

  it('no CoT route opens a UDP socket or a TCP/TLS connection', async () => {
    const calls: string[] = [];
    const saved = { udp: dgram.createSocket, tcp: net.connect, tls: tls.connect };
    dgram.createSocket = ((...a: unknown[]) => (calls.push('udp'), (saved.udp as (...x: unknown[]) => unknown)(...a))) as typeof dgram.createSocket;
    net.connect = ((...a: unknown[]) => (calls.push('tcp'), (saved.tcp as (...x: unknown[]) => unknown)(...a))) as typeof net.connect;
    tls.connect = ((...a: unknown[]) => (calls.push('tls'), (saved.tls as (...x: unknown[]) => unknown)(...a))) as typeof tls.connect;
    syncBuiltinESMExports();
    try {
      await app().http.get('/api/svc/v1/cot/export');
      await app().http.get('/api/svc/v1/cot/export/mar-001');
      await app().http.get('/api/svc/v1/cot/status');
      await app().http.post('/api/svc/v1/cot/ingest').set('content-type', 'application/xml').send('<event/>');
    } finally {
      Object.assign(dgram, { createSocket: saved.udp });
      Object.assign(net, { connect: saved.tcp });
      Object.assign(tls, { connect: saved.tls });
      syncBuiltinESMExports();
    }
    // supertest's client connects through net.createConnection, which is not stubbed
    expect(calls).to.deep.equal([]);
  });
});
