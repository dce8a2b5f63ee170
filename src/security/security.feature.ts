/**
 * The security feature: attack-surface graph, posture drift, zero-trust mesh and topology health
 * (domain-data note 2), all computed at request time from the running service's real state.
 */
import type { Feature } from '../feature.js';
import { defineRoute } from '../http/route.js';
import type { Services } from '../services.js';
import { closeEventLoopHistogram, eventLoopHistogram } from '../evidence/wiring.js';
import { attackSurface, prepareAttackSurface } from './attack-surface.js';
import { API } from './inventory.js';
import { postureDrift, preparePosture } from './posture.js';
import { topologyHealth } from './topology.js';
import { zeroTrustMesh } from './zerotrust.js';

export function securityFeature(s: Services): Feature {
  // started now so topology health has event-loop samples since start (reset once the app is built)
  const histogram = eventLoopHistogram(s);
  const view = (path: string, summary: string, build: (s: Services) => Promise<Record<string, unknown>>) =>
    defineRoute({
      method: 'GET',
      path: `${API}${path}`,
      summary,
      tag: 'security',
      async handler({ ctx }) {
        ctx.set('Cache-Control', 'no-store');
        return build(s);
      },
    });
  return {
    routes: [
      view('/attack-surface/graph', 'Attack-surface graph of the running service: entry points from its route table, components, assets, upstream hosts, observed counts and technique mapping', attackSurface),
      view('/posture/drift', 'Posture drift: the committed configuration baseline compared with the running process (config, routes, headers, key, upstreams)', postureDrift),
      view('/zerotrust/mesh', 'Zero-trust mesh: NIST SP 800-207 components and tenets mapped onto the real middleware chain and request counters', zeroTrustMesh),
      view('/topology/health', 'Topology health: passive status of every wired component (IETF health-check vocabulary); ADS-B capped at warn', topologyHealth),
    ],
    ready() {
      histogram.reset();
      // built in the background once the schemas are described, so no request pays for it
      Promise.all([prepareAttackSurface(s), preparePosture(s)]).catch((err: unknown) => s.log.error({ err }, 'security views: preparing failed'));
    },
    close() {
      closeEventLoopHistogram(s);
    },
  };
}
