/**
 * The events sent to TAK: a DENY, a REVIEW and an ALLOW verdict, a military aircraft and a relayed
 * ingested sample each validate against the MITRE XSD and parse with @tak-ps/node-cot, with the
 * uid, type, times, point and remarks the mapping promises.
 */
import { expect } from 'chai';
import { VERDICT_EXAMPLES } from '../../src/verdicts/verdicts.routes.js';
import type { Verdict } from '../../src/verdicts/verdict-service.js';
import { aircraftTrack, aircraftType, relayedEvent, renderTrack, renderTrackTree, verdictTrack, type TrackSpec } from '../../src/tak/events.js';
import { el } from '../../src/lib/cot/serialise.js';
import { parseXml } from '../../src/lib/cot/xml.js';
import { XML_DECLARATION } from '../../src/lib/cot/serialise.js';
import type { AdsbAircraft } from '../../src/isomorphic/wire/adsb.js';
import { withTestApp } from '../helpers/app.js';
import { COT_SAMPLES, nodeCot, xsdValid } from '../helpers/cot-oracle.js';

const NOW = Date.parse('2026-11-29T07:00:00.000Z');
const BASE = 'https://svc.example.org';

const C17: AdsbAircraft = {
  hex: 'ae01c5', non_icao: false, callsign: 'RCH123', registration: '05-5140', type_code: 'C17', type_desc: null, military: true,
  lat: 39.5, lon: -77.1, position_age_s: 0.5, position_time: '2026-11-29T06:59:59.500Z', on_ground: false, alt_baro_ft: 32000, alt_geom_ft: 32500,
  ground_speed_kt: 450.2, track_deg: 87.1, vertical_rate_fpm: 0, squawk: '4471', emergency: null, category: 'A5', position_source: 'adsb_icao', nac_p: 9, seen_s: 0.2, provider: 'fake',
};

