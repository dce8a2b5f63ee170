/**
 * Config of the entry alerts: the watched zones (default: the ledger's no-fly zones), the alert
 * ring, the bounds on alerts per ADS-B snapshot and per minute, the re-entry debounce, and the
 * webhook (URL, token bucket, timeout, deliveries in flight).
 */
import Joi from 'joi';
import type { FeatureConfig } from '../config/feature-config.js';
import { listOrJson } from '../config/json-env.js';

/** A polygon zone: a ring of [lon, lat] vertices (GeoJSON order). */
export interface PolygonZoneConfig {
  name: string;
  polygon: [number, number][];
}

/** A circle zone: its centre [lon, lat] and radius in metres. */
export interface CircleZoneConfig {
  name: string;
  center: [number, number];
  radius_m: number;
}

export type ZoneConfig = PolygonZoneConfig | CircleZoneConfig;

export interface AlertsConfig {
  /** null: the ledger's no-fly zones (ledger.noFlyZones). */
  zones: ZoneConfig[] | null;
  ringSize: number;
  maxPerSnapshot: number;
  maxPerMinute: number;
  debounceMs: number;
  webhookUrl: string | null;
  webhookPerMin: number;
  webhookTimeoutMs: number;
  webhookInFlightMax: number;
}

const lonLat = Joi.array().ordered(Joi.number().min(-180).max(180).required(), Joi.number().min(-90).max(90).required()).length(2);
const NAME = Joi.string().min(1).max(128).required();

const zone = Joi.alternatives().try(
  Joi.object({ name: NAME, polygon: Joi.array().items(lonLat).min(3).max(1000).required() }),
  Joi.object({ name: NAME, center: lonLat.required(), radius_m: Joi.number().greater(0).max(1_000_000).required() }),
);

const zoneList = Joi.array().items(zone).min(1).max(100).unique('name');

export const alertsConfig: FeatureConfig = {
  key: 'alerts',
  schema: Joi.object({
    // SVC_ALERT_ZONES='[{"name":…,"polygon":[[lon,lat],…]}, {"name":…,"center":[lon,lat],"radius_m":…}]'
    zones: listOrJson(zoneList, 'zones')
      .allow(null)
      .default(null)
      .description(
        'watched zones: a JSON list of `{name, polygon: [[lon, lat], …]}` or `{name, center: [lon, lat], radius_m}` (at most 100, names unique); `null` watches the ledger\u2019s no-fly zones (`ledger.noFlyZones`)',
      ),
    ringSize: Joi.number().integer().min(1).max(100_000).default(500).description('alerts kept for `GET /alerts` (the oldest go first)'),
    maxPerSnapshot: Joi.number()
      .integer()
      .min(1)
      .max(1000)
      .default(50)
      .description('aircraft entries turned into signed verdicts and alerts per ADS-B snapshot at most; the rest are counted (`suppressed.per_snapshot`), not queued'),
    maxPerMinute: Joi.number().integer().min(1).max(100_000).default(600).description('alerts raised per minute at most (drones and aircraft, a token bucket); the rest are counted (`suppressed.per_minute`)'),
    debounceMs: Joi.number()
      .integer()
      .min(0)
      .max(3_600_000)
      .default(30_000)
      .description('a target that left a zone and entered it again raises a new alert only if its last alert for that zone is at least this old'),
    webhookUrl: Joi.string().uri({ scheme: ['http', 'https'] }).allow(null).default(null).description('each alert is POSTed here as JSON (null: no webhook)'),
    webhookPerMin: Joi.number().integer().min(1).max(6000).default(6).description('webhook deliveries per minute at most (a token bucket holding as many); alerts beyond it are counted as dropped, never queued'),
    webhookTimeoutMs: Joi.number().integer().min(100).max(60_000).default(3000).description('one webhook POST (connect, answer) at most; a failed POST is retried once'),
    webhookInFlightMax: Joi.number().integer().min(1).max(1000).default(8).description('webhook deliveries under way at once at most; an alert beyond it is counted as dropped (busy)'),
  }).default(),
  env: {
    SVC_ALERT_ZONES: 'zones',
    SVC_ALERT_RING_SIZE: 'ringSize',
    SVC_ALERT_MAX_PER_SNAPSHOT: 'maxPerSnapshot',
    SVC_ALERT_MAX_PER_MIN: 'maxPerMinute',
    SVC_ALERT_DEBOUNCE_MS: 'debounceMs',
    SVC_ALERT_WEBHOOK_URL: 'webhookUrl',
    SVC_ALERT_WEBHOOK_PER_MIN: 'webhookPerMin',
    SVC_ALERT_WEBHOOK_TIMEOUT_MS: 'webhookTimeoutMs',
    SVC_ALERT_WEBHOOK_IN_FLIGHT_MAX: 'webhookInFlightMax',
  },
};
