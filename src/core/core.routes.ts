/** Liveness, doctrine and the Prometheus scrape. */
import { defineRoute, type RouteDef } from '../http/route.js';
import { definePlugin, type NoProvides, type PluginServices } from '../platform/plugin.js';
import { API_VERSION, doctrineDocument, type Enforcement } from './doctrine.js';
import { text } from '../http/response-schema.js';
import { jsonText, sendJsonText, type JsonText } from '../http/json-text.js';
import { DOCTRINE, HEALTH } from './core.responses.js';

/**
 * How long one computed /health answer is served again, in ms: under a flood of probes the checks
 * run once per window instead of once per request (each check's `time` says when they ran). A
 * probe every few seconds, as load balancers send, always gets a fresh answer.
 */
export const HEALTH_MAX_AGE_MS = 50;

declare module '../platform/plugin.js' {
  interface Provides {
    core: NoProvides;
  }
}

/** The doctrine reports enforcement from the evidence plugin's last refresh. */
export const corePlugin = definePlugin({
  name: 'core',
  needs: ['evidence'],
  config: ['ledger'],
  build: (s: CoreServices, { evidence }) => ({ routes: coreRoutes(s, () => evidence.enforcement()), provides: {} }),
});

/** The doctrine names the ledger's mode. */
type CoreServices = PluginServices<'ledger'>;

function coreRoutes(s: CoreServices, enforcement: () => Enforcement): RouteDef[] {
  // the doctrine changes only with an evidence refresh (a new enforcement object): serialised once
  // per refresh, not built, digested and serialised on every request
  let doctrine: { of: Enforcement; body: JsonText } | null = null;
  let health: { at: number; status: number; body: JsonText } | null = null;
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
        const now = performance.now();
        if (!health || now - health.at >= HEALTH_MAX_AGE_MS) {
          const { status, checks } = s.health.run();
          const body = { status, version: API_VERSION, releaseId: s.releaseId, serviceId: 'svc', uptime_s: Math.round((Date.now() - s.startedAt.getTime()) / 10) / 100, pool: s.pool.snapshot(), checks };
          health = { at: now, status: status === 'fail' ? 503 : 200, body: jsonText(body) };
        }
        ctx.status = health.status;
        ctx.set('Cache-Control', 'no-store');
        sendJsonText(ctx, health.body);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/doctrine',
      uses: [],
      summary: 'Doctrine: honesty rules, service rules, limits, crypto and their live enforcement status',
      tag: 'core',
      response: DOCTRINE,
      handler({ ctx }) {
        const e = enforcement();
        if (doctrine?.of !== e) doctrine = { of: e, body: jsonText(doctrineDocument(e, s.config.ledger.mode)) };
        sendJsonText(ctx, doctrine.body);
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
