/**
 * The verdicts feature: the verdict service (evaluate, sign in the pool, append through the
 * ledger's writer) and its routes. The ledger feature owns the chain; this one decides what goes
 * into it. The stream and the mesh read verdicts through `VerdictCore`, and the ledger from the
 * ledger plugin itself.
 */
import { definePlugin, type PluginServices } from '../platform/plugin.js';
import { VerdictService } from './verdict-service.js';
import { verdictRoutes } from './verdicts.routes.js';

/** What this plugin owns and provides: the verdict service (not a copy of the ledger's provides). */
export interface VerdictCore {
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
  // the no-fly zones are the ledger's; Retry-After is the pool's; key URLs need the public base URL
  config: ['ledger', 'pool', 'server'],
  build(s: PluginServices<'ledger' | 'pool' | 'server'>, { ledger: core }) {
    const cfg = s.config.ledger;
    const verdicts = new VerdictService(core.ledger, core.writer, core.signer, core.key.keyid, cfg.noFlyZones, s.config.pool.retryAfterS);
    return { routes: verdictRoutes(verdicts, core, s.config.server.publicBaseUrl), provides: { verdicts } };
  },
});
