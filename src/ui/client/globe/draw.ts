/**
 * Two stacked 2-D canvases (ui note 0.2): the base (sphere, graticule, land) is redrawn only when
 * the view changes; the overlay (targets) at most once per animation frame. Targets are drawn in
 * one pass per colour with shared Path2D glyphs; above LOD_DOTS visible aircraft they become
 * 3-px squares. Every drawn target's screen position is kept for hit-testing and for tests.
 */
import { geoGraticule10, geoPath, type GeoPermissibleObjects } from 'd3-geo';
import { DECISION_STYLE, LAND, OCEAN, STALE, ZONE_COLOR, type Decision, type Glyph } from '../shared/palette.js';
import type { View } from './view.js';

export const LOD_DOTS = 3000;
const RAD = Math.PI / 180;

export type Kind = 'aircraft' | 'vessel' | 'drone' | 'cot';

export interface Target {
  key: string;
  kind: Kind;
  label: string;
  lon: number;
  lat: number;
  color: string;
  glyph: Glyph | null;
  decision: Decision | null;
  /** Degrees clockwise from true north; null: unknown (drawn unrotated). */
  trackDeg: number | null;
  altFt: number | null;
  stale: boolean;
  trail: [number, number][];
  search: string;
  /** Every field with its value and source, built only when the details panel asks. */
  details(): [string, string, string][];
}

export interface Drawn {
  keys: string[];
  xs: Float32Array;
  ys: Float32Array;
  /** Screen rotation (radians, clockwise from screen-up) of each drawn glyph; NaN when unrotated. */
  rot: Float32Array;
  n: number;
  lod: boolean;
}

function glyphPath(g: Glyph): Path2D {
  const p = new Path2D();
  const poly = (pts: number[]) => {
    p.moveTo(pts[0]!, pts[1]!);
    for (let i = 2; i < pts.length; i += 2) p.lineTo(pts[i]!, pts[i + 1]!);
    p.closePath();
  };
  switch (g) {
    case 'jet': // swept wings, fuselage through the centre
      poly([0, -1, 0.14, -0.6, 0.14, -0.15, 0.95, 0.3, 0.95, 0.45, 0.14, 0.2, 0.12, 0.7, 0.42, 0.95, 0.42, 1.05, 0, 0.95, -0.42, 1.05, -0.42, 0.95, -0.12, 0.7, -0.14, 0.2, -0.95, 0.45, -0.95, 0.3, -0.14, -0.15, -0.14, -0.6]);
      break;
    case 'heavy': // wide straight-swept wings with engine pods
      poly([0, -1.15, 0.2, -0.75, 0.2, -0.2, 1.2, 0.25, 1.2, 0.45, 0.2, 0.2, 0.16, 0.75, 0.5, 1.0, 0.5, 1.12, 0, 1.02, -0.5, 1.12, -0.5, 1.0, -0.16, 0.75, -0.2, 0.2, -1.2, 0.45, -1.2, 0.25, -0.2, -0.2, -0.2, -0.75]);
      p.rect(0.45, -0.1, 0.16, 0.32);
      p.rect(-0.61, -0.1, 0.16, 0.32);
      break;
    case 'turboprop': // straight wings, straight tail
      poly([0, -0.95, 0.13, -0.7, 0.13, -0.2, 1.0, -0.2, 1.0, 0.08, 0.13, 0.08, 0.1, 0.7, 0.4, 0.7, 0.4, 0.9, -0.4, 0.9, -0.4, 0.7, -0.1, 0.7, -0.13, 0.08, -1.0, 0.08, -1.0, -0.2, -0.13, -0.2, -0.13, -0.7]);
      break;
    case 'rotorcraft': // body, tail boom and a two-blade rotor
      p.ellipse(0, -0.15, 0.32, 0.5, 0, 0, Math.PI * 2);
      p.rect(-0.07, 0.2, 0.14, 0.8);
      p.rect(-0.3, 0.85, 0.6, 0.14);
      poly([-0.95, -0.28, 0.95, -0.02, 0.95, 0.06, -0.95, -0.2]);
      poly([0.22, -1.0, 0.3, -1.0, -0.22, 0.7, -0.3, 0.7]);
      break;
    case 'uav': // long thin wings, V tail
      poly([0, -0.8, 0.1, -0.5, 0.1, -0.12, 1.15, -0.05, 1.15, 0.08, 0.1, 0.1, 0.08, 0.75, 0.45, 1.0, 0.4, 1.08, 0, 0.9, -0.4, 1.08, -0.45, 1.0, -0.08, 0.75, -0.1, 0.1, -1.15, 0.08, -1.15, -0.05, -0.1, -0.12, -0.1, -0.5]);
      break;
    case 'fighter': // delta
      poly([0, -1.1, 0.18, -0.45, 0.8, 0.55, 0.8, 0.75, 0.25, 0.75, 0.35, 1.0, -0.35, 1.0, -0.25, 0.75, -0.8, 0.75, -0.8, 0.55, -0.18, -0.45]);
      break;
    default: // unknown: a plain arrowhead
      poly([0, -1, 0.7, 0.85, 0, 0.45, -0.7, 0.85]);
  }
  return p;
}

