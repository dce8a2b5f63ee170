/**
 * The ADS-B feature: the cached feed, its route, its metrics, a passive health check and
 * the feed's status (needed by evidence, readiness and the security views). Nothing is fetched at start: the first
 * request does it, so a service with no network starts as fast as one with.
 */
import { hostname } from 'node:os';
import { projectJson } from '../config/load.js';
import { definePlugin, type Built, type PluginServices } from '../platform/plugin.js';
import { adsbMetrics } from './adsb.metrics.js';
import { adsbRoutes } from './adsb.routes.js';
import { AdsbFeed, type AdsbStatus } from './feed.js';
import { PostgresSharedRefresh, type SharedRefresh } from './shared-refresh.js';

function defaultUserAgent(): string {
  const pkg = projectJson<{ name: string; version: string }>('package.json');
  return `${pkg.name}/${pkg.version}`;
}

declare module '../platform/plugin.js' {
  interface Provides {
    /** `status` is read at request time (tests may replace it to simulate an upstream outage). */
    adsb: { feed: AdsbFeed; status: () => AdsbStatus };
  }
}

/** Its own slice, and the ledger's: postgres mode shares each refresh through the ledger's database. */
type AdsbServices = PluginServices<'adsb' | 'ledger'>;

export const adsbPlugin = definePlugin({ name: 'adsb', needs: [], config: ['adsb', 'ledger'], build: buildAdsb });

function buildAdsb(s: AdsbServices): Built<'adsb'> {
  const cfg = s.config.adsb;
  // the gauges read the feed at scrape time; the feed reports each upstream call to the counters
  const holder: { feed?: AdsbFeed } = {};
  const onAttempt = adsbMetrics(s.metrics.registry, () => holder.feed!);
  const shared = sharedRefresh(s);
  const published = (holder.feed = new AdsbFeed(cfg, { userAgent: cfg.userAgent ?? defaultUserAgent(), onAttempt, shared, log: s.log }));

  s.health.register('adsb:cache-age', () => {
    const st = published.status();
    const failing = st.providers.some((p) => p.consecutiveFailures > 0) && !st.live;
    // upstream trouble degrades the feed, not the service: warn, never fail
    return {
      componentType: 'component',
      observedValue: st.snapshotAgeS,
      observedUnit: 's',
      status: failing ? 'warn' : 'pass',
      output: !cfg.enabled
        ? 'disabled by configuration'
        : st.snapshotAgeS === null
          ? failing
            ? 'no snapshot: every upstream failed'
            : 'no snapshot yet (fetched on first request)'
          : `${st.live ? 'live' : 'not live'}, ${st.aircraft} aircraft${refreshNote(published)}`,
    };
  });

  return { routes: adsbRoutes(published, cfg.freshMs), provides: { feed: published, status: () => published.status() }, close: () => shared?.close() };
}

/** postgres mode shares each refresh among the replicas on the ledger's database (shared-refresh.ts). */
function sharedRefresh(s: AdsbServices): SharedRefresh | undefined {
  const { adsb, ledger } = s.config;
  const wanted = adsb.sharedRefresh === 'postgres' || (adsb.sharedRefresh === 'auto' && ledger.mode === 'postgres');
  if (!wanted || !adsb.enabled || !ledger.databaseUrl) return undefined;
  return new PostgresSharedRefresh({ url: ledger.databaseUrl, fetchBudgetMs: adsb.timeoutMs * adsb.providers.length, replicaId: `${hostname()}:${process.pid}` });
}

function refreshNote(feed: AdsbFeed): string {
  const r = feed.refreshScope();
  return r.scope === 'LOCAL' ? '' : r.state === 'UNAVAILABLE' ? `; shared refresh unavailable (${r.error}), refreshing alone` : '; refresh shared with the replicas';
}
