import { expect } from 'chai';
import type { CotLimits } from '../../src/cot/cot.config.js';
import { validateCot } from '../../src/lib/cot/validate.js';
import { parseXml } from '../../src/lib/cot/xml.js';
import { COT_SAMPLES, xsdValid } from '../helpers/cot-oracle.js';

const LIMITS: CotLimits = { maxDepth: 16, maxElements: 512, maxAttrsPerElement: 64, maxAttributes: 4096, maxDetailChildren: 512, maxNameLen: 128, maxAttrValueLen: 8192, maxNameChars: 65536, maxAttrChars: 65536, maxReferences: 65536, maxTextChars: 16384, maxUidLen: 256 };

function ours(xml: string): boolean {
  try {
    return validateCot(parseXml(xml, LIMITS)).valid;
  } catch {
    return false; // not well-formed: xmllint fails it too
  }
}

const T = '2020-01-01T00:00:00Z';
const P = '<point lat="1" lon="2" hae="3" ce="4" le="5"/>';
/** An event with attribute overrides (null removes one) and a body. */
function ev(over: Record<string, string | null> = {}, body = P): string {
  const attrs: Record<string, string | null> = { version: '2.0', uid: 'u', type: 'a-f-G', how: 'm-g', time: T, start: T, stale: '2020-01-01T00:01:00Z', ...over };
  const list = Object.entries(attrs).filter(([, v]) => v !== null).map(([k, v]) => `${k}="${v}"`).join(' ');
  return `<event ${list}>${body}</event>`;
}
const pt = (a: Record<string, string>) => `<point ${Object.entries({ lat: '1', lon: '2', hae: '3', ce: '4', le: '5', ...a }).map(([k, v]) => `${k}="${v}"`).join(' ')}/>`;

/** Written to probe each rule; the expected answer is whatever xmllint says (asserted below). */
const CASES: Record<string, string> = {
  minimal: ev(),
  detail_first: ev({}, `<detail/>${P}`),
  no_point: ev({}, '<detail/>'),
  two_points: ev({}, P + P),
  two_details: ev({}, `${P}<detail/><detail/>`),
  other_child: ev({}, `${P}<foo/>`),
  text_in_event: ev({}, `${P}hello`),
  cdata_ws_in_event: ev({}, `${P}<![CDATA[ ]]>`),
  comment_and_pi_in_event: ev({}, `<!-- c --><?foo bar?>${P}`),
  ws_in_point: ev({}, '<point lat="1" lon="2" hae="3" ce="4" le="5"> </point>'),
  comment_in_point: ev({}, '<point lat="1" lon="2" hae="3" ce="4" le="5"><!-- c --></point>'),
  child_in_point: ev({}, '<point lat="1" lon="2" hae="3" ce="4" le="5"><x/></point>'),
  text_in_detail: ev({}, `${P}<detail>text</detail>`),
  text_nested_in_detail: ev({}, `${P}<detail><remarks>free text</remarks></detail>`),
  lax_point_in_detail: ev({}, `${P}<detail><point lat="x"/></detail>`),
  lax_deep_point: ev({}, `${P}<detail><foo><bar><point lat="x"/></bar></foo></detail>`),
  lax_good_point: ev({}, `${P}<detail><foo>${P}</foo></detail>`),
  lax_event: ev({}, `${P}<detail><event/></detail>`),
  lax_detail_text: ev({}, `${P}<detail><foo><detail>t</detail></foo></detail>`),
  ns_detail_child: ev({}, `${P}<detail><q:x xmlns:q="urn:q" q:a="1"/></detail>`),
  detail_any_attr: ev({}, `${P}<detail foo="1" bar="2"/>`),
  unknown_event_attr: ev({ foo: '1' }),
  ns_event_attr: ev({ 'xmlns:q': 'urn:q', 'q:a': '1' }),
  xml_lang: ev({ 'xml:lang': 'en' }),
  default_ns_root: ev({ xmlns: 'urn:x' }),
  other_root: `<events>${ev()}</events>`,
  missing_uid: ev({ uid: null }),
  missing_how: ev({ how: null }),
  empty_uid: ev({ uid: '' }),
  uid_spaces: ev({ uid: 'GeoChat.ANDROID-1.All Chat Rooms.x' }),
  opex_access_qos: ev({ opex: 's-demo', access: 'Unclassified', qos: '1-r-c' }),
  qos_bad: ev({ qos: '1-rr-c' }),
  qos_arabic_digit: ev({ qos: '\u0661-r-c' }),
  version_1: ev({ version: '1.1' }),
  version_ws: ev({ version: ' 2.0 ' }),
  version_plus: ev({ version: '+2' }),
  version_trailing_dot: ev({ version: '2.' }),
  version_exp: ev({ version: '2e0' }),
  version_nbsp: ev({ version: '2.0\u00a0' }),
  type_underscore: ev({ type: 'a_f-G' }),
  type_plus: ev({ type: 'a-f-G+' }),
  type_umlaut: ev({ type: 'a-f-G-\u00fc' }),
  type_space: ev({ type: ' a-f-G' }),
  type_suffix: ev({ type: 'a-f-G;free text' }),
  type_two_suffixes: ev({ type: 'a-f-G;a;b' }),
  type_empty_field: ev({ type: 'a--f' }),
  type_tab_ref: ev({ type: 'a-f&#9;G' }),
  how_m: ev({ how: 'm' }),
  how_two_chars: ev({ how: 'mg-s' }),
  how_trailing_dash: ev({ how: 'm-' }),
  time_no_zone: ev({ time: '2020-01-01T00:00:00' }),
  time_offset: ev({ time: '2020-01-01T00:00:00+02:00' }),
  time_ws: ev({ time: ` ${T}` }),
  time_lower_z: ev({ time: '2020-01-01T00:00:00z' }),
  time_24: ev({ time: '2020-01-01T24:00:00Z' }),
  time_2401: ev({ time: '2020-01-01T24:01:00Z' }),
  time_sec60: ev({ time: '2020-01-01T00:00:60Z' }),
  time_feb29_2019: ev({ time: '2019-02-29T00:00:00Z' }),
  time_feb29_2000: ev({ time: '2000-02-29T00:00:00Z' }),
  time_feb29_1900: ev({ time: '1900-02-29T00:00:00Z' }),
  time_apr31: ev({ time: '2020-04-31T00:00:00Z' }),
  time_year0: ev({ time: '0000-01-01T00:00:00Z' }),
  time_year5: ev({ time: '12020-01-01T00:00:00Z' }),
  time_year5_zero: ev({ time: '02020-01-01T00:00:00Z' }),
  time_negative: ev({ time: '-2020-01-01T00:00:00Z' }),
  time_micro: ev({ time: '2020-01-01T00:00:00.123456Z' }),
  time_dot_only: ev({ time: '2020-01-01T00:00:00.Z' }),
  time_tz14: ev({ time: '2020-01-01T00:00:00-14:00' }),
  time_tz1401: ev({ time: '2020-01-01T00:00:00+14:01' }),
  time_date_only: ev({ time: '2020-01-01' }),
  stale_before_start: ev({ stale: '2019-01-01T00:00:00Z' }),
  lat_91: ev({}, pt({ lat: '91' })),
  lat_90_tiny_over: ev({}, pt({ lat: '90.0000000000000001' })),
  lat_minus_90: ev({}, pt({ lat: '-90.000' })),
  lat_exp: ev({}, pt({ lat: '1e1' })),
  lat_nan: ev({}, pt({ lat: 'NaN' })),
  lat_inf: ev({}, pt({ lat: 'INF' })),
  lat_ws: ev({}, pt({ lat: ' 1 ' })),
  lat_dot: ev({}, pt({ lat: '.5' })),
  lat_empty: ev({}, pt({ lat: '' })),
  lon_181: ev({}, pt({ lon: '-180.5' })),
  hae_negative: ev({}, pt({ hae: '-12.5' })),
  hae_sentinel: ev({}, pt({ hae: '9999999.0' })),
  point_extra_attr: ev({}, '<point lat="1" lon="2" hae="3" ce="4" le="5" x="1"/>'),
  point_missing_le: ev({}, '<point lat="1" lon="2" hae="3" ce="4"/>'),
  ns_point: ev({}, '<p:point xmlns:p="urn:p" lat="1" lon="2" hae="3" ce="4" le="5"/>'),
  track_out_of_range: ev({}, `${P}<detail><track course="400" speed="-1"/></detail>`),
};

