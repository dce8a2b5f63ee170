/**
 * How a position reads on the glass: decimal degrees with hemisphere letters, or MGRS (the grid
 * reference TAK users call positions by), converted by the proj4js `mgrs` package. Pure.
 */
import { forward } from 'mgrs';
import { fmtLatLon } from '../common/format.js';

export type PositionFormat = 'degrees' | 'mgrs';

/** MGRS to 1 m (five digits per axis), grouped as it is spoken: zone+band, square, easting, northing. */
export function mgrsOf(lon: number, lat: number): string | null {
  // MGRS covers 80°S to 84°N; the polar caps use UPS, which this page does not show
  if (lat < -80 || lat > 84) return null;
  try {
    const m = forward([lon, lat], 5);
    const r = /^(\d{1,2}[C-X])([A-Z]{2})(\d{5})(\d{5})$/.exec(m);
    return r ? `${r[1]} ${r[2]} ${r[3]} ${r[4]}` : m;
  } catch {
    return null;
  }
}

/**
 * `mPerPx`: ground metres per pixel, so degrees get the decimals the view resolves (0.001° is
 * about 110 m, 0.00001° about 1 m).
 */
export function fmtPosition(lon: number, lat: number, f: PositionFormat, mPerPx = 1000): string {
  const digits = Math.min(5, Math.max(3, Math.ceil(-Math.log10(mPerPx / 111_000))));
  if (f === 'mgrs') return mgrsOf(lon, lat) ?? `${fmtLatLon(lat, lon, digits)} (no MGRS beyond 80°S–84°N)`;
  return fmtLatLon(lat, lon, digits);
}

/** The UTC clock, as operators log times: 14:03:27Z. */
export function utcClock(ms: number): string {
  return `${new Date(ms).toISOString().slice(11, 19)}Z`;
}
