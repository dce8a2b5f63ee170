/**
 * The security feature: attack-surface graph, posture drift, zero-trust mesh and topology health
 * (domain-data note 2), all computed at request time from the running service's real state.
 */
import type { Schema } from 'joi';
import type { Feature } from '../feature.js';
import { defineRoute } from '../http/route.js';
import type { Services } from '../services.js';
import { attackSurface } from './attack-surface.js';
import { API } from './inventory.js';
import { postureDrift } from './posture.js';
import { topologyHealth } from './topology.js';
import { zeroTrustMesh } from './zerotrust.js';
import { ATTACK_SURFACE, POSTURE_DRIFT, TOPOLOGY, ZERO_TRUST } from './security.responses.js';

/** By view path. */
const RESPONSES: Record<string, Schema> = { '/attack-surface/graph': ATTACK_SURFACE, '/posture/drift': POSTURE_DRIFT, '/zerotrust/mesh': ZERO_TRUST, '/topology/health': TOPOLOGY };

export function securityFeature(s: Services): Feature {
  const view = (path: string, summary: string, build: (s: Services) => Promise<Record<string, unknown>>) =>
    defineRoute({
      method: 'GET',
      path: `${API}${path}`,
      summary,
      tag: 'security',
      response: RESPONSES[path]!,
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
  };
}
