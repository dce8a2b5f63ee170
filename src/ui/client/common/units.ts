/**
 * One unit system for every number on a page, chosen by the user and remembered in localStorage:
 * metric (m, km, m/s) or aviation (ft, NM, kt). Unknown stays "unknown", never a number. Pure
 * except for `loadUnits`/`saveUnits`.
 */
export type UnitSystem = 'metric' | 'aviation';
export const UNIT_SYSTEMS: readonly UnitSystem[] = ['metric', 'aviation'];
const KEY = 'svc.units';

const FT_PER_M = 1 / 0.3048;
const KT_PER_MPS = 3600 / 1852;

/**
 * The CoT "unknown" height and error (9999999.0, MIL-STD-6090 / the CoT base schema): values at or
 * above it are the sentinel, not a height.
 */
export const COT_UNKNOWN = 9_999_999;

/** A CoT hae, ce or le attribute as metres, or null for the unknown sentinel or a non-number. */
export function cotMetres(v: number | null): number | null {
  return v === null || !Number.isFinite(v) || Math.abs(v) >= COT_UNKNOWN ? null : v;
}

export function loadUnits(storage: { getItem(key: string): string | null } | null): UnitSystem {
  try {
    const v = storage?.getItem(KEY);
    return v === 'aviation' || v === 'metric' ? v : 'aviation';
  } catch {
    return 'aviation';
  }
}

export function saveUnits(storage: { setItem(key: string, value: string): void } | null, u: UnitSystem): void {
  try {
    storage?.setItem(KEY, u);
  } catch {
    // private browsing can refuse storage: the choice then lasts as long as the page
  }
}

const group = (v: number, digits = 0): string => v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** The altitude unit's short name, for table headers and filter placeholders. */
export const altUnit = (u: UnitSystem): string => (u === 'aviation' ? 'ft' : 'm');

/** Metres in the chosen unit, as a number (filters compare in the unit the user typed). */
export function altIn(m: number, u: UnitSystem): number {
  return u === 'aviation' ? m * FT_PER_M : m;
}

/** An altitude, "unknown" when not known. */
export function fmtAlt(m: number | null | undefined, u: UnitSystem): string {
  if (m === null || m === undefined || !Number.isFinite(m)) return 'unknown';
  return `${group(altIn(m, u))} ${altUnit(u)}`;
}

export function fmtSpeed(mps: number | null | undefined, u: UnitSystem): string {
  if (mps === null || mps === undefined || !Number.isFinite(mps)) return 'unknown';
  return u === 'aviation' ? `${group(mps * KT_PER_MPS, 1)} kt` : `${group(mps, 1)} m/s`;
}

export function fmtDistance(m: number, u: UnitSystem): string {
  if (u === 'aviation') return m < 926 ? `${group(m * FT_PER_M)} ft` : `${group(m / 1852, m < 18_520 ? 1 : 0)} NM`;
  return m < 1000 ? `${group(m)} m` : `${group(m / 1000, m < 10_000 ? 1 : 0)} km`;
}
