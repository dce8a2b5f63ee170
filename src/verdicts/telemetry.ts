/**
 * The telemetry frame: POST /verdict and the items of POST /edge/3d `frames`. track_id, lat, lon
 * are required; the rest is optional and absent evidence scores low.
 */
import { Joi } from '../lib/code-points.js';

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

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|[+-](\d{2}):(\d{2}))$/;
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

const daysIn = (year: number, month: number): number => (month === 2 ? ((year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31);

/**
 * Why `v` is not an RFC 3339 date-time on a real calendar day (T and Z upper case, as RFC 3339
 * section 5.6 lets a specification require), or null. JavaScript's Date rolls 2026-02-30 over to
 * March 2, so the fields are checked here; a leap second (:60) is refused, since no clock here
 * can place it.
 */
export function rfc3339Problem(v: string): string | null {
  const m = RFC3339.exec(v);
  if (!m) return 'ts_utc must be an RFC 3339 date-time with a time zone, e.g. 2026-01-01T00:00:00Z';
  const [year, month, day, hour, minute, second, offH, offM] = m.slice(1).map((x) => (x === undefined ? 0 : Number(x))) as number[];
  if (month! < 1 || month! > 12) return `ts_utc is not a real date: there is no month ${m[2]}`;
  if (day! < 1 || day! > daysIn(year!, month!)) return `ts_utc is not a real date: ${MONTHS[month! - 1]} ${year} has no day ${m[3]}`;
  if (hour! > 23 || minute! > 59 || second! > 59) return `ts_utc is not a real time of day: ${m[4]}:${m[5]}:${m[6]}${second === 60 ? ' (leap seconds are not accepted)' : ''}`;
  if (offH! > 23 || offM! > 59) return 'ts_utc has a time zone offset out of range (at most ±23:59)';
  return null;
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
  // isoDate only warns (the custom rule's message is the one a bad value gets), kept for the OpenAPI format
  ts_utc: Joi.string()
    .max(40)
    .custom((v: string, h) => {
      const problem = rfc3339Problem(v);
      return problem === null ? v : h.message({ custom: problem });
    })
    .isoDate()
    .rule({ warn: true })
    .description('time of the fix, an RFC 3339 date-time with a time zone on a real calendar day (e.g. 2026-01-01T00:00:00Z; T and Z upper case, no leap second)'),
});
