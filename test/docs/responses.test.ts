/**
 * Every route of the table, called for real, answers what its `response` schema declares (the
 * schema /openapi.json publishes), in the states that change a body's shape: an empty and a filled
 * ledger, verified and rejected receipts, valid and invalid CoT, live and failed ADS-B. The test
 * app's checker validates each response; here the mismatches are taken and asserted per test so
 * the failure names every route that drifted. The checker itself is tested against a wrong schema.
 */
import { expect } from 'chai';
import Joi from 'joi';
import { withTestApp, type TestApp } from '../helpers/app.js';
import { adsbTestConfig } from '../helpers/adsb-config.js';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-adsb-upstream.js';
import { checkResponse, describeMismatches, MISMATCH_STATUS, takeResponseMismatches } from '../helpers/response-check.js';
import type { RouteDef } from '../../src/http/route.js';

const COT = (uid: string) =>
  `<event version="2.0" uid="${uid}" type="a-u-A-M-F-Q" how="m-g" time="2026-01-01T00:00:00Z" start="2026-01-01T00:00:00Z" stale="2026-01-01T00:05:00Z">` +
  `<point lat="36.2" lon="-115.2" hae="1200.5" ce="10" le="5"/><detail><contact callsign="RAVEN"/><track course="90.5" speed="42.1"/></detail></event>`;

const FRAME = { track_id: 'resp-1', source: 'ADS-B', lat: 36.2, lon: -115.1, alt_m: 120, speed_mps: 12, heading_deg: 359.5, rssi_dbm: -60, id_authenticated: true, timestamp_skew_s: 0.1, n_observations: 40, ts_utc: '2026-01-01T00:00:00Z' };

function expectNoMismatch(): void {
  const found = takeResponseMismatches();
  expect(found, describeMismatches(found)).to.deep.equal([]);
}

/** GET every route without path parameters (kernels at their defaults; `request` routes with a label). */
async function getEveryStaticRoute(t: TestApp, filter: (r: RouteDef) => boolean): Promise<number> {
  let n = 0;
  for (const r of t.routes) {
    if (r.method !== 'GET' || /[:*]/.test(r.path) || r.produces === 'text/event-stream' || !filter(r)) continue;
    const keys = (r.query?.describe().keys ?? {}) as Record<string, { flags?: { presence?: string } }>;
    // a route that needs an id is asked with a real one below
    if (Object.entries(keys).some(([k, d]) => k !== 'request' && d.flags?.presence === 'required')) continue;
    const needsRequest = Boolean(keys.request);
    const res = await t.http.get(needsRequest ? `${r.path}?request=label` : r.path);
    expect(res.status, r.path).to.be.oneOf([200, 503]);
    n++;
  }
  return n;
}

/** An app whose ADS-B feed reads a fake upstream (live ADS-B bodies); the app closes first. */
function withUpstreamApp(): () => TestApp {
  let upstream: FakeUpstream | undefined;
  before(async () => {
    upstream = await startFakeUpstream();
  });
  const app = withTestApp(() => ({ adsb: adsbTestConfig([`${upstream!.url}/v2/mil`]) }));
  after(() => upstream?.close());
  return app;
}

const ingestCot = (t: TestApp, xml: string) => t.http.post('/api/svc/v1/cot/ingest').set('content-type', 'application/xml').send(xml);

describe('every route answers its declared response schema, on an empty ledger', function () {
  this.timeout(120_000);
  const app = withUpstreamApp();

  it('with an empty ledger', async () => {
    const t = app();
    expect(t.provided.ledger.status.size()).to.equal(0);
    expect(await getEveryStaticRoute(t, (r) => !r.kernel)).to.be.above(50);
    expect((await t.http.get('/api/svc/khipu/dag?request=x')).status).to.equal(200);
    expectNoMismatch();
  });
});

