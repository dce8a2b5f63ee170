/** Response schema of GET /alerts: the alerts after a sequence number, the watched zones, the counters. */
import Joi from 'joi';
import { bool, int, isoTime, listOf, nullable, num, oneOf, shape, str } from '../http/response-schema.js';
import { DECISION } from '../verdicts/verdicts.responses.js';

const LON_LAT = Joi.array().ordered(num().min(-180).max(180).required(), num().min(-90).max(90).required()).length(2);

export const ALERT = shape({
  seq: int().min(1).description('this alert\u2019s number, increasing from 1 since the service started'),
  kind: oneOf('aircraft', 'drone'),
  target_id: str().description('the drone\u2019s track_id, or the aircraft\u2019s ICAO hex'),
  zone: str().description('name of the watched zone entered'),
  entered_at: isoTime().description('the verdict\u2019s time (drones) or the ADS-B snapshot\u2019s fetch time (aircraft)'),
  lat: num().min(-90).max(90),
  lon: num().min(-180).max(180),
  alt_m: nullable(num()).description('the frame\u2019s alt_m (drones), barometric altitude ft × 0.3048 (aircraft); null when not reported'),
  ledger_index: int().min(0).description('the signed verdict that placed the target in the zone: GET /receipt/export?index= verifies it'),
  decision: DECISION,
  simulated: bool().description('the verdict came from the simulated flight'),
});

export const ZONE = Joi.alternatives(
  shape({ name: str(), polygon: listOf(LON_LAT).min(3).description('ring of [lon, lat] vertices') }),
  shape({ name: str(), center: LON_LAT.description('[lon, lat]'), radius_m: num().greater(0) }),
);

export const ALERTS = shape({
  schema: oneOf('svc.alerts/v1'),
  alerts: listOf(ALERT).description('alerts with seq > `after`, oldest first, at most `limit` (the newest alerts.ringSize are kept)'),
  next_after: int().min(0).description('the `after` of the next poll: the last seq sent, or the newest seq when none was (it restarts from 0 with the service)'),
  zones: listOf(ZONE).description('the watched zones'),
  suppressed: shape({
    per_snapshot: int().min(0).description('aircraft entries over alerts.maxPerSnapshot in their snapshot'),
    per_minute: int().min(0).description('entries over alerts.maxPerMinute'),
    not_recorded: int().min(0).description('aircraft entries whose verdict could not be appended (they alert at the next snapshot that finds them inside)'),
  }),
  webhook: shape({
    configured: bool(),
    sent: int().min(0),
    failed: int().min(0).description('no 2xx answer after one retry (connection refused, timeout, 5xx) or a 4xx'),
    dropped_rate_limited: int().min(0).description('over alerts.webhookPerMin: not sent, not queued'),
    dropped_busy: int().min(0).description('alerts.webhookInFlightMax deliveries were under way: not sent, not queued'),
  }),
});
