/**
 * Upstream health on /metrics, so a provider that fails or bans us shows before users notice.
 * Labels are the configured provider names and the fixed outcome set, so cardinality is bounded by
 * config. Gauges are read at scrape time.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { AdsbFeed } from './feed.js';
import type { AttemptResult } from './upstream.js';

export function adsbMetrics(registry: Registry, feed: () => AdsbFeed): (provider: string, r: AttemptResult) => void {
  const registers = [registry];
  const requests = new Counter({ name: 'svc_adsb_upstream_requests_total', help: 'ADS-B upstream calls by provider and outcome', labelNames: ['upstream', 'outcome'], registers });
  const latency = new Histogram({
    name: 'svc_adsb_upstream_latency_seconds',
    help: 'ADS-B upstream call duration (connect to end of body)',
    labelNames: ['upstream'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  new Gauge({
    name: 'svc_adsb_breaker_open',
    help: 'Circuit breaker per upstream: 1 open (no calls), 0.5 half-open (next call is a trial), 0 closed',
    labelNames: ['upstream'],
    registers,
    collect() {
      for (const p of feed().status().providers) this.set({ upstream: p.name }, p.breaker === 'open' ? 1 : p.breaker === 'half-open' ? 0.5 : 0);
    },
  });
  new Gauge({
    name: 'svc_adsb_snapshot_age_seconds',
    help: 'Age of the cached ADS-B snapshot, labelled by the provider it came from; no sample before the first successful fetch',
    labelNames: ['upstream'],
    registers,
    collect() {
      // labelled so that "no snapshot" is an absent sample, not a made-up number
      this.reset();
      const f = feed();
      const age = f.ageMs();
      if (age !== null && f.snapshotProvider !== null) this.set({ upstream: f.snapshotProvider }, age / 1000);
    },
  });
  new Gauge({
    name: 'svc_adsb_live',
    help: '1 when the ADS-B snapshot was fetched successfully within the freshness window',
    registers,
    collect() {
      this.set(feed().status().live ? 1 : 0);
    },
  });
  new Gauge({
    name: 'svc_adsb_aircraft',
    help: 'Aircraft in the servable ADS-B snapshot (global, before bounding-box filtering)',
    registers,
    collect() {
      this.set(feed().status().aircraft);
    },
  });
  return (provider, r) => {
    requests.inc({ upstream: provider, outcome: r.outcome });
    latency.observe({ upstream: provider }, r.ms / 1000);
  };
}
