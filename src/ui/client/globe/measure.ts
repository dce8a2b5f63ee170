/**
 * Distances on the globe for the scale bar, the range rings and "fit activity". The page draws a
 * sphere of the IUGG mean Earth radius, so a distance on the map is an arc on that sphere; the
 * orthographic projection is true to scale at the view centre, which is where the scale bar
 * measures. Pure: no DOM, tested in Node.
 */
import type { UnitSystem } from '../common/units.js';

/** IUGG mean Earth radius R1 (Moritz, Geodetic Reference System 1980), metres. */
export const EARTH_RADIUS_M = 6_371_008.8;
export const METRES_PER_NM = 1852;
export const METRES_PER_FT = 0.3048;
const RAD = Math.PI / 180;

/** Ground metres per screen pixel at the centre of an orthographic view of `radiusPx`. */
export function metresPerPixel(radiusPx: number): number {
  return EARTH_RADIUS_M / radiusPx;
}

export interface ScaleBar {
  /** Bar length in the same pixels as `maxPx`. */
  px: number;
  metres: number;
  label: string;
}

/** The largest 1, 2 or 5 × 10^k not above `x`. */
export function niceFloor(x: number): number {
  const p = 10 ** Math.floor(Math.log10(x));
  const m = x / p;
  return (m >= 5 ? 5 : m >= 2 ? 2 : 1) * p;
}

/**
 * The longest round distance that fits in `maxPx`: metres and kilometres in the metric system,
 * feet then nautical miles in the aviation one (what a chart's scale shows). Its length is what the
 * orthographic projection gives that distance measured from the view centre, R·sin(d/R) on the
 * screen, so it stays true when the whole globe is in view; no bar is longer than an eighth of a
 * great circle.
 */
export function scaleBar(mPerPx: number, maxPx: number, units: UnitSystem): ScaleBar {
  const px = (metres: number): number => (EARTH_RADIUS_M * Math.sin(metres / EARTH_RADIUS_M)) / mPerPx;
  // the largest ground distance whose projected length fits
  const fit = Math.min(maxPx * mPerPx, EARTH_RADIUS_M * Math.sin(Math.PI / 4));
  const maxM = EARTH_RADIUS_M * Math.asin(fit / EARTH_RADIUS_M);
  if (units === 'aviation') {
    const nm = maxM / METRES_PER_NM;
    if (nm >= 0.5) {
      const v = niceFloor(nm);
      return { px: px(v * METRES_PER_NM), metres: v * METRES_PER_NM, label: `${fmtRound(v)} NM` };
    }
    const ft = niceFloor(maxM / METRES_PER_FT);
    return { px: px(ft * METRES_PER_FT), metres: ft * METRES_PER_FT, label: `${fmtRound(ft)} ft` };
  }
  const m = niceFloor(maxM);
  return { px: px(m), metres: m, label: m >= 1000 ? `${fmtRound(m / 1000)} km` : `${fmtRound(m)} m` };
}

const fmtRound = (v: number): string => (v >= 1 ? v.toLocaleString('en-US', { maximumFractionDigits: 0 }) : String(Number(v.toPrecision(1))));

type Vec = [number, number, number];

function unit(lon: number, lat: number): Vec {
  const cl = Math.cos(lat * RAD);
  return [cl * Math.cos(lon * RAD), cl * Math.sin(lon * RAD), Math.sin(lat * RAD)];
}

/** Great-circle angle between two points, radians. */
export function arc(lon1: number, lat1: number, lon2: number, lat2: number): number {
  const a = unit(lon1, lat1);
  const b = unit(lon2, lat2);
  // atan2 of cross and dot stays accurate for the metre-scale arcs the scale bar is tested at
  const cx = a[1] * b[2] - a[2] * b[1];
  const cy = a[2] * b[0] - a[0] * b[2];
  const cz = a[0] * b[1] - a[1] * b[0];
  return Math.atan2(Math.hypot(cx, cy, cz), a[0] * b[0] + a[1] * b[1] + a[2] * b[2]);
}

export interface Cap {
  lon: number;
  lat: number;
  /** Angular radius, radians: every point is within it of the centre. */
  radius: number;
}

/**
 * A cap holding every point: centred on their mean direction, as wide as the farthest one. Not the
 * smallest such cap, but within a factor of two of it, which is all a "fit" needs. Null when empty.
 */
export function boundingCap(points: readonly (readonly [number, number])[]): Cap | null {
  if (!points.length) return null;
  let x = 0;
  let y = 0;
  let z = 0;
  for (const [lon, lat] of points) {
    const u = unit(lon, lat);
    x += u[0];
    y += u[1];
    z += u[2];
  }
  const norm = Math.hypot(x, y, z);
  // points spread evenly round the sphere have no mean direction: keep the first one's
  const [lon, lat] =
    norm < 1e-9 * points.length ? [points[0]![0], points[0]![1]] : [Math.atan2(y, x) / RAD, Math.asin(Math.max(-1, Math.min(1, z / norm))) / RAD];
  let radius = 0;
  for (const [plon, plat] of points) radius = Math.max(radius, arc(lon, lat, plon, plat));
  return { lon, lat, radius };
}

/**
 * The zoom at which a cap fills `fill` of the globe's radius at zoom 1 (the orthographic image of
 * a cap of angle a has radius R·sin a), never framing less than `minExtentM` across.
 */
export function zoomForCap(cap: Cap, fill = 0.85, minExtentM = 2000): number {
  const a = Math.max(cap.radius, minExtentM / 2 / EARTH_RADIUS_M);
  return a >= Math.PI / 2 ? 1 : fill / Math.sin(a);
}

/** A closed ring of `n` points at `metres` from (lon, lat) on the sphere, as [lon, lat]. */
export function ring(lon: number, lat: number, metres: number, n = 96): [number, number][] {
  const d = metres / EARTH_RADIUS_M;
  const phi1 = lat * RAD;
  const out: [number, number][] = [];
  for (let i = 0; i <= n; i++) {
    const brg = (2 * Math.PI * i) / n;
    const phi2 = Math.asin(Math.sin(phi1) * Math.cos(d) + Math.cos(phi1) * Math.sin(d) * Math.cos(brg));
    const lam2 = lon * RAD + Math.atan2(Math.sin(brg) * Math.sin(d) * Math.cos(phi1), Math.cos(d) - Math.sin(phi1) * Math.sin(phi2));
    out.push([((((lam2 / RAD + 540) % 360) + 360) % 360) - 180, phi2 / RAD]);
  }
  return out;
}

/** Radii for range rings around a site: up to four round distances that fit the view. */
export function ringRadii(mPerPx: number, viewPx: number, units: UnitSystem): number[] {
  const step = scaleBar(mPerPx, viewPx / 8, units).metres;
  return [1, 2, 3, 4].map((k) => k * step);
}