describe('TAK events', () => {
  const verdicts: Verdict[] = [];
  const app = withTestApp({ stream: { flight: 'off' } });
  before(async () => {
    app().provided.verdicts.verdicts.onVerdict((v) => verdicts.push(v));
    for (const ex of [VERDICT_EXAMPLES.deny, VERDICT_EXAMPLES.review, VERDICT_EXAMPLES.allow]) {
      const res = await app().http.post('/api/svc/v1/verdict').send(ex.value);
      expect(res.status).to.equal(200);
    }
  });

  it('a verdict of each decision: uid per track, type by decision, remarks with λ and the receipt link; XSD-valid and parsed by node-cot', async () => {
    expect(verdicts.map((v) => v.evaluation.decision)).to.deep.equal(['DENY', 'REVIEW', 'ALLOW']);
    const outs = verdicts.map((v) => renderTrack(verdictTrack(v, BASE)!, NOW, 120));
    expect(await xsdValid(outs.map((o) => XML_DECLARATION + o.xml))).to.deep.equal([true, true, true]);
    const CoT = await nodeCot();
    outs.forEach((o, i) => {
      const v = verdicts[i]!;
      const cot = new CoT(o.xml);
      const a = cot.raw.event._attributes;
      expect(cot.uid()).to.equal(`svc-verdict-${v.frame.track_id}`);
      expect(a.type).to.equal({ DENY: 'a-h-A-M-F-Q', REVIEW: 'a-u-A-M-F-Q', ALLOW: 'a-n-A-M-F-Q' }[v.evaluation.decision]);
      expect(a).to.include({ how: 'm-g', time: '2026-11-29T07:00:00.000Z', start: v.node.tsUtc > '2026-11-29T07:00:00.000Z' ? '2026-11-29T07:00:00.000Z' : v.node.tsUtc, stale: '2026-11-29T07:02:00.000Z' });
      expect(cot.raw.event.point._attributes).to.deep.equal({ lat: v.frame.lat.toFixed(7), lon: v.frame.lon.toFixed(7), hae: '9999999.0', ce: '9999999.0', le: '9999999.0' });
      expect(cot.callsign()).to.equal(`${v.evaluation.decision} ${v.frame.track_id}`);
      const url = `${BASE}/api/svc/v1/receipt/export?index=${v.node.index}`;
      expect(o.xml).to.contain(`${v.evaluation.decision} \u03bb ${v.evaluation.lambda.toFixed(3)} (floor ${v.evaluation.lambdaFloor.toFixed(3)})`);
      expect(o.xml).to.contain(`signed receipt #${v.node.index} ${url}`);
      expect(cot.raw.event.detail!.link!._attributes).to.deep.equal({ url, remarks: `signed receipt #${v.node.index}`, relation: 'r-u' });
      expect(o.fields).to.include({ uid: cot.uid(), type: a.type, timeMs: NOW, staleMs: NOW + 120_000, ce: 9_999_999 });
      expect(o.fields.detailXml.startsWith('<contact ')).to.equal(true);
    });
  });

  it('a simulated verdict says so: how m-s and opex s', async () => {
    const v = verdicts[0]!;
    const sim = { node: { ...v.node, simulated: true } };
    const o = renderTrack(verdictTrack(sim, null)!, NOW, 60);
    expect(o.xml).to.match(/ how="m-s"/).and.to.match(/ opex="s"/).and.not.to.contain('<link');
    expect(await xsdValid([XML_DECLARATION + o.xml])).to.deep.equal([true]);
  });

  it('a military aircraft: uid ICAO-<HEX>, type by emitter category, hae from the geometric altitude, ce from NACp', async () => {
    const o = renderTrack(aircraftTrack(C17, { fetchedAtMs: NOW - 1000, attribution: 'adsb.fake (ODbL)' }), NOW, 120);
    expect(await xsdValid([XML_DECLARATION + o.xml])).to.deep.equal([true]);
    const CoT = await nodeCot();
    const cot = new CoT(o.xml);
    expect(cot.uid()).to.equal('ICAO-AE01C5');
    expect(cot.raw.event._attributes).to.include({ type: 'a-f-A-M-F', how: 'm-g', start: '2026-11-29T06:59:59.500Z', stale: '2026-11-29T07:02:00.000Z' });
    expect(cot.raw.event.point._attributes).to.deep.equal({ lat: '39.5000000', lon: '-77.1000000', hae: (32500 * 0.3048).toFixed(1), ce: '30.0', le: '9999999.0' });
    expect(cot.callsign()).to.equal('RCH123');
    expect(cot.raw.event.detail!.track!._attributes).to.deep.equal({ course: '87.1', speed: (450.2 * 0.514444).toFixed(2) });
    expect(['A7', 'B6', 'A3', null, 'C1'].map(aircraftType)).to.deep.equal(['a-f-A-M-H', 'a-f-A-M-F-Q', 'a-f-A-M-F', 'a-f-A-M', 'a-f-A-M']);
  });

  it('the event shell written around the detail is byte for byte what xmlbuilder2 writes from the tree, escapes included', () => {
    const specs: TrackSpec[] = [
      ...verdicts.map((v) => verdictTrack(v, BASE)!),
      aircraftTrack(C17, { fetchedAtMs: NOW, attribution: 'a & b' }),
      { uid: 'odd & <"uid">\'x\'', type: 'a-u-A', how: 'm-g', opex: 's', startMs: NOW + 5000, lat: -0.5, lon: 179.9999999, hae: 12.345, ce: 9_999_999, le: 3, detail: [] },
      { uid: 'd', type: 'a-u-A', how: 'm-g', startMs: NOW, lat: 0, lon: 0, hae: 0, ce: 0, le: 0, detail: [el('remarks', {}, [{ text: 'x < y & "z"' }])] },
    ];
    for (const spec of specs) expect(renderTrack(spec, NOW, 90).xml).to.equal(renderTrackTree(spec, NOW, 90));
    expect(() => renderTrack({ ...specs[0]!, uid: 'bad\u0001' }, NOW, 90)).to.throw(/character XML cannot carry/);
  });

  it('a relayed ingested event keeps its own uid and times, stamped in _flow-tags_', async () => {
    const limits = app().services.config.cot.limits;
    const CoT = await nodeCot();
    const outs = COT_SAMPLES.map((s) => {
      const event = parseXml(s.xml, limits);
      const uid = event.attrs.find((a) => a.name === 'uid')!.value;
      return { uid, out: relayedEvent({ uid, timeMs: 0, event, storedAt: new Date(NOW).toISOString() }, NOW) };
    });
    expect(await xsdValid(outs.map((o) => XML_DECLARATION + o.out.xml))).to.deep.equal(outs.map(() => true));
    for (const { uid, out } of outs) {
      expect(new CoT(out.xml).uid()).to.equal(uid);
      expect(out.fields.uid).to.equal(uid);
      expect(out.xml).to.contain(`svc="${new Date(NOW).toISOString()}"`);
    }
  });
});
