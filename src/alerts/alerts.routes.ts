/** GET /alerts: the zone entry alerts after a sequence number, for a page that polls. */
import { defineRoute, type RouteDef } from '../http/route.js';
import { int, objectOf } from '../lib/params.js';
import type { AlertService } from './alert-service.js';
import { ALERTS } from './alerts.responses.js';
import type { Webhook } from './webhook.js';

const alertsQuery = objectOf({
  after: int(0, Number.MAX_SAFE_INTEGER, 0).description('send the alerts whose seq is greater than this (the previous answer\u2019s next_after)'),
  limit: int(1, 500, 100).description('alerts at most (1–500)'),
});

export function alertsRoutes(service: AlertService, webhook: Webhook | null): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/alerts',
      // it reads the alerts' own ring, which no component of src/introspection/components.ts stands for
      uses: [],
      summary: 'Zone entry alerts (drones from their verdicts, aircraft from ADS-B snapshots), each naming the signed verdict that placed the target in the zone',
      tag: 'alerts',
      query: alertsQuery,
      pureQuery: true,
      response: ALERTS,
      handler({ query, ctx }) {
        const alerts = service.after(query.after, query.limit);
        ctx.set('Cache-Control', 'no-store');
        const counts = webhook?.counts ?? { sent: 0, failed: 0, dropped_rate_limited: 0, dropped_busy: 0 };
        return {
          schema: 'svc.alerts/v1',
          alerts,
          next_after: alerts.length ? alerts.at(-1)!.seq : Math.min(query.after, service.newestSeq),
          zones: service.zones.list,
          suppressed: { ...service.suppressed },
          webhook: { configured: webhook !== null, ...counts },
        };
      },
    }),
  ];
}
