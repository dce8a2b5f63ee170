/** The ADS-B feed's config for tests: fake providers p1, p2… at `urls`, short timeouts, nothing shared. */
import type { AdsbConfig } from '../../src/adsb/adsb.config.js';

export function adsbTestConfig(urls: string[], over: Partial<AdsbConfig> = {}): AdsbConfig {
  return {
    enabled: true,
    providers: urls.map((url, i) => ({ name: `p${i + 1}`, url, attribution: `fake ${i + 1}` })),
    freshMs: 10_000,
    staleMaxMs: 600_000,
    waitBudgetMs: 3_000,
    timeoutMs: 400,
    minIntervalMs: 0,
    maxBodyBytes: 1024 * 1024,
    breakerFailures: 3,
    breakerBaseMs: 30_000,
    breakerMaxMs: 600_000,
    rateLimitDefaultMs: 60_000,
    retryAfterMaxMs: 900_000,
    blockedMs: 900_000,
    maxPositionAgeS: 60,
    userAgent: 'test',
    sharedRefresh: 'local',
    ...over,
  };
}
