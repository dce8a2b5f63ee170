/**
 * How the /energy-sovereign panel writes a quantity for a reader: at most three significant digits
 * and never more than two decimals, with its unit, scaled to a milli/micro/nano prefix when the value
 * is small, utilisation ratios as percent and kWh as Wh. Presentation only: the JSON answers keep
 * the exact values, and the panel keeps them in each cell's data-value.
 */

export const MAX_DECIMALS = 2;

const PREFIXES = ['', 'm', 'µ', 'n'] as const;

/** Units that take a metric prefix when small (their first symbol is an SI unit or the gram). */
const PREFIXABLE = /^(s|J|W|Wh|gCO2e)(\/.+)?$/;

/** `v` with three significant digits, at most MAX_DECIMALS decimals; integers stay whole. */
export function roundedText(v: number): string {
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  const magnitude = Math.floor(Math.log10(Math.abs(v)));
  const decimals = Math.min(MAX_DECIMALS, Math.max(0, 2 - magnitude));
  return v.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

/** A value and its unit as one string, e.g. `36.0 mWh`, `14.9 %`, `2 vCPU`; `–` when there is no value. */
export function quantityText(value: number | null, unit: string, field = ''): string {
  if (value === null || !Number.isFinite(value)) return '–';
  if (unit === 'ratio') {
    // a utilisation is a share of the available time; other ratios (PUE) are plain multipliers
    return /utilization$/.test(field) ? `${roundedText(value * 100)} %` : `${roundedText(value)} (ratio)`;
  }
  let v = value;
  let u = unit;
  // a process uses watt-hours, not kilowatt-hours: 0.000036 kWh reads better as 36.0 mWh
  if (u === 'kWh' || u.startsWith('kWh/')) {
    v *= 1000;
    u = u.slice(1);
  }
  if (!PREFIXABLE.test(u) || Number.isInteger(v)) return `${roundedText(v)} ${u}`;
  let step = 0;
  while (v !== 0 && Math.abs(v) < 0.1 && step < PREFIXES.length - 1) {
    v *= 1000;
    step++;
  }
  return `${roundedText(v)} ${PREFIXES[step]}${u}`;
}
