/**
 * Replicas on one PostgreSQL share each ADS-B refresh and each provider's ban, so N replicas cost
 * the upstreams what one does: several feeds, each with its own connection pool like separate
 * processes, against one real database and one fake upstream that counts its requests.
 */
import { expect } from 'chai';
import pg from 'pg';
import type { AdsbConfig } from '../../src/adsb/adsb.config.js';
import { AdsbFeed, type FeedAnswer } from '../../src/adsb/feed.js';
import { PostgresSharedRefresh } from '../../src/adsb/shared-refresh.js';
import { GOOD_AIRCRAFT, startFakeUpstream, type FakeUpstream } from '../helpers/fake-adsb-upstream.js';
import { createDatabase, usePostgres, type TestDatabase } from '../helpers/postgres.js';
import { adsbTestConfig } from '../helpers/adsb-config.js';

const config = (url: string): AdsbConfig => adsbTestConfig([url], { waitBudgetMs: 5_000, timeoutMs: 2_000, sharedRefresh: 'postgres' });

describe('ADS-B refresh shared by replicas on one PostgreSQL', function () {
  let db: TestDatabase;
  let upstream: FakeUpstream;
  const shares: PostgresSharedRefresh[] = [];
  before(async () => {
    db = await usePostgres();
    upstream = await startFakeUpstream();
  });
  afterEach(async () => {
    await Promise.all(shares.splice(0).map((s) => s.close()));
  });
  after(async () => {
    await upstream?.close();
    await db?.release();
  });

  function replicas(n: number, url: string): AdsbFeed[] {
    return Array.from({ length: n }, (_, k) => {
      const shared = new PostgresSharedRefresh({ url, fetchBudgetMs: 2_000, replicaId: `r${k}` });
      shares.push(shared);
      return new AdsbFeed(config(upstream.url), { userAgent: 'test', shared });
    });
  }

  it('3 replicas x 50 cold concurrent reads make one upstream call, and all serve that one snapshot live', async () => {
    const url = await createDatabase(db, 'adsb_burst');
    upstream.mode = 'slow';
    upstream.delayMs = 300;
    upstream.requests = 0;
    const feeds = replicas(3, url);
    const answers: FeedAnswer[] = await Promise.all(feeds.flatMap((f) => Array.from({ length: 50 }, () => f.read())));
    expect(upstream.requests, 'upstream calls for 150 cold reads on 3 replicas').to.equal(1);
    expect(answers.every((a) => a.live && a.reason === 'fresh'), 'every read live').to.equal(true);
    const fetchedAt = new Set(answers.map((a) => a.snapshot!.fetchedAtMs));
    expect(fetchedAt.size, 'one snapshot for everyone').to.equal(1);
    expect(answers[149]!.snapshot!.aircraft.map((a) => a.hex).sort()).to.deep.equal(GOOD_AIRCRAFT.map((a) => String(a.hex).replace('~', '')).sort());
    expect(feeds.map((f) => f.refreshScope())).to.deep.equal(feeds.map(() => ({ scope: 'POSTGRES', state: 'OK', error: null })));

    // fresh for every replica now: a second round costs no upstream call and no fetch
    await Promise.all(feeds.map((f) => f.read()));
    expect(upstream.requests).to.equal(1);
  });

  it('a 429 with Retry-After seen by one replica keeps every replica away from that provider until then', async () => {
    const url = await createDatabase(db, 'adsb_ban');
    upstream.mode = 'rate_limited';
    upstream.retryAfter = '30';
    upstream.requests = 0;
    const [a, b] = replicas(2, url);
    const asked = Date.now();
    const first = await a!.read();
    expect(first.attempts.map((x) => x.outcome)).to.deep.equal(['rate_limited']);
    expect(upstream.requests).to.equal(1);
    const banUntil = Date.parse(a!.upstreams()[0]!.open_until!);
    // 30 s after the 429 came, which was between the ask and now (a second for rounding)
    expect(banUntil).to.be.within(asked + 29_000, Date.now() + 30_000);

    upstream.mode = 'ok';
    const second = await b!.read();
    expect(upstream.requests, 'replica B did not call the provider that told A to back off').to.equal(1);
    expect(second.live).to.equal(false);
    expect(b!.upstreams()[0]!.breaker).to.equal('open');
    expect(Date.parse(b!.upstreams()[0]!.open_until!)).to.equal(banUntil);
  });

  it('the shared cache unreachable: each replica refreshes alone, says so, and still serves only upstream aircraft', async () => {
    upstream.mode = 'ok';
    upstream.requests = 0;
    const unreachable = new URL(db.url);
    unreachable.port = '1';
    const [a, b] = replicas(2, unreachable.toString());
    const answers = await Promise.all([a!.read(), a!.read(), b!.read()]);
    expect(answers.every((x) => x.live), 'served live from their own refreshes').to.equal(true);
    expect(upstream.requests, 'at most one call per replica (each is still single-flight)').to.equal(2);
    const scope = a!.refreshScope();
    expect(scope.scope).to.equal('POSTGRES');
    expect(scope.state).to.equal('UNAVAILABLE');
    expect(scope.error).to.be.a('string').and.not.equal('');
    expect(answers[2]!.snapshot!.aircraft.length).to.equal(GOOD_AIRCRAFT.length);
  });

  it('stores the cache in an UNLOGGED table (emptied after a database crash, never WAL-logged)', async () => {
    const url = await createDatabase(db, 'adsb_unlogged');
    upstream.mode = 'ok';
    await replicas(1, url)[0]!.read();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const { rows } = await c.query<{ relpersistence: string }>(`SELECT relpersistence FROM pg_class WHERE relname = 'adsb_cache'`);
      expect(rows.map((r) => r.relpersistence)).to.deep.equal(['u']);
      const keys = await c.query<{ key: string }>('SELECT key FROM adsb_cache ORDER BY key');
      expect(keys.rows.map((r) => r.key)).to.deep.equal(['snapshot', 'state']);
    } finally {
      await c.end();
    }
  });
});