const GLYPH_PATHS = new Map<Glyph, Path2D>();
export function pathOf(g: Glyph): Path2D {
  let p = GLYPH_PATHS.get(g);
  if (!p) GLYPH_PATHS.set(g, (p = glyphPath(g)));
  return p;
}

export function drawBase(ctx: CanvasRenderingContext2D, view: View, land: GeoPermissibleObjects | null): void {
  const { width, height } = view;
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.clearRect(0, 0, width, height);
  const path = geoPath(view.projection, ctx);
  ctx.beginPath();
  path({ type: 'Sphere' });
  ctx.fillStyle = OCEAN;
  ctx.fill();
  if (land) {
    ctx.beginPath();
    path(land);
    ctx.fillStyle = LAND;
    ctx.fill();
    ctx.strokeStyle = '#4d6b58';
    ctx.lineWidth = 0.7;
    ctx.stroke();
  }
  ctx.beginPath();
  path(geoGraticule10());
  ctx.strokeStyle = 'rgba(190, 215, 235, 0.16)';
  ctx.lineWidth = 0.6;
  ctx.stroke();
  ctx.beginPath();
  path({ type: 'Sphere' });
  ctx.strokeStyle = '#3d6a8c';
  ctx.lineWidth = 1.2;
  ctx.stroke();
}

export interface OverlayOptions {
  labels: boolean;
  trails: boolean;
  selected: string | null;
  zones: { polygon: [number, number][]; name: string }[];
  showZones: boolean;
}

/** Screen angle of true north at (lon, lat): 0 when north is straight up. */
function northAngle(view: View, lon: number, lat: number, x: number, y: number): number {
  const q = view.projection([lon, Math.min(89.99, lat + 0.05)]);
  if (!q) return 0;
  return Math.atan2(q[0] - x, -(q[1] - y));
}

function decisionShape(ctx: CanvasRenderingContext2D, d: Decision | null, x: number, y: number, r: number): void {
  const shape = d ? DECISION_STYLE[d].shape : 'circle';
  ctx.beginPath();
  if (shape === 'triangle') {
    ctx.moveTo(x, y - r * 1.2);
    ctx.lineTo(x + r * 1.1, y + r * 0.8);
    ctx.lineTo(x - r * 1.1, y + r * 0.8);
    ctx.closePath();
  } else if (shape === 'crossed-square') {
    ctx.rect(x - r, y - r, 2 * r, 2 * r);
  } else {
    ctx.arc(x, y, r, 0, Math.PI * 2);
  }
}

