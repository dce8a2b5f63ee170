/**
 * The evidence feature: evidence claims, readiness sections and elite wiring. Index views serve the
 * last refresh; live views re-check now; refresh recomputes (single-flight, time-bounded, never
 * touching the ledger). Replaces `services.enforcement` so the doctrine shows the claim statuses of
 * the last evidence refresh.
 */
import { definePlugin, type Built, type PluginServices } from '../platform/plugin.js';
import { OBSERVED_CONFIG, observe, type Observed, type ObservedSection } from '../introspection/observed.js';
import type { Enforcement } from '../core/doctrine.js';
import { EvidenceIndex } from './evidence-index.js';
import { claimRoutes, readinessRoutes, wiringRoutes } from './evidence.routes.js';
import { ReadinessIndex } from './readiness-index.js';

export { ID_PATTERN } from './evidence.routes.js';
export { REFRESH_BUDGET_MS, STALE_AFTER_S } from './evidence-index.js';

declare module '../platform/plugin.js' {
  interface Provides {
    /** The claim statuses of the last evidence refresh, which the doctrine reports. */
    evidence: { enforcement(): Enforcement };
  }
}

export const evidencePlugin = definePlugin({
  name: 'evidence',
  needs: ['ledger', 'adsb', 'cot'],
  config: OBSERVED_CONFIG,
  build: (s: PluginServices<ObservedSection>, deps) => buildEvidence(observe(s, deps)),
});

function buildEvidence(s: Observed): Built<'evidence'> {
  const claims = new EvidenceIndex(s);
  const readiness = new ReadinessIndex(s);
  return {
    routes: [...claimRoutes(s, claims), ...readinessRoutes(s, readiness), ...wiringRoutes(s)],
    provides: { enforcement: () => claims.enforcement() },
  };
}
