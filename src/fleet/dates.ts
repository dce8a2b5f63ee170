/**
 * Calendar arithmetic for the fleet views. Dates are UTC calendar days ('YYYY-MM-DD'), instants
 * are whole-second UTC ISO strings; no local time zone ever enters, so every view is byte-stable.
 */

export const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;

/** 'YYYY-MM-DD' or a full ISO instant → epoch ms (UTC). */
export function toMs(date: string): number {
  const ms = Date.parse(date.length === 10 ? `${date}T00:00:00Z` : date);
  if (!Number.isFinite(ms)) throw new Error(`invalid date ${date}`);
  return ms;
}

export function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Whole-second instant, `Z` suffix (no milliseconds: dataset instants are hour-aligned). */
export function isoInstant(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Adds calendar months, clamping the day to the end of the target month (31 Jan + 1 month =
 * 28/29 Feb), the usual reading of "anniversary" for survey windows.
 */
export function addMonths(date: string, months: number): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const total = y * 12 + (m - 1) + months;
  const ty = Math.floor(total / 12);
  const tm = total - ty * 12;
  const lastDay = new Date(Date.UTC(ty, tm + 1, 0)).getUTCDate();
  return isoDate(Date.UTC(ty, tm, Math.min(d, lastDay)));
}

export function addDays(date: string, days: number): string {
  return isoDate(toMs(date) + days * DAY_MS);
}

/** Whole days from `a` to `b` (negative when b is earlier), both taken at 00:00 UTC. */
export function daysBetween(a: string, b: string): number {
  return Math.floor((toMs(b.slice(0, 10)) - toMs(a.slice(0, 10))) / DAY_MS);
}

/** Month-and-day of a date inside a yearly period such as 16 Oct – 15 Apr (wrapping the year end). */
export function inYearlyPeriod(ms: number, from: [number, number], to: [number, number]): boolean {
  const d = new Date(ms);
  const md = (d.getUTCMonth() + 1) * 100 + d.getUTCDate();
  const a = from[0] * 100 + from[1];
  const b = to[0] * 100 + to[1];
  return a <= b ? md >= a && md <= b : md >= a || md <= b;
}
