/**
 * The CoT plugin: the sample maritime tracks, the service (export, ingest store, validation) and
 * its routes. It provides the track registry (other plugins add tracks: the simulated flight) and the
 * track counts that evidence and readiness read.
 */
import { definePlugin } from '../platform/plugin.js';
import type { Services } from '../platform/services.js';
import { cotRoutes } from './cot.routes.js';
import { CotService } from './service.js';
import type { PreparedCot } from '../lib/cot/prepare.js';
import { SAMPLE_MARITIME, TrackRegistry } from './tracks.js';

export const cotPlugin = definePlugin({
  name: 'cot',
  needs: [],
  build(s: Services) {
    const cfg = s.config.cot;
    const tracks = new TrackRegistry();
    tracks.register('sample-maritime', () => SAMPLE_MARITIME);
    // parsing, validation and serialisation of an ingested body run in a kernel thread
    const service = new CotService(tracks, cfg, Date.now, async (input) => (await s.pool.run<PreparedCot>({ kind: 'cot', ...input })).value);
    return {
      routes: cotRoutes(service, s.config.http.xmlLimitBytes, cfg.limits.maxUidLen, () => s.routeTable()),
      provides: {
        service,
        status: { tracksTotal: () => service.tracksTotal(), tracksCotValid: () => service.tracksCotValid() },
        tracks,
      },
    };
  },
});
