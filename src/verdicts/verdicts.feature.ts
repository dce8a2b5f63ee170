/**
 * The verdicts feature: the verdict service (evaluate, sign in the pool, append through the
 * ledger's writer) and its routes. The ledger feature owns the chain; this one decides what goes
 * into it. The stream and the mesh read verdicts through `VerdictCore`.
 */
import { definePlugin } from '../platform/plugin.js';
import type { LedgerCore } from '../ledger/ledger.feature.js';
import type { Services } from '../platform/services.js';
import { VerdictService } from './verdict-service.js';
import { verdictRoutes } from './verdicts.routes.js';

/** The ledger's internals plus the verdict service: what the stream and the mesh build on. */
export interface VerdictCore extends LedgerCore {
  verdicts: VerdictService;
}

declare module '../platform/plugin.js' {
  interface Provides {
    verdicts: VerdictCore;
  }
}

export const verdictsPlugin = definePlugin({
  name: 'verdicts',
  needs: ['ledger'],
  build(s: Services, { ledger: core }) {
    const cfg = s.config.ledger;
    const verdicts = new VerdictService(core.ledger, core.writer, core.signer, core.key.keyid, cfg.noFlyZones, s.config.pool.retryAfterS);
    return { routes: verdictRoutes(verdicts, core, s.config.server.publicBaseUrl), provides: { ...core, verdicts } };
  },
});
