/** Liveness, doctrine and the Prometheus scrape. */
import { defineRoute, type RouteDef } from '../http/route.js';
import { definePlugin } from '../platform/plugin.js';
import type { Services } from '../platform/services.js';
import { API_VERSION, doctrineDocument, type Enforcement } from './doctrine.js';
import { text } from '../http/response-schema.js';
import { DOCTRINE, HEALTH } from './core.responses.js';

/** The doctrine reports enforcement from the evidence plugin's last refresh. */
export const corePlugin = definePlugin({
  name: 'core',
  needs: ['evidence'],
  build: (s: Services, { evidence }) => ({ routes: coreRoutes(s, () => evidence.enforcement()), provides: {} }),
});

function coreRoutes(s: Services, enforcement: () => Enforcement): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/health',
      uses: ['metrics-registry', 'worker-pool', 'ledger'],
      summary: 'Liveness and passive component checks (IETF health-check format); 503 when a check fails',
      tag: 'core',
      errors: [503],
      response: HEALTH,
      responseAlsoOn: [503],
      handler({ ctx }) {
        const { status, checks } = s.health.run();
        ctx.status = status === 'fail' ? 503 : 200;
        ctx.set('Cache-Control', 'no-store');
        return {
          status,
          version: API_VERSION,
          releaseId: s.releaseId,
          serviceId: 'svc',
          uptime_s: Math.round((Date.now() - s.startedAt.getTime()) / 10) / 100,
          pool: s.pool.snapshot(),
          checks,
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/doctrine',
      uses: [],
      summary: 'Doctrine: honesty rules, service rules, limits, crypto and their live enforcement status',
      tag: 'core',
      response: DOCTRINE,
      handler() {
        return doctrineDocument(enforcement(), s.config.ledger.mode);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/metrics',
      root: true,
      uses: ['metrics-registry', 'worker-pool', 'ledger'],
      summary: 'Prometheus text exposition: process, HTTP, pool, kernel and event-loop metrics',
      tag: 'core',
      produces: 'text/plain',
      response: text('Prometheus text exposition format 0.0.4'),
      async handler({ ctx }) {
        const { contentType, body } = await s.metrics.render();
        ctx.type = contentType;
        ctx.set('Cache-Control', 'no-store');
        return body;
      },
    }),
  ];
}
