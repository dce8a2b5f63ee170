/** Alerts on /metrics: raised by kind, suppressed by reason, webhook deliveries by outcome (fixed label sets). */
import { Counter, type Registry } from 'prom-client';
import type { AlertKind } from './alert-service.js';
import type { DeliveryOutcome } from './webhook.js';

export interface AlertsMetrics {
  raised(kind: AlertKind): void;
  suppressed(reason: 'per_snapshot' | 'per_minute' | 'not_recorded'): void;
  delivery(outcome: DeliveryOutcome): void;
}

export function alertsMetrics(registry: Registry): AlertsMetrics {
  const registers = [registry];
  const raised = new Counter({ name: 'svc_alerts_raised_total', help: 'Zone entry alerts raised, by target kind (aircraft, drone)', labelNames: ['kind'], registers });
  const suppressed = new Counter({
    name: 'svc_alerts_suppressed_total',
    help: 'Zone entries not raised as alerts: over the per-snapshot or per-minute bound, or (aircraft) their verdict could not be recorded',
    labelNames: ['reason'],
    registers,
  });
  const deliveries = new Counter({ name: 'svc_alert_webhook_deliveries_total', help: 'Alert webhook deliveries by outcome (sent, failed, dropped_rate_limited, dropped_busy)', labelNames: ['outcome'], registers });
  for (const kind of ['aircraft', 'drone']) raised.inc({ kind }, 0);
  for (const reason of ['per_snapshot', 'per_minute', 'not_recorded']) suppressed.inc({ reason }, 0);
  for (const outcome of ['sent', 'failed', 'dropped_rate_limited', 'dropped_busy']) deliveries.inc({ outcome }, 0);
  return {
    raised: (kind) => raised.inc({ kind }),
    suppressed: (reason) => suppressed.inc({ reason }),
    delivery: (outcome) => deliveries.inc({ outcome }),
  };
}