export function drawOverlay(ctx: CanvasRenderingContext2D, view: View, targets: readonly Target[], opts: OverlayOptions, out: Drawn): void {
  const { width, height } = view;
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.clearRect(0, 0, width, height);
  // zones first, under everything
  if (opts.showZones && opts.zones.length) {
    const path = geoPath(view.projection, ctx);
    for (const z of opts.zones) {
      const ring = z.polygon.map(([lat, lon]) => [lon, lat] as [number, number]);
      // d3 wants clockwise exterior rings for small polygons; try one order, fall back to the other
      const closed = [...ring, ring[0]!];
      ctx.beginPath();
      path({ type: 'Polygon', coordinates: [closed.slice().reverse()] });
      ctx.fillStyle = 'rgba(255, 90, 31, 0.22)';
      ctx.fill();
      ctx.strokeStyle = ZONE_COLOR;
      ctx.lineWidth = 1.5;
      ctx.setLineDash([4, 3]);
      ctx.stroke();
      ctx.setLineDash([]);
    }
  }
  // project once; count visible aircraft for the level of detail
  if (out.xs.length < targets.length) {
    out.xs = new Float32Array(targets.length * 1.5);
    out.ys = new Float32Array(targets.length * 1.5);
    out.rot = new Float32Array(targets.length * 1.5);
  }
  const idx: number[] = [];
  out.keys.length = 0;
  let n = 0;
  let visibleAircraft = 0;
  for (let i = 0; i < targets.length; i++) {
    const t = targets[i]!;
    const p = view.project(t.lon, t.lat);
    if (!p || p[0] < -20 || p[1] < -20 || p[0] > width + 20 || p[1] > height + 20) continue;
    out.xs[n] = p[0];
    out.ys[n] = p[1];
    out.rot[n] = NaN;
    out.keys.push(t.key);
    idx.push(i);
    if (t.kind === 'aircraft') visibleAircraft++;
    n++;
  }
  out.n = n;
  out.lod = visibleAircraft > LOD_DOTS;

  if (opts.trails) {
    ctx.lineWidth = 1.2;
    for (let j = 0; j < n; j++) {
      const t = targets[idx[j]!]!;
      if (t.trail.length < 2) continue;
      ctx.beginPath();
      let started = false;
      for (const [lon, lat] of t.trail) {
        const q = view.project(lon, lat);
        if (!q) {
          started = false;
          continue;
        }
        if (started) ctx.lineTo(q[0], q[1]);
        else ctx.moveTo(q[0], q[1]);
        started = true;
      }
      ctx.strokeStyle = t.stale ? 'rgba(138,143,148,0.6)' : t.color;
      ctx.globalAlpha = 0.7;
      ctx.stroke();
      ctx.globalAlpha = 1;
    }
  }

  // bucket by colour: one fillStyle change per colour, not per target
  const buckets = new Map<string, number[]>();
  for (let j = 0; j < n; j++) {
    const t = targets[idx[j]!]!;
    const c = t.stale ? STALE : t.color;
    let b = buckets.get(c);
    if (!b) buckets.set(c, (b = []));
    b.push(j);
  }
  ctx.lineWidth = 1;
  ctx.strokeStyle = 'rgba(0, 0, 0, 0.85)';
  for (const [color, list] of buckets) {
    ctx.fillStyle = color;
    for (const j of list) {
      const t = targets[idx[j]!]!;
      const x = out.xs[j]!;
      const y = out.ys[j]!;
      ctx.globalAlpha = t.stale ? 0.55 : 1;
      if (t.kind === 'aircraft') {
        if (out.lod) {
          ctx.fillRect(Math.round(x) - 1, Math.round(y) - 1, 3, 3);
          continue;
        }
        const size = t.glyph === 'heavy' ? 11 : t.glyph === 'fighter' || t.glyph === 'uav' ? 8 : 9;
        let a = 0;
        if (t.trackDeg !== null) {
          a = northAngle(view, t.lon, t.lat, x, y) + t.trackDeg * RAD;
          out.rot[j] = a;
        }
        const c = Math.cos(a) * size;
        const s = Math.sin(a) * size;
        ctx.setTransform(c, s, -s, c, x, y);
        const path = pathOf(t.glyph ?? 'unknown');
        ctx.fill(path);
        ctx.lineWidth = 1 / size;
        ctx.stroke(path);
        ctx.setTransform(1, 0, 0, 1, 0, 0);
        ctx.lineWidth = 1;
      } else if (t.kind === 'vessel') {
        ctx.beginPath();
        ctx.moveTo(x, y - 7);
        ctx.lineTo(x + 4, y - 2);
        ctx.lineTo(x + 4, y + 6);
        ctx.lineTo(x - 4, y + 6);
        ctx.lineTo(x - 4, y - 2);
        ctx.closePath();
        ctx.fill();
        ctx.stroke();
      } else if (t.kind === 'cot') {
        ctx.beginPath();
        ctx.moveTo(x, y - 7);
        ctx.lineTo(x + 7, y);
        ctx.lineTo(x, y + 7);
        ctx.lineTo(x - 7, y);
        ctx.closePath();
        ctx.fill();
        ctx.stroke();
      } else {
        decisionShape(ctx, t.decision, x, y, 6);
        if (t.stale) {
          ctx.strokeStyle = STALE;
          ctx.lineWidth = 2;
          ctx.stroke();
          ctx.strokeStyle = 'rgba(0, 0, 0, 0.85)';
          ctx.lineWidth = 1;
        } else {
          ctx.fill();
          ctx.stroke();
        }
        if (t.decision === 'DENY') {
          ctx.beginPath();
          ctx.moveTo(x - 6, y - 6);
          ctx.lineTo(x + 6, y + 6);
          ctx.moveTo(x + 6, y - 6);
          ctx.lineTo(x - 6, y + 6);
          ctx.strokeStyle = '#000000';
          ctx.lineWidth = 1.5;
          ctx.stroke();
          ctx.strokeStyle = 'rgba(0, 0, 0, 0.85)';
          ctx.lineWidth = 1;
        }
      }
    }
  }
  ctx.globalAlpha = 1;

  // labels: all when few are visible, else only the selection
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  for (let j = 0; j < n; j++) {
    const t = targets[idx[j]!]!;
    const show = t.key === opts.selected || (opts.labels && n <= 300);
    if (!show || !t.label) continue;
    const text = t.kind === 'aircraft' && t.altFt !== null ? `${t.label} ${Math.round(t.altFt / 100)}` : t.label;
    ctx.lineWidth = 3;
    ctx.strokeStyle = 'rgba(4, 12, 20, 0.9)';
    ctx.strokeText(text, out.xs[j]! + 10, out.ys[j]!);
    ctx.fillStyle = t.stale ? '#b9bec3' : '#e8f0f7';
    ctx.fillText(text, out.xs[j]! + 10, out.ys[j]!);
  }
  if (opts.selected) {
    const j = out.keys.indexOf(opts.selected);
    if (j >= 0) {
      ctx.beginPath();
      ctx.arc(out.xs[j]!, out.ys[j]!, 13, 0, Math.PI * 2);
      ctx.strokeStyle = '#ffffff';
      ctx.lineWidth = 2;
      ctx.stroke();
    }
  }
}

/** Nearest drawn target within `radius` px of (x, y): a linear scan (0.4 ms for 5,000, note M3). */
export function hitTest(d: Drawn, x: number, y: number, radius = 14): string | null {
  let best = -1;
  let bestD = radius * radius;
  for (let j = 0; j < d.n; j++) {
    const dx = d.xs[j]! - x;
    const dy = d.ys[j]! - y;
    const dd = dx * dx + dy * dy;
    if (dd <= bestD) {
      bestD = dd;
      best = j;
    }
  }
  return best < 0 ? null : d.keys[best]!;
}
