/**
 * The CoT feature: registers the sample maritime tracks, builds the service (export, ingest
 * store, validation) and its routes, and publishes `services.cot` (read by evidence and readiness).
 * Other features add tracks with `registerTrackSource(s, name, () => Track[])` (see tracks.ts);
 * `services.cot.registerSource` is the same function bound to this app.
 */
import type { Feature } from '../feature.js';
import type { CotStatus, Services } from '../services.js';
import { cotRoutes } from './cot.routes.js';
import { CotService } from './service.js';
import { registerTrackSource, SAMPLE_MARITIME, type TrackSource } from './tracks.js';

export interface CotPublished extends CotStatus {
  registerSource(name: string, source: TrackSource): void;
}

export function cotFeature(s: Services): Feature & { cot: CotService } {
  const cfg = s.config.cot;
  registerTrackSource(s, 'sample-maritime', () => SAMPLE_MARITIME);
  const cot = new CotService(s, cfg);
  const published: CotPublished = {
    tracksTotal: () => cot.tracksTotal(),
    tracksCotValid: () => cot.tracksCotValid(),
    registerSource: (name, source) => registerTrackSource(s, name, source),
  };
  s.cot = published;
  return { routes: cotRoutes(cot, s.config.http.xmlLimitBytes, cfg.limits.maxUidLen), cot };
}
