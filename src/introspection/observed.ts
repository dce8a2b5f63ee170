/**
 * What the evidence and security views read of the running app: the platform, plus the status the
 * ledger, ADS-B and CoT plugins provide. Built by each of those plugins from its declared needs.
 */
import type { Deps, PluginServices } from '../platform/plugin.js';
import type { AdsbStatus } from '../adsb/feed.js';
import type { CotStatus } from '../cot/status.js';
import type { LedgerStatus } from '../ledger/status.js';

/** The config sections the views read (limits, queue bound, log level, env, ledger mode, scene size): the plugins that observe declare them. */
export const OBSERVED_CONFIG = ['env', 'http', 'ledger', 'log', 'pool', 'stream'] as const;
export type ObservedSection = (typeof OBSERVED_CONFIG)[number];

export interface Observed extends PluginServices<ObservedSection> {
  readonly ledger: LedgerStatus;
  /** Read at call time: the feed's state now. */
  adsb(): AdsbStatus;
  readonly cot: CotStatus;
  /** The last active probe of each ADS-B upstream, by URL (probes.ts spaces them out). */
  readonly adsbProbes: Map<string, { at: number; result: Record<string, unknown> }>;
}

/** Status is read through `deps` at each use, so what a view reports is what the plugin provides now. */
export function observe(s: PluginServices<ObservedSection>, deps: Deps<'ledger' | 'adsb' | 'cot'>): Observed {
  const o = { ...s, adsb: () => deps.adsb.status(), adsbProbes: new Map() };
  return Object.defineProperties(o, {
    ledger: { get: () => deps.ledger.status, enumerable: true },
    cot: { get: () => deps.cot.status, enumerable: true },
  }) as Observed;
}