describe('CoT schema-shape validation (differential against xmllint + the MITRE XSD)', () => {
  it('agrees with xmllint on every real sample: all valid', async () => {
    const oracle = await xsdValid(COT_SAMPLES.map((s) => s.xml));
    expect(oracle.every(Boolean)).to.equal(true);
    for (const s of COT_SAMPLES) expect(ours(s.xml), s.file).to.equal(true);
  });

  it(`agrees with xmllint on ${Object.keys(CASES).length} written cases, valid and invalid`, async () => {
    const names = Object.keys(CASES);
    const oracle = await xsdValid(names.map((n) => CASES[n]!));
    const disagreements = names.filter((n, i) => ours(CASES[n]!) !== oracle[i]).map((n) => `${n}: xmllint says ${oracle[names.indexOf(n)]}`);
    expect(disagreements, disagreements.join('\n')).to.deep.equal([]);
    // the table must exercise both answers, mostly the invalid one
    expect(oracle.filter((v) => !v).length).to.be.greaterThan(40);
    expect(oracle.filter(Boolean).length).to.be.greaterThan(15);
  });

  it('reports errors with a path, a code and the offending value', () => {
    const r = validateCot(parseXml(ev({ type: 'a_f', foo: '1' }, pt({ lat: '91', hae: '1e3' })), LIMITS));
    expect(r.valid).to.equal(false);
    expect(r.errors).to.deep.include({ path: '/event/@type', code: 'pattern_mismatch', message: "'type' must match \\w+(-\\w+)*(;[^;]*)? (XSD \\w: no punctuation, separators or controls)", value: 'a_f' });
    expect(r.errors.map((e) => [e.path, e.code])).to.deep.equal([
      ['/event/@foo', 'unknown_attribute'],
      ['/event/@type', 'pattern_mismatch'],
      ['/event/point/@lat', 'out_of_range'],
      ['/event/point/@hae', 'invalid_decimal'],
    ]);
  });

  it('warns about what the base schema allows: staleness, sentinels, TAK conventions, track ranges', () => {
    const r = validateCot(parseXml(ev({ time: '2020-01-01T00:00:00' }, `${pt({ ce: '9999999.0' })}<detail><__group name="Cyan"/><track course="400" speed="1"/></detail>`), LIMITS));
    expect(r.valid).to.equal(true);
    expect(r.warnings.map((w) => w.code)).to.deep.equal(['no_time_zone', 'stale', 'unknown_value', 'tak_missing_attribute', 'track_course']);
  });
});
