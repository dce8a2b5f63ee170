import { expect } from 'chai';
import { withTestApp } from '../helpers/app.js';
import { COT_SAMPLES, nodeCot, xsdValid } from '../helpers/cot-oracle.js';

const INGEST = '/api/svc/v1/cot/ingest';
const T = '2026-01-01T00:00:00Z';
const event = (uid: string, time = T, extra = '') =>
  `<event version="2.0" uid="${uid}" type="a-u-A-M-F-Q" how="m-g" time="${time}" start="${time}" stale="2026-01-01T00:05:00Z"><point lat="36.2" lon="-115.2" hae="1200.5" ce="10" le="5"/><detail><contact callsign="RAVEN"/><track course="90.5" speed="42.1"/>${extra}</detail></event>`;

describe('POST /api/svc/v1/cot/ingest', () => {
  const app = withTestApp();

  const post = (body: string, type = 'application/xml') => app().http.post(INGEST).set('content-type', type).send(body);
  const total = async () => (await app().http.get('/api/svc/v1/cot/status')).body.live.tracks_total as number;

  it('ingests every real sample under each accepted content type, answering with the parsed event and its validation', async () => {
    const types = ['application/xml', 'text/xml', 'application/cot+xml; charset=utf-8'];
    const before = await total();
    for (const [i, s] of COT_SAMPLES.entries()) {
      const res = await post(s.xml, types[i % types.length]);
      expect(res.status, s.file).to.equal(200);
      expect(res.body, s.file).to.include({ accepted: true, stored: true, store_result: 'new', is_stale: true });
      expect(res.body.validation.valid).to.equal(true);
      expect(res.body.validation.warnings.map((w: { code: string }) => w.code)).to.include('stale');
      expect(res.body.event.attributes.uid).to.equal(res.body.uid);
    }
    const atak = await post(COT_SAMPLES.find((s) => s.file.startsWith('fts-atak'))!.xml);
    expect(atak.body).to.deep.include({ stored: false, store_result: 'not_newer_than_stored', uid: 'ANDROID-R52JB0CDC4E', callsign: 'corvTab', type: 'a-f-G-U-C', how: 'h-e' });
    expect(atak.body.point).to.deep.equal({ lat: -0.004287826538927404, lon: -0.0076812372022802555, hae: 9999999, ce: 9999999, le: 9999999 });
    expect(atak.body.detail_children).to.deep.equal(['takv', 'contact', 'uid', 'precisionlocation', '__group', 'status', 'track']);
    const hostile = await post(COT_SAMPLES.find((s) => s.file === 'fts-marker-a-h-G.xml')!.xml);
    expect(hostile.body.callsign).to.match(/&/); // &amp; decoded
    // one more track per ingested sample
    expect(await total()).to.equal(before + COT_SAMPLES.length);
  });

  it('a uid of 256 emoji (512 UTF-16 code units) is 256 characters: ingested and exported by its track id; 257 are refused', async () => {
    const uid = '\u{1F6F8}'.repeat(256);
    const res = await post(event(uid));
    expect(res.status).to.equal(200);
    expect(res.body.uid).to.equal(uid);
    const one = await app().http.get(`/api/svc/v1/cot/export/${encodeURIComponent(uid)}`);
    expect(one.status).to.equal(200);
    expect(one.text).to.include(`uid="${uid}"`);
    const over = await post(event(`${uid}\u{1F6F8}`));
    expect(over.status).to.equal(422);
    expect(over.body.detail[0]).to.deep.include({ type: 'xml_limit_exceeded', msg: 'uid is longer than 256 characters' });
    expect((await app().http.get(`/api/svc/v1/cot/export/${encodeURIComponent(`${uid}\u{1F6F8}`)}`)).body.detail[0]).to.include({ type: 'string_too_long' });
  });

  it('an ingested event round-trips through the export (xmllint-valid, node-cot parses it the same)', async () => {
    const uid = 'round-trip.1 with space';
    const res = await post(event(uid, T, '<remarks source="ops">a &amp; b</remarks>'));
    expect(res.status).to.equal(200);
    const one = await app().http.get(res.body.export_path);
    expect(one.status).to.equal(200);
    expect(one.headers['content-type']).to.equal('application/xml; charset=utf-8');
    expect(await xsdValid([one.text])).to.deep.equal([true]);
    const CoT = await nodeCot();
    const parsed = new CoT(one.text);
    expect(parsed.uid()).to.equal(uid);
    expect(parsed.callsign()).to.equal('RAVEN');
    expect(parsed.raw.event._attributes).to.include({ type: 'a-u-A-M-F-Q', how: 'm-g', time: T, start: T, stale: '2026-01-01T00:05:00Z' });
    expect(parsed.raw.event.point._attributes).to.deep.equal({ lat: '36.2', lon: '-115.2', hae: '1200.5', ce: '10', le: '5' });
    expect(parsed.raw.event.detail!.track!._attributes).to.deep.equal({ course: '90.5', speed: '42.1' });
    expect((parsed.raw.event.detail!.remarks as unknown as { _text: string })._text).to.equal('a & b');
    const all = await app().http.get('/api/svc/v1/cot/export');
    expect(all.text).to.include(`uid="${uid}"`);
    // re-ingesting our own export of it is the same event: acknowledged, not stored again
    const again = await post(one.text);
    expect(again.body).to.include({ stored: false, store_result: 'not_newer_than_stored' });
    // a newer time replaces it
    const newer = await post(event(uid, '2026-01-01T00:01:00Z'));
    expect(newer.body).to.include({ stored: true, store_result: 'replaced_older' });
  });

  it('refuses XXE, billion laughs, bombs, two roots and broken XML with 422 and stores nothing', async () => {
    const before = await total();
    const xxe = await post(`<?xml version="1.0"?><!DOCTYPE event [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${event('xxe', T, '<remarks>&xxe;</remarks>')}`);
    expect(xxe.status).to.equal(422);
    expect(xxe.body.detail[0]).to.deep.include({ type: 'xml_doctype_forbidden', loc: ['body'], input: null });
    expect(xxe.text).to.not.match(/root:/);
    const laughs = [`<!DOCTYPE lolz [<!ENTITY lol "lol">`, ...Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i || ''};`.repeat(10)}">`), ']>', '<lolz>&lol9;</lolz>'].join('');
    const bomb = await post(laughs);
    expect(bomb.status).to.equal(422);
    expect(bomb.body.detail[0].type).to.equal('xml_doctype_forbidden');
    const html = await post(`<event>&nbsp;</event>`);
    expect(html.body.detail[0].type).to.equal('xml_invalid');
    const cases: [string, string, string][] = [
      ['two roots', event('two-a') + event('two-b'), 'xml_invalid'],
      ['deep nesting', event('deep', T, '<a>'.repeat(40) + '</a>'.repeat(40)), 'xml_limit_exceeded'],
      ['many elements', event('many', T, '<x/>'.repeat(600)), 'xml_limit_exceeded'],
      ['long attribute', event('long', T, `<x v="${'a'.repeat(9000)}"/>`), 'xml_limit_exceeded'],
      ['many attributes', event('attrs', T, `<x ${Array.from({ length: 70 }, (_, i) => `a${i}="1"`).join(' ')}/>`), 'xml_limit_exceeded'],
      ['duplicate attribute', event('dup', T, '<x a="1" a="2"/>'), 'xml_invalid'],
      ['NUL character', event('nul', T, '<x a="&#0;"/>'), 'xml_invalid'],
      ['unclosed', event('open').slice(0, -8), 'xml_invalid'],
      ['declaration not first', `  \n<?xml version="1.0"?>${event('decl')}`, 'xml_invalid'],
      ['schema-invalid', event('bad').replace('lat="36.2"', 'lat="91"'), 'cot_invalid'],
      ['reserved uid', event('svc-track-mar-001'), 'cot_uid_reserved'],
    ];
    for (const [name, body, type] of cases) {
      const res = await post(body);
      expect(res.status, name).to.equal(422);
      expect(res.body.detail[0].type, name).to.equal(type);
      expect(res.body.detail[0].loc[0], name).to.equal('body');
    }
    const invalid = await post(event('bad').replace('lat="36.2"', 'lat="91"'));
    expect(invalid.body.detail).to.deep.equal([
      { type: 'cot_invalid', loc: ['body', 'event', 'point', '@lat'], msg: "'lat' must be within [-90, 90]", input: '91', ctx: { code: 'out_of_range', path: '/event/point/@lat' } },
    ]);
    const deep = await post(event('deep', T, '<a>'.repeat(40) + '</a>'.repeat(40)));
    expect(deep.body.detail[0].ctx).to.deep.include({ limit: 'maxDepth', max: 16 });
    expect(await total()).to.equal(before);
  });

  it('413 above 64 KiB (5 MiB too), 415 for other or missing types and non-UTF-8 encodings; nothing stored', async () => {
    const before = await total();
    const padded = event('big', T, `<remarks>${'x'.repeat(70 * 1024)}</remarks>`);
    expect((await post(padded)).status).to.equal(413);
    const huge = await post(`<event>${'x'.repeat(5 * 1024 * 1024)}</event>`);
    expect(huge.status).to.equal(413);
    expect(huge.body).to.deep.equal({ detail: 'Request body too large: the limit is 65536 bytes' });
    for (const type of ['application/json', 'text/plain', 'application/x-www-form-urlencoded']) {
      const res = await post(event('ct'), type);
      expect(res.status, type).to.equal(415);
    }
    const octets = await app().http.post(INGEST).send(Buffer.from(event('octets')));
    expect(octets.status).to.equal(415);
    // fetch sends a byte body with no Content-Type at all
    const none = await fetch(`${app().baseUrl}${INGEST}`, { method: 'POST', body: new TextEncoder().encode(event('none')) });
    expect(none.status).to.equal(415);
    expect((await post(event('latin'), 'application/xml; charset=iso-8859-1')).status).to.equal(415);
    const declared = await post(`<?xml version="1.0" encoding="ISO-8859-1"?>${event('latin')}`);
    expect(declared.status).to.equal(415);
    expect((await post('', 'application/xml')).status).to.equal(422);
    expect(await total()).to.equal(before);
  });

  it('accepts a UTF-8 byte-order mark and bodies generated by node-cot', async () => {
    expect((await post(`\ufeff${event('bom')}`)).status).to.equal(200);
    const CoT = (await nodeCot()) as unknown as { from_geojson(f: unknown): { to_xml(): string } };
    const now = new Date();
    const xml = CoT.from_geojson({
      type: 'Feature',
      id: 'node-cot-1',
      properties: { type: 'a-f-A-M-F-Q', how: 'm-g', callsign: 'NC1', time: now.toISOString(), start: now.toISOString(), stale: new Date(now.getTime() + 60_000).toISOString(), course: 45, speed: 12 },
      geometry: { type: 'Point', coordinates: [-115.2, 36.2, 100] },
    }).to_xml();
    const res = await post(xml);
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ uid: 'node-cot-1', callsign: 'NC1', is_stale: false });
  });
});
