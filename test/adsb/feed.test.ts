import { expect } from 'chai';
import { AdsbFeed } from '../../src/adsb/feed.js';
import { adsbTestConfig } from '../helpers/adsb-config.js';
import { until } from '../helpers/until.js';
import { GOOD_AIRCRAFT, refusedUrl, startFakeUpstream, type FakeMode, type FakeUpstream } from '../helpers/fake-adsb-upstream.js';

const config = adsbTestConfig;

/** Every served aircraft is an upstream entry with the same hex and position. */
function assertSubsetOfUpstream(served: { hex: string; lat: number; lon: number }[], upstream: Record<string, unknown>[]): void {
  for (const a of served) {
    const src = upstream.find((e) => String(e.hex).replace('~', '').toLowerCase() === a.hex);
    expect(src, a.hex).to.not.equal(undefined);
    expect([src!.lat, src!.lon]).to.deep.equal([a.lat, a.lon]);
  }
}

describe('ADS-B feed against a fake upstream', () => {
  let primary: FakeUpstream;
  let secondary: FakeUpstream;
  let clock: number;
  const now = () => clock;
  beforeEach(async () => {
    clock = Date.now();
    primary = await startFakeUpstream();
    secondary = await startFakeUpstream({ aircraft: [GOOD_AIRCRAFT[0]!] });
  });
  afterEach(async () => {
    await primary.close();
    await secondary.close();
  });

  it('serves a good payload live, only positioned military aircraft, and caches it while fresh', async () => {
    const feed = new AdsbFeed(config([primary.url]), { userAgent: 't', now });
    const a = await feed.read();
    expect(a).to.deep.include({ live: true, reason: 'fresh' });
    expect(a.snapshot!.aircraft.map((x) => x.hex)).to.deep.equal(['43c6f1', 'ae0002', 'ae01c5']);
    assertSubsetOfUpstream(a.snapshot!.aircraft, primary.aircraft);
    clock += 9_000;
    await feed.read();
    expect(primary.requests).to.equal(1);
    clock += 2_000;
    await feed.read();
    expect(primary.requests).to.equal(2);
  });

  it('100 concurrent reads cause one upstream request (single flight)', async () => {
    primary.mode = 'slow';
    // budgets far above the 300 ms answer: the single flight, not the timeout, is under test
    const feed = new AdsbFeed(config([primary.url], { timeoutMs: 60_000, waitBudgetMs: 60_000 }), { userAgent: 't', now });
    const answers = await Promise.all(Array.from({ length: 100 }, () => feed.read()));
    expect(primary.requests).to.equal(1);
    expect(answers.every((a) => a.live && a.snapshot!.aircraft.length === 3)).to.equal(true);
  });

  const faults: [FakeMode, string][] = [
    ['error', 'server_error'],
    ['garbage', 'bad_payload'],
    ['html', 'bad_payload'],
    ['truncated', 'truncated'],
    ['hang', 'timeout'],
    ['slow', 'timeout'],
    ['forbidden', 'forbidden'],
    ['rate_limited', 'rate_limited'],
    ['enhance_calm', 'rate_limited'],
  ];
  for (const [mode, outcome] of faults) {
    it(`primary answering "${mode}" → ${outcome}; the secondary serves and says so`, async () => {
      primary.mode = mode;
      primary.delayMs = 60_000; // far past the timeout
      // a timeout a loaded machine's secondary still answers within
      const feed = new AdsbFeed(config([primary.url, secondary.url], { timeoutMs: 3_000, waitBudgetMs: 60_000 }), { userAgent: 't', now });
      const a = await feed.read();
      expect(a.attempts.map((x) => [x.upstream, x.outcome])).to.deep.equal([['p1', outcome], ['p2', 'ok']]);
      expect(a.live).to.equal(true);
      expect(a.snapshot!.provider).to.equal('p2');
      expect(a.snapshot!.aircraft.map((x) => x.hex)).to.deep.equal(['ae01c5']);
    });
  }

  it('a refused connection fails fast and falls through', async () => {
    const feed = new AdsbFeed(config([await refusedUrl(), secondary.url], { timeoutMs: 30_000 }), { userAgent: 't', now });
    const started = performance.now();
    const a = await feed.read();
    expect(performance.now() - started, 'not held for the 30 s timeout').to.be.below(30_000);
    expect(a.attempts.map((x) => x.outcome)).to.deep.equal(['network', 'ok']);
  });

  it('429 with Retry-After: 120 keeps the primary uncalled until then, then one half-open trial', async () => {
    primary.mode = 'rate_limited';
    const feed = new AdsbFeed(config([primary.url, secondary.url], { freshMs: 1_000 }), { userAgent: 't', now });
    await feed.read();
    expect(primary.requests).to.equal(1);
    primary.mode = 'ok';
    for (const step of [2_000, 50_000, 60_000]) {
      clock += step;
      const a = await feed.read();
      expect(a.attempts[0]!.outcome).to.equal('skipped_breaker_open');
    }
    expect(primary.requests).to.equal(1);
    expect(feed.status().providers[0]!.breaker).to.equal('open');
    clock += 9_000; // 121 s after the 429
    expect(feed.status().providers[0]!.breaker).to.equal('half-open');
    const a = await feed.read();
    expect(primary.requests).to.equal(2);
    expect(a.snapshot!.provider).to.equal('p1');
    expect(feed.status().providers[0]!.breaker).to.equal('closed');
  });

  it('three transient failures open the breaker; it half-opens after the cool-down', async () => {
    primary.mode = 'error';
    const feed = new AdsbFeed(config([primary.url]), { userAgent: 't', now });
    for (let i = 0; i < 3; i++) {
      await feed.read();
      clock += 1_000;
    }
    expect(feed.status().providers[0]).to.deep.include({ breaker: 'open', consecutiveFailures: 3 });
    await feed.read();
    expect(primary.requests).to.equal(3);
    clock += 30_000;
    expect(feed.status().providers[0]!.breaker).to.equal('half-open');
    await feed.read(); // the trial fails: open again, cool-down doubled
    expect(primary.requests).to.equal(4);
    expect(feed.upstreams()[0]!.open_until).to.equal(new Date(clock + 60_000).toISOString());
  });

  it('all down: last snapshot with live=false, then nothing after the maximum age; never a snapshot → nothing', async () => {
    const feed = new AdsbFeed(config([primary.url], { staleMaxMs: 60_000 }), { userAgent: 't', now });
    const first = await feed.read();
    primary.mode = 'error';
    clock += 11_000;
    const stale = await feed.read();
    expect(stale).to.deep.include({ live: false, reason: 'upstream_failed_serving_last_snapshot', ageS: 11 });
    expect(stale.snapshot!.aircraft).to.deep.equal(first.snapshot!.aircraft);
    expect(feed.status()).to.deep.include({ live: false, aircraft: 3 });
    clock += 50_000;
    const expired = await feed.read();
    expect(expired).to.deep.include({ live: false, reason: 'snapshot_expired', snapshot: null });
    expect(feed.status().aircraft).to.equal(0);

    const never = new AdsbFeed(config([await refusedUrl()]), { userAgent: 't', now });
    expect(await never.read()).to.deep.include({ live: false, reason: 'no_snapshot', snapshot: null, ageS: null });
  });

  it('an empty upstream answer is live with no aircraft, unlike a failure', async () => {
    primary.mode = 'empty';
    const feed = new AdsbFeed(config([primary.url]), { userAgent: 't', now });
    const a = await feed.read();
    expect(a).to.deep.include({ live: true, reason: 'fresh' });
    expect(a.snapshot!.aircraft).to.deep.equal([]);
  });

  it('a request waits at most the budget; the refresh finishes in the background for the next one', async () => {
    primary.mode = 'slow';
    primary.delayMs = 3_000;
    const feed = new AdsbFeed(config([primary.url], { waitBudgetMs: 50, timeoutMs: 60_000 }), { userAgent: 't', now });
    const started = performance.now();
    const a = await feed.read();
    // a read that waited for the refresh would take the upstream's 3 s
    expect(performance.now() - started).to.be.below(3_000);
    expect(a).to.deep.include({ live: false, reason: 'refresh_pending', snapshot: null });
    // later reads within the budget see the refresh land, without asking again
    await until('the background refresh to land', async () => (await feed.read()).live);
    expect(primary.requests).to.equal(1);
  });

  it('keeps the minimum interval between calls to one provider, and disabled means no calls', async () => {
    primary.mode = 'error';
    const feed = new AdsbFeed(config([primary.url], { minIntervalMs: 5_000 }), { userAgent: 't', now });
    await feed.read();
    clock += 4_000;
    const a = await feed.read();
    expect(a.attempts[0]!.outcome).to.equal('skipped_min_interval');
    expect(primary.requests).to.equal(1);
    const off = new AdsbFeed(config([primary.url], { enabled: false }), { userAgent: 't', now });
    expect(await off.read()).to.deep.include({ live: false, reason: 'disabled' });
    expect(primary.requests).to.equal(1);
  });

  it('a body over the cap is refused', async () => {
    primary.aircraft = Array.from({ length: 20_000 }, (_, i) => ({ hex: `ae${i.toString(16).padStart(4, '0')}`, dbFlags: 1, lat: 1, lon: 1 }));
    const feed = new AdsbFeed(config([primary.url], { maxBodyBytes: 64 * 1024 }), { userAgent: 't', now });
    const a = await feed.read();
    expect(a.attempts[0]!.outcome).to.equal('too_large');
    expect(a.snapshot).to.equal(null);
  });
});
