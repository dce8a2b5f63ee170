/** Units, ages and coordinates for labels and the details panel. Pure. */
export function fmtAge(s: number | null | undefined): string {
  if (s === null || s === undefined || !Number.isFinite(s)) return 'unknown age';
  if (s < 90) return `${Math.round(s)} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}
export function fmtNum(v: number | null | undefined, digits = 0): string {
  return v === null || v === undefined || !Number.isFinite(v) ? '–' : v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}
export function fmtLatLon(lat: number, lon: number, digits = 3): string {
  return `${Math.abs(lat).toFixed(digits)}°${lat >= 0 ? 'N' : 'S'} ${Math.abs(lon).toFixed(digits)}°${lon >= 0 ? 'E' : 'W'}`;
}
export function fmtTime(iso: string | null | undefined): string {
  return iso ? `${iso.slice(11, 19)}Z` : '–';
}
