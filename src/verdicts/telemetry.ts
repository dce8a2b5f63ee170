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

/** RFC 3339 section 5.6 `date-time`: T and Z in either case, a numeric offset with its colon. */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

const daysIn = (year: number, month: number): number => (month === 2 ? ((year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31);

/** Minutes after midnight UTC of a local hour and minute at an offset, in [0, 1440). */
const utcMinuteOfDay = (hour: number, minute: number, sign: string | undefined, offH: number, offM: number): number =>
  (((hour * 60 + minute - (sign === '-' ? -1 : 1) * (offH * 60 + offM)) % 1440) + 1440) % 1440;

/**
 * Why `v` is not an RFC 3339 date-time on a real calendar day, or null. JavaScript's Date rolls
 * 2026-02-30 over to March 2, so the fields are checked here. A leap second (:60) is accepted
 * only as the last second of a UTC day (23:59:60 once the offset is applied), where RFC 3339 puts
 * it and JSON Schema's date-time accepts it.
 */
export function rfc3339Problem(v: string): string | null {
  const m = RFC3339.exec(v);
  if (!m) return 'ts_utc must be an RFC 3339 date-time with a time zone, e.g. 2026-01-01T00:00:00Z';
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const [offH, offM] = [Number(m[8] ?? 0), Number(m[9] ?? 0)];
  if (month < 1 || month > 12) return `ts_utc is not a real date: there is no month ${m[2]}`;
  if (day < 1 || day > daysIn(year, month)) return `ts_utc is not a real date: ${MONTHS[month - 1]} ${year} has no day ${m[3]}`;
  if (hour > 23 || minute > 59 || second > 60) return `ts_utc is not a real time of day: ${m[4]}:${m[5]}:${m[6]}`;
  if (offH > 23 || offM > 59) return 'ts_utc has a time zone offset out of range (at most ±23:59)';
  if (second === 60 && utcMinuteOfDay(hour, minute, m[7], offH, offM) !== 23 * 60 + 59) {
    return `ts_utc is not a real time of day: ${m[4]}:${m[5]}:60 (a leap second is only the last second of a UTC day, 23:59:60 UTC)`;
  }
  return null;
}

/**
 * The instant of a valid `ts_utc` in milliseconds since the epoch. A leap second counts as the
 * first second of the next day, as POSIX time counts it (Date.parse gives NaN for :60).
 */
export function rfc3339Ms(v: string): number {
  // the regex fixes the layout: the seconds are characters 17 and 18
  if (v.slice(17, 19) === '60') return Date.parse(`${v.slice(0, 17)}59${v.slice(19)}`.toUpperCase()) + 1000;
  return Date.parse(v.toUpperCase());
}

/** The syntax of RFC3339 for the OpenAPI document (the `date-time` format checks days and times). */
const RFC3339_PATTERN = String.raw`^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$`;

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
    .meta({ jsonSchema: { pattern: RFC3339_PATTERN } })
    .description(
      'time of the fix, an RFC 3339 date-time with a time zone on a real calendar day (e.g. 2026-01-01T00:00:00Z; T and Z in either case; a leap second only as 23:59:60 UTC, ' +
        'which the freshness axis counts as the first second of the next day, as POSIX time does)',
    ),
});
