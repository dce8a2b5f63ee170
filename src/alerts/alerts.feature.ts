/**
 * The alerts feature: watched zones, entry alerts from verdicts (drones) and ADS-B snapshots
 * (aircraft), each backed by a signed verdict, a bounded ring, the webhook and GET /alerts.
 */
import { definePlugin, type Built, type PluginServices } from '../platform/plugin.js';
import type { AdsbFeed } from '../adsb/feed.js';
import type { VerdictCore } from '../verdicts/verdicts.feature.js';
import { AlertService } from './alert-service.js';
import { alertsMetrics } from './alerts.metrics.js';
import { alertsRoutes } from './alerts.routes.js';
import { Webhook } from './webhook.js';
import { Zones } from './zones.js';

declare module '../platform/plugin.js' {
  interface Provides {
    alerts: { service: AlertService; webhook: Webhook | null };
  }
}

/** Its own slice, and the ledger's: the default watched zones are the ledger's no-fly zones. */
type AlertsServices = PluginServices<'alerts' | 'ledger'>;

export const alertsPlugin = definePlugin({ name: 'alerts', needs: ['verdicts', 'adsb'], config: ['alerts', 'ledger'], build: buildAlerts });

function buildAlerts(s: AlertsServices, deps: { verdicts: VerdictCore; adsb: { feed: AdsbFeed } }): Built<'alerts'> {
  const cfg = s.config.alerts;
  const metrics = alertsMetrics(s.metrics.registry);
  const webhook = cfg.webhookUrl
    ? new Webhook({ url: cfg.webhookUrl, perMinute: cfg.webhookPerMin, timeoutMs: cfg.webhookTimeoutMs, inFlightMax: cfg.webhookInFlightMax, onOutcome: metrics.delivery, log: s.log })
    : null;
  const service = new AlertService({ cfg, zones: Zones.from(cfg.zones, s.config.ledger.noFlyZones), verdicts: deps.verdicts.verdicts, webhook, metrics, log: s.log });
  const offVerdict = deps.verdicts.verdicts.onVerdict((v) => service.onVerdict(v));
  const offSnapshot = deps.adsb.feed.onSnapshot((snap) => service.onSnapshot(snap));
  return {
    routes: alertsRoutes(service, webhook),
    provides: { service, webhook },
    async close() {
      offVerdict();
      offSnapshot();
      await service.settled();
      await webhook?.close();
    },
  };
}
