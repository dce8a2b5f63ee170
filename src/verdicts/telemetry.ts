/**
 * The telemetry frame (design 4): POST /verdict and the items of POST /edge/3d `frames`.
 * track_id, lat, lon are required; the rest is optional and absent evidence scores low.
 */
import Joi from 'joi';

export const SOURCES = ['OpenDroneID', 'ADS-B', 'MAVLink'] as const;
export type Source = (typeof SOURCES)[number];

export interface TelemetryFrame {
  track_id: string;
  source?: Source;
  lat: number;
  lon: number;
  alt_m?: number;
  speed_mps?: number;
  heading_deg?: number;
  rssi_dbm?: number;
  id_authenticated?: boolean;
  timestamp_skew_s?: number;
  n_observations?: number;
  ts_utc?: string;
}

export const telemetryFrameSchema = Joi.object<TelemetryFrame>({
  track_id: Joi.string().pattern(/^[A-Za-z0-9._:-]{1,64}$/).required(),
  source: Joi.string().valid(...SOURCES),
  lat: Joi.number().min(-90).max(90).required(),
  lon: Joi.number().min(-180).max(180).required(),
  alt_m: Joi.number().min(-500).max(20000),
  speed_mps: Joi.number().min(0).max(400),
  heading_deg: Joi.number().min(0).less(360).description('course over ground, degrees clockwise from north, in [0, 360)'),
  rssi_dbm: Joi.number().min(-150).max(0),
  id_authenticated: Joi.boolean(),
  timestamp_skew_s: Joi.number().min(-3600).max(3600),
  n_observations: Joi.number().integer().min(1).max(100000),
  ts_utc: Joi.string().isoDate().max(40).description('time of the fix, an ISO 8601 / RFC 3339 date-time (e.g. 2026-01-01T00:00:00Z)'),
});
