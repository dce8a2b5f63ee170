import { expect } from 'chai';
import { parsePrometheus, withTestApp, type TestApp } from '../helpers/app.js';
import { GOOD_AIRCRAFT, startFakeUpstream, type FakeUpstream } from '../helpers/fake-adsb-upstream.js';

describe('GET /api/svc/v1/adsb', () => {
  describe('with the default providers and no network', () => {
    const app = withTestApp();

    it('answers 200 with live=false and no aircraft, well within the wait budget', async () => {
      const started = performance.now();
      const res = await app().http.get('/api/svc/v1/adsb');
      expect(performance.now() - started).to.be.below(app().services.config.adsb.waitBudgetMs + 1000);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.include({ schema: 'svc.adsb/v1', live: false, count: 0, aircraft: [], source: null });
      expect(res.body.reason).to.be.oneOf(['no_snapshot', 'refresh_pending']);
      expect(res.body.upstreams.map((u: { name: string }) => u.name)).to.deep.equal(['adsblol', 'adsbfi', 'airplaneslive']);
      expect(res.body.bbox).to.deep.equal({ lat_min: 24, lat_max: 50, lon_min: -125, lon_max: -60 });
      expect(app().provided.adsb.status()).to.deep.include({ live: false, aircraft: 0, snapshotAgeS: null });
    });
  });

  /** A slow fake upstream and an app reading it; the app is closed before the upstream. */
  function withFakeUpstream(): { app: () => TestApp; fake: () => FakeUpstream } {
    let fake: FakeUpstream | undefined;
    before(async () => {
      fake = await startFakeUpstream({ mode: 'slow', delayMs: 200 });
    });
    const app = withTestApp(() => ({ adsb: { providers: [{ name: 'fake', url: fake!.url }], minIntervalMs: 0, timeoutMs: 1000 } }));
    after(() => fake?.close());
    return { app, fake: () => fake! };
  }

  describe('against a fake upstream on 127.0.0.1, from a cold feed', () => {
    const { app, fake } = withFakeUpstream();

    it('100 concurrent requests cause one upstream request and all get the same live answer', async () => {
      expect(fake().requests, 'a cold feed').to.equal(0);
      const answers = await Promise.all(Array.from({ length: 100 }, () => app().http.get('/api/svc/v1/adsb')));
      expect(fake().requests).to.equal(1);
      for (const res of answers) {
        expect(res.status).to.equal(200);
        expect(res.body).to.deep.include({ live: true, reason: 'fresh', source: 'fake', attribution: 'Aircraft data: fake', count: 2 });
      }
      const body = answers[0]!.body;
      // only upstream aircraft, untouched positions, inside the default (continental US) box
      expect(body.aircraft.map((a: { hex: string }) => a.hex)).to.deep.equal(['ae0002', 'ae01c5']);
      for (const a of body.aircraft) {
        const src = GOOD_AIRCRAFT.find((e) => String(e.hex).replace('~', '') === a.hex)!;
        expect([a.lat, a.lon]).to.deep.equal([src.lat, src.lon]);
        expect(a.provider).to.equal('fake');
      }
      expect(body.upstream_total).to.equal(9);
      expect(body.dropped).to.deep.equal({ no_position: 3, stale_position: 1, not_military: 2, duplicate: 0 });
      expect(answers[0]!.headers['cache-control']).to.match(/^public, max-age=\d+$/);
    });
  });

  describe('against a fake upstream on 127.0.0.1, with a live snapshot', () => {
    const { app, fake } = withFakeUpstream();
    before(async () => {
      expect((await app().http.get('/api/svc/v1/adsb')).body.live).to.equal(true);
    });

    it('filters by box, including a box across the antimeridian', async () => {
      const fetched = fake().requests;
      const europe = await app().http.get('/api/svc/v1/adsb?lat_min=40&lat_max=60&lon_min=-10&lon_max=10');
      expect(europe.body.aircraft.map((a: { hex: string }) => a.hex)).to.deep.equal(['43c6f1']);
      const wrap = await app().http.get('/api/svc/v1/adsb?lat_min=-90&lat_max=90&lon_min=-5&lon_max=-100');
      expect(wrap.body.aircraft.map((a: { hex: string }) => a.hex)).to.deep.equal(['43c6f1', 'ae0002']);
      expect(fake().requests, 'boxes are cut from the one snapshot').to.equal(fetched);
    });

    it('rejects non-numbers, out-of-range, inverted boxes and unknown parameters with 422', async () => {
      const res = await app().http.get('/api/svc/v1/adsb?lat_min=abc&lat_max=91&lon_min=1e999&lon_max=-60&bbox=1');
      expect(res.status).to.equal(422);
      expect(res.body.detail).to.deep.equal([
        { type: 'float_parsing', loc: ['query', 'lat_min'], msg: 'Input should be a valid number, unable to parse string as a number', input: 'abc' },
        { type: 'less_than_equal', loc: ['query', 'lat_max'], msg: 'Input should be less than or equal to 90', input: '91', ctx: { le: 90 } },
        { type: 'float_parsing', loc: ['query', 'lon_min'], msg: 'Input should be a valid number, unable to parse string as a number', input: '1e999' },
        { type: 'extra_forbidden', loc: ['query', 'bbox'], msg: 'Extra inputs are not permitted', input: '1' },
      ]);
      const inverted = await app().http.get('/api/svc/v1/adsb?lat_min=50&lat_max=24');
      expect(inverted.status).to.equal(422);
      expect(inverted.body.detail).to.deep.equal([
        { type: 'value_error', loc: ['query', 'lat_min'], msg: 'Value error, lat_min must be less than or equal to lat_max', input: '50', ctx: { error: {} } },
      ]);
      expect((await app().http.get('/api/svc/v1/adsb?lon_max=180.5')).status).to.equal(422);
    });

    it('shows upstream health in /metrics and /health', async () => {
      const series = parsePrometheus((await app().http.get('/metrics')).text);
      expect(series.get('svc_adsb_upstream_requests_total')).to.deep.include({ labels: { upstream: 'fake', outcome: 'ok' }, value: fake().requests });
      expect(series.get('svc_adsb_breaker_open')).to.deep.equal([{ labels: { upstream: 'fake' }, value: 0 }]);
      expect(series.get('svc_adsb_live')![0]!.value).to.equal(1);
      expect(series.get('svc_adsb_aircraft')![0]!.value).to.equal(3);
      expect(series.get('svc_adsb_snapshot_age_seconds')![0]!.labels).to.deep.equal({ upstream: 'fake' });
      expect(series.get('svc_adsb_snapshot_age_seconds')![0]!.value).to.be.within(0, 10);
      expect(series.get('svc_adsb_upstream_latency_seconds_count')![0]!.value).to.equal(fake().requests);
      const health = await app().http.get('/api/svc/v1/health');
      expect(health.body.checks['adsb:cache-age']).to.deep.include({ status: 'pass', observedUnit: 's' });
    });
  });

  describe('when the only upstream rate-limits', () => {
    let fake: FakeUpstream;
    before(async () => {
      fake = await startFakeUpstream({ mode: 'rate_limited', retryAfter: '120' });
    });
    const app = withTestApp(() => ({ adsb: { providers: [{ name: 'fake', url: fake.url }], minIntervalMs: 0 } }));
    after(() => fake.close());

    it('answers 200 live=false with the attempt, opens the breaker and stops calling', async () => {
      const res = await app().http.get('/api/svc/v1/adsb');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.include({ live: false, reason: 'no_snapshot', aircraft: [] });
      expect(res.body.attempts).to.have.length(1);
      expect(res.body.attempts[0]).to.deep.include({ upstream: 'fake', outcome: 'rate_limited', http_status: 429 });
      expect(res.body.upstreams[0]).to.deep.include({ breaker: 'open', last_status: 429 });
      const again = await app().http.get('/api/svc/v1/adsb');
      expect(again.body.attempts[0].outcome).to.equal('skipped_breaker_open');
      expect(fake.requests).to.equal(1);
      const series = parsePrometheus((await app().http.get('/metrics')).text);
      expect(series.get('svc_adsb_breaker_open')).to.deep.equal([{ labels: { upstream: 'fake' }, value: 1 }]);
      expect(series.has('svc_adsb_snapshot_age_seconds')).to.equal(false);
      expect(series.get('svc_adsb_upstream_requests_total')).to.deep.include({ labels: { upstream: 'fake', outcome: 'rate_limited' }, value: 1 });
      const health = await app().http.get('/api/svc/v1/health');
      expect(health.body.checks['adsb:cache-age']).to.deep.include({ status: 'warn' });
    });
  });
});
