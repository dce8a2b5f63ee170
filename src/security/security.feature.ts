/**
 * The security plugin: attack-surface graph, posture drift, zero-trust mesh and topology health,
 * all computed at request time from the running service's real state. What depends only on the
 * route table (the surface model, the posture's route checks) is built once, in the background
 * after start-up.
 */
import type { Schema } from 'joi';
import { OBSERVED_CONFIG, observe, type Observed, type ObservedSection } from '../introspection/observed.js';
import { defineRoute } from '../http/route.js';
import { definePlugin, type Built, type NoProvides, type PluginServices } from '../platform/plugin.js';
import type { KernelRegistry } from '../../workers/registry.js';
import { attackSurfaceView } from './attack-surface.js';
import { postureView } from './posture.js';
import { topologyHealth } from './topology.js';
import { zeroTrustMesh } from './zerotrust.js';
import { ATTACK_SURFACE, POSTURE_DRIFT, TOPOLOGY, ZERO_TRUST } from './security.responses.js';

/** By view path. */
const RESPONSES: Record<string, Schema> = { '/attack-surface/graph': ATTACK_SURFACE, '/posture/drift': POSTURE_DRIFT, '/zerotrust/mesh': ZERO_TRUST, '/topology/health': TOPOLOGY };

declare module '../platform/plugin.js' {
  interface Provides {
    security: NoProvides;
  }
}

export const securityPlugin = definePlugin({
  name: 'security',
  needs: ['ledger', 'adsb', 'cot', 'kernels'],
  config: OBSERVED_CONFIG,
  build: (s: PluginServices<ObservedSection>, deps) => buildSecurity(observe(s, deps), deps.kernels.registry),
});

function buildSecurity(s: Observed, kernels: KernelRegistry): Built<'security'> {
  const surface = attackSurfaceView(s);
  const posture = postureView(s, kernels);
  const view = (path: string, summary: string, build: () => Promise<Record<string, unknown>>) =>
    defineRoute({
      method: 'GET',
      path,
      uses: ['metrics-registry', 'ledger', 'worker-pool'],
      summary,
      tag: 'security',
      response: RESPONSES[path]!,
      async handler({ ctx }) {
        ctx.set('Cache-Control', 'no-store');
        return build();
      },
    });
  return {
    routes: [
      view('/attack-surface/graph', 'Attack-surface graph of the running service: entry points from its route table, components, assets, upstream hosts, observed counts and technique mapping', surface.render),
      view('/posture/drift', 'Posture drift: the committed configuration baseline compared with the running process (config, routes, headers, key, upstreams)', () => posture.drift()),
      view('/zerotrust/mesh', 'Zero-trust mesh: NIST SP 800-207 components and tenets mapped onto the real middleware chain and request counters', () => zeroTrustMesh(s, () => posture.drift())),
      view('/topology/health', 'Topology health: passive status of every wired component (IETF health-check vocabulary); ADS-B capped at warn', () => topologyHealth(s)),
    ],
    provides: {},
    ready() {
      // built in the background once the schemas are described, so no request pays for it
      Promise.all([surface.prepare(), posture.prepare()]).catch((err: unknown) => s.log.error({ err }, 'security views: preparing failed'));
    },
  };
}
