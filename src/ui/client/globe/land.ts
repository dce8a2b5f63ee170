/**
 * Land culling for the base layer. d3-geo projects and clips every vertex it is given, on both
 * hemispheres; 1:50m land has ~100,000 vertices, most of them off screen. Each polygon gets a
 * bounding cap (a centre on the sphere and the angular radius that holds all its vertices) once,
 * when the land loads; a draw passes d3 only the polygons whose cap reaches the part of the sphere
 * the canvas shows. Pure: no DOM, tested in Node.
 */
import type { MultiPolygon, Polygon, Position } from 'geojson';

export interface LandPart {
  coordinates: Position[][];
  /** Unit vector of the cap's centre. */
  c: [number, number, number];
  /** Angular radius of the cap, radians. */
  r: number;
}

const RAD = Math.PI / 180;

function unit(lon: number, lat: number): [number, number, number] {
  const cl = Math.cos(lat * RAD);
  return [cl * Math.cos(lon * RAD), cl * Math.sin(lon * RAD), Math.sin(lat * RAD)];
}

const angle = (a: [number, number, number], b: [number, number, number]): number => Math.acos(Math.max(-1, Math.min(1, a[0] * b[0] + a[1] * b[1] + a[2] * b[2])));

/** Splits (Multi)Polygons into parts with their bounding caps. */
export function landParts(geoms: readonly (Polygon | MultiPolygon)[]): LandPart[] {
  const polys = geoms.flatMap((g) => (g.type === 'Polygon' ? [g.coordinates] : g.coordinates));
  return polys.map((coordinates) => {
    // centre: the normalised mean of the outer ring's unit vectors (no antimeridian special case)
    let x = 0;
    let y = 0;
    let z = 0;
    for (const [lon, lat] of coordinates[0]!) {
      const u = unit(lon!, lat!);
      x += u[0];
      y += u[1];
      z += u[2];
    }
    const n = Math.hypot(x, y, z);
    // a ring around a pole can average to (almost) nothing: then the cap is the whole sphere
    const c: [number, number, number] = n > 1e-9 ? [x / n, y / n, z / n] : [0, 0, 1];
    let r = n > 1e-9 ? 0 : Math.PI;
    for (const [lon, lat] of coordinates[0]!) r = Math.max(r, angle(c, unit(lon!, lat!)));
    return { coordinates, c, r };
  });
}

/**
 * The parts that can show on a canvas of `width` x `height` px with the globe's centre at
 * (lon, lat), radius `radiusPx`, centred in the canvas. The canvas shows at most the hemisphere,
 * and when zoomed in only the cap under its corners.
 */
export function visibleLand(parts: readonly LandPart[], lon: number, lat: number, radiusPx: number, width: number, height: number): MultiPolygon {
  const halfDiagonal = Math.hypot(width, height) / 2;
  const seen = halfDiagonal >= radiusPx ? Math.PI / 2 : Math.asin(halfDiagonal / radiusPx);
  const v = unit(lon, lat);
  const box = viewBox(lon, lat, seen);
  const coordinates: Position[][][] = [];
  for (const p of parts) {
    if (angle(v, p.c) > seen + p.r + 1e-6) continue;
    // a continent at 1:10m is ~100,000 vertices: zoomed in, d3 gets only the piece inside the view
    if (!box || p.r < seen) coordinates.push(p.coordinates);
    else {
      const outer = clipRing(p.coordinates[0]!, box);
      if (outer.length) coordinates.push([outer, ...p.coordinates.slice(1).map((r) => clipRing(r, box)).filter((r) => r.length)]);
    }
  }
  return { type: 'MultiPolygon', coordinates };
}

export interface LonLatBox {
  west: number;
  south: number;
  east: number;
  north: number;
}

/**
 * A longitude/latitude box holding the cap of angle `seen` around (lon, lat), with a margin, or
 * null where a box is no good: a wide view, one that reaches a pole or the antimeridian.
 */
export function viewBox(lon: number, lat: number, seen: number): LonLatBox | null {
  const d = (seen / RAD) * 1.5;
  if (d > 8) return null;
  const south = lat - d;
  const north = lat + d;
  if (south <= -89 || north >= 89) return null;
  const dl = d / Math.cos(Math.max(Math.abs(south), Math.abs(north)) * RAD);
  if (lon - dl <= -180 || lon + dl >= 180) return null;
  return { west: lon - dl, south, east: lon + dl, north };
}

/**
 * Sutherland–Hodgman clipping of a ring to a box, edges taken as straight in longitude and
 * latitude: right for boxes a few degrees wide, where the edges of 1:10m land are short. The box
 * is convex, so the clipped ring keeps its winding and fills the same ground inside the box.
 */
export function clipRing(ring: readonly Position[], box: LonLatBox): Position[] {
  let pts: Position[] = ring.length > 1 && ring[0]![0] === ring[ring.length - 1]![0] && ring[0]![1] === ring[ring.length - 1]![1] ? ring.slice(0, -1) : ring.slice();
  const edges: [0 | 1, number, 1 | -1][] = [
    [0, box.west, 1],
    [0, box.east, -1],
    [1, box.south, 1],
    [1, box.north, -1],
  ];
  for (const [axis, at, side] of edges) {
    if (!pts.length) break;
    const out: Position[] = [];
    const inside = (p: Position) => (p[axis]! - at) * side >= 0;
    let prev = pts[pts.length - 1]!;
    for (const cur of pts) {
      const curIn = inside(cur);
      if (curIn !== inside(prev)) {
        const t = (at - prev[axis]!) / (cur[axis]! - prev[axis]!);
        out.push([prev[0]! + t * (cur[0]! - prev[0]!), prev[1]! + t * (cur[1]! - prev[1]!)]);
      }
      if (curIn) out.push(cur);
      prev = cur;
    }
    pts = out;
  }
  if (pts.length < 3) return [];
  pts.push(pts[0]!);
  return pts;
}