describe('every route answers its declared response schema', function () {
  this.timeout(120_000);
  const app = withUpstreamApp();

  it('writes: a verdict, an edge batch, receipts verified and rejected, CoT valid and invalid', async () => {
    const t = app();
    const v = await t.http.post('/api/svc/v1/verdict').send(FRAME);
    expect(v.status).to.equal(200);
    await t.http.post('/api/svc/v1/verdict').send({ track_id: 'bare', lat: 10, lon: 10 });
    expect((await t.http.post('/api/svc/v1/edge/3d').send({ frames: [FRAME, { track_id: 'b2', lat: 36.1, lon: -115.2 }] })).status).to.equal(200);
    expect((await t.http.post('/khipu/verify').send(v.body.receipt.dsse)).body.verified).to.equal(true);
    expect((await t.http.post('/khipu/verify').send({ dsse: v.body.receipt.dsse })).body.verified).to.equal(true);
    expect((await t.http.post('/khipu/verify').send({ ...v.body.receipt.dsse, payload: 'AAAA' })).body.verified).to.equal(false);
    expect((await t.http.post('/khipu/verify').send({ ...v.body.receipt.dsse, payloadType: 'text/plain' })).body.verified).to.equal(false);
    expect((await ingestCot(t, COT('resp-cot-1'))).body.accepted).to.equal(true);
    expect((await ingestCot(t, COT('resp-cot-1'))).body.store_result).to.equal('not_newer_than_stored');
    expectNoMismatch();
  });

  it('with a filled ledger, and every parameterised route with real ids', async () => {
    const t = app();
    // what the ids below name: a receipt and an ingested CoT track (whatever ran before)
    expect((await t.http.post('/api/svc/v1/verdict').send(FRAME)).status).to.equal(200);
    expect((await ingestCot(t, COT('resp-cot-1'))).body.accepted).to.equal(true);
    await getEveryStaticRoute(t, (r) => !r.kernel);
    const get = async (path: string) => expect((await t.http.get(path)).status, path).to.equal(200);
    await get('/api/svc/v1/receipt/export?index=0');
    await get('/api/svc/v1/receipt/proof?index=0');
    await get('/api/svc/v1/ledger/tile/0/000.p/1');
    await get('/api/svc/v1/ledger/tile/entries/000.p/1');
    await get(`/api/svc/khipu/dag?request=${encodeURIComponent(JSON.stringify({ node: 0, proof: true, since: 1 }))}`);
    await get('/api/svc/v1/elite/wiring/health?probe=true');
    await get('/api/svc/v1/adsb?lat_min=-90&lat_max=90&lon_min=170&lon_max=-170');
    const index = (await t.http.get('/api/svc/v1/evidence/research')).body as { claims: { live_url: string; sources_url: string }[] };
    for (const c of index.claims) {
      await get(c.live_url);
      await get(c.sources_url);
    }
    const readiness = (await t.http.get('/api/svc/v1/readiness')).body as { sections: { live_url: string }[] };
    for (const s of readiness.sections) await get(s.live_url);
    await get('/api/svc/v1/cot/export/mar-001');
    await get('/api/svc/v1/cot/export/resp-cot-1');
    const manifest = (await t.http.get('/api/svc/v1/assets/manifest')).body as { assets: { key: string; path: string; url: string }[] };
    for (const a of manifest.assets) {
      await get(a.url);
      await get(a.path);
    }
    for (const f of ['swagger-ui.css', 'swagger-ui-bundle.js', 'init.js']) await get(`/docs/assets/${f}`);
    expectNoMismatch();
  });

  it('every kernel at its defaults, and each request kernel with a JSON request', async () => {
    const t = app();
    expect(await getEveryStaticRoute(t, (r) => r.kernel !== undefined)).to.be.above(60);
    for (const r of t.routes.filter((x) => x.kernel && x.query?.describe().keys?.request)) {
      expect((await t.http.get(`${r.path}?request=${encodeURIComponent('{"seed":7}')}`)).status, r.path).to.equal(200);
    }
    expectNoMismatch();
  });

  it('a response that does not match is recorded, and the request that got it receives a 500 naming it', async () => {
    const t = app();
    const route = t.routes.find((r) => r.path === '/api/svc/v1/doctrine')!;
    const declared = route.response;
    route.response = Joi.object({ schema: Joi.string().valid('something else') });
    try {
      const res = await t.http.get('/api/svc/v1/doctrine');
      expect(res.status).to.equal(MISMATCH_STATUS);
      expect(res.body.detail).to.match(/^response does not match its route's declared schema: GET \/api\/svc\/v1\/doctrine → 200/);
    } finally {
      route.response = declared;
    }
    const found = takeResponseMismatches();
    expect(found.map((m) => [m.request, m.route, m.status])).to.deep.equal([['GET /api/svc/v1/doctrine', 'GET /api/svc/v1/doctrine', 200]]);
    expect(found[0]!.problems.join()).to.match(/allowed values|additional/);
    await t.http.get('/api/svc/v1/doctrine');
    expectNoMismatch();
  });

  it('nested fields are checked too: a fleet vessel with a wrong flag, position or certificate count is a mismatch', async () => {
    const t = app();
    const route = t.routes.find((r) => r.path === '/api/svc/v1/fleet/vessels')!;
    const body = (await t.http.get(route.path).expect(200)).body as { items: Record<string, Record<string, unknown>>[] };
    expect(checkResponse(route, 'application/json', body)).to.deep.equal([]);
    const broken = (change: (v: Record<string, Record<string, unknown>>) => void) => {
      const copy = structuredClone(body);
      change(copy.items[0]!);
      return checkResponse(route, 'application/json', copy).join();
    };
    expect(broken((v) => (v.flag!.iso2 = 7))).to.match(/flag\/iso2/);
    expect(broken((v) => (v.position!.kind = 'guessed'))).to.match(/position\/kind/);
    expect(broken((v) => delete v.certificate_summary!.overdue)).to.match(/overdue/);
    expect(broken((v) => (v.psc_36m!.extra = 1))).to.match(/additional/);
  });

  it('the checker rejects a body its schema does not describe, and a media type the route does not declare', () => {
    const t = app();
    const route = t.routes.find((r) => r.path === '/api/svc/v1/health')!;
    const wrong = { ...route, response: Joi.object({ status: Joi.string().valid('pass').required() }) };
    expect(checkResponse(wrong, 'application/json', { status: 'pass' })).to.deep.equal([]);
    expect(checkResponse(wrong, 'application/json', { status: 'pass', extra: 1 }).join()).to.match(/additional/);
    expect(checkResponse(wrong, 'application/json', { status: 'fail' }).join()).to.match(/allowed values/);
    expect(checkResponse(wrong, 'application/json', '{"status":').join()).to.match(/not JSON/);
    expect(checkResponse(wrong, 'text/html', '<p>').join()).to.match(/media type text\/html/);
  });
});
