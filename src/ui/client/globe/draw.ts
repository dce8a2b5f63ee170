/**
 * Two stacked 2-D canvases, so moving targets never redraw the land: the base (sphere, graticule,
 * land) is redrawn only when the view changes; the overlay (targets) at most once per animation
 * frame. Targets are drawn in one pass per colour with shared Path2D glyphs; above LOD_DOTS visible
 * aircraft they become 3-px squares. Every drawn target's screen position is kept for hit-testing
 * and for tests.
 */
import { geoGraticule10, geoPath, type GeoPermissibleObjects } from 'd3-geo';
import { DECISION_STYLE, GLYPH_SIZE, LAND, OCEAN, STALE, ZONE_COLOR, type Decision, type Glyph } from '../common/palette.js';
import type { View } from './view.js';
import { frameOutline, type CotFrame } from './cot-frame.js';
import type { TrailPoint } from './layers.js';
import { altIn, type UnitSystem } from '../common/units.js';

/** Visible aircraft above which glyphs become heading arrows, and arrows 3-px squares. */
export const LOD_ARROWS = 1000;
export const LOD_DOTS = 3000;
/** Pixels per unit of a CoT frame (cot-frame.ts): a land friend's rectangle is 18 x 12 px. */
export const COT_FRAME_PX = 6;
export type Lod = 'glyphs' | 'arrows' | 'dots';
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
  /** Metres; null when not known (never a sentinel value). */
  altM: number | null;
  /** Where the target comes from, as the table's origin column says it. */
  origin: 'live feed' | 'posted' | 'simulated' | 'sample' | 'dataset';
  /** Simulated tracks get their own marker on the map. */
  simulated: boolean;
  /** CoT tracks: the 2525-style frame their type gives them (cot-frame.ts). */
  frame?: CotFrame;
  stale: boolean;
  trail: TrailPoint[];
  search: string;
  /** Every field with its value and source, built only when the details panel asks. */
  details(units: UnitSystem): [string, string, string][];
}

export interface Drawn {
  keys: string[];
  xs: Float32Array;
  ys: Float32Array;
  /** Screen rotation (radians, clockwise from screen-up) of each drawn glyph; NaN when unrotated. */
  rot: Float32Array;
  n: number;
  lod: Lod;
  /** Keys of the targets whose label was drawn (labels that would overlap a placed one are left out). */
  labels: string[];
  /** Targets drawn within STACK_PX of each other, counted on the map instead of hidden. */
  stacks: Stack[];
}

export interface Stack {
  x: number;
  y: number;
  keys: string[];
}

/** Targets closer than this (px) share one symbol on screen: they get a count badge. */
export const STACK_PX = 6;

/** Each glyph as closed polygons in unit space, nose towards -y, all wound the same way. */
function ellipse(cx: number, cy: number, rx: number, ry: number, n = 12): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(cx + rx * Math.sin((i / n) * Math.PI * 2), cy - ry * Math.cos((i / n) * Math.PI * 2));
  return out;
}
const rect = (x: number, y: number, w: number, h: number): number[] => [x, y, x + w, y, x + w, y + h, x, y + h];

export const GLYPH_POLYS: Record<Glyph | 'arrow', number[][]> = {
  // level of detail for many targets: heading and altitude colour only
  arrow: [[0, -1, 0.7, 0.85, 0, 0.45, -0.7, 0.85]],
  // swept wings, fuselage through the centre
  jet: [[0, -1, 0.14, -0.6, 0.14, -0.15, 0.95, 0.3, 0.95, 0.45, 0.14, 0.2, 0.12, 0.7, 0.42, 0.95, 0.42, 1.05, 0, 0.95, -0.42, 1.05, -0.42, 0.95, -0.12, 0.7, -0.14, 0.2, -0.95, 0.45, -0.95, 0.3, -0.14, -0.15, -0.14, -0.6]],
  // wide swept wings with engine pods
  heavy: [
    [0, -1.15, 0.2, -0.75, 0.2, -0.2, 1.2, 0.25, 1.2, 0.45, 0.2, 0.2, 0.16, 0.75, 0.5, 1.0, 0.5, 1.12, 0, 1.02, -0.5, 1.12, -0.5, 1.0, -0.16, 0.75, -0.2, 0.2, -1.2, 0.45, -1.2, 0.25, -0.2, -0.2, -0.2, -0.75],
    rect(0.45, -0.1, 0.16, 0.32),
    rect(-0.61, -0.1, 0.16, 0.32),
  ],
  // straight wings, straight tail
  turboprop: [[0, -0.95, 0.13, -0.7, 0.13, -0.2, 1.0, -0.2, 1.0, 0.08, 0.13, 0.08, 0.1, 0.7, 0.4, 0.7, 0.4, 0.9, -0.4, 0.9, -0.4, 0.7, -0.1, 0.7, -0.13, 0.08, -1.0, 0.08, -1.0, -0.2, -0.13, -0.2, -0.13, -0.7]],
  // body, tail boom, tail rotor and a two-blade main rotor
  rotorcraft: [ellipse(0, -0.15, 0.32, 0.5), rect(-0.07, 0.2, 0.14, 0.8), rect(-0.3, 0.85, 0.6, 0.14), [-0.95, -0.28, 0.95, -0.02, 0.95, 0.06, -0.95, -0.2], [0.22, -1.0, 0.3, -1.0, -0.22, 0.7, -0.3, 0.7]],
  // long thin wings, V tail
  uav: [[0, -0.8, 0.1, -0.5, 0.1, -0.12, 1.15, -0.05, 1.15, 0.08, 0.1, 0.1, 0.08, 0.75, 0.45, 1.0, 0.4, 1.08, 0, 0.9, -0.4, 1.08, -0.45, 1.0, -0.08, 0.75, -0.1, 0.1, -1.15, 0.08, -1.15, -0.05, -0.1, -0.12, -0.1, -0.5]],
  // delta
  fighter: [[0, -1.1, 0.18, -0.45, 0.8, 0.55, 0.8, 0.75, 0.25, 0.75, 0.35, 1.0, -0.35, 1.0, -0.25, 0.75, -0.8, 0.75, -0.8, 0.55, -0.18, -0.45]],
  // unknown: a plain arrowhead
  unknown: [[0, -1, 0.7, 0.85, 0, 0.45, -0.7, 0.85]],
};


/** Appends a glyph, scaled, turned by `a` (clockwise from up) and moved to (x, y), to a path. */
function addGlyph(ctx: CanvasRenderingContext2D | Path2D, g: Glyph | 'arrow', x: number, y: number, a: number, size: number): void {
  const c = Math.cos(a) * size;
  const s = Math.sin(a) * size;
  for (const poly of GLYPH_POLYS[g]) {
    ctx.moveTo(x + c * poly[0]! - s * poly[1]!, y + s * poly[0]! + c * poly[1]!);
    for (let i = 2; i < poly.length; i += 2) ctx.lineTo(x + c * poly[i]! - s * poly[i + 1]!, y + s * poly[i]! + c * poly[i + 1]!);
    ctx.closePath();
  }
}

const PATHS = new Map<Glyph | 'arrow', Path2D>();
/** A glyph as a Path2D in unit space, built once. */
export function pathOf(g: Glyph | 'arrow'): Path2D {
  let p = PATHS.get(g);
  if (!p) {
    p = new Path2D();
    addGlyph(p, g, 0, 0, 0, 1);
    PATHS.set(g, p);
  }
  return p;
}

export interface Site {
  name: string;
  lon: number;
  lat: number;
  /** Range rings, each a closed [lon, lat] ring and its label. */
  rings: { ring: [number, number][]; label: string }[];
}

export function drawBase(ctx: CanvasRenderingContext2D, view: View, land: GeoPermissibleObjects | null, sites: readonly Site[] = []): void {
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
  drawSites(ctx, view, sites, path);
}

/** Site markers (a diamond) with dashed range rings labelled with their distance. */
function drawSites(ctx: CanvasRenderingContext2D, view: View, sites: readonly Site[], path: ReturnType<typeof geoPath>): void {
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'bottom';
  for (const site of sites) {
    for (const { ring, label } of site.rings) {
      ctx.beginPath();
      path({ type: 'LineString', coordinates: ring });
      ctx.strokeStyle = 'rgba(220, 235, 245, 0.55)';
      ctx.lineWidth = 1;
      ctx.setLineDash([5, 4]);
      ctx.stroke();
      ctx.setLineDash([]);
      // the label sits where the ring crosses north of the site
      const top = view.project(ring[0]![0], ring[0]![1]);
      if (top) {
        ctx.fillStyle = 'rgba(220, 235, 245, 0.85)';
        ctx.fillText(label, top[0] + 3, top[1] - 1);
      }
    }
    const p = view.project(site.lon, site.lat);
    if (!p) continue;
    ctx.beginPath();
    ctx.moveTo(p[0], p[1] - 7);
    ctx.lineTo(p[0] + 7, p[1]);
    ctx.lineTo(p[0], p[1] + 7);
    ctx.lineTo(p[0] - 7, p[1]);
    ctx.closePath();
    ctx.fillStyle = '#f2f5f8';
    ctx.fill();
    ctx.strokeStyle = '#000000';
    ctx.lineWidth = 1.5;
    ctx.stroke();
    // named only at site scale (with its rings): over a continent the name would cover targets
    if (!site.rings.length) continue;
    ctx.fillStyle = '#f2f5f8';
    ctx.textBaseline = 'top';
    ctx.fillText(site.name, p[0] + 9, p[1] + 3);
    ctx.textBaseline = 'bottom';
  }
}

export interface OverlayOptions {
  labels: boolean;
  trails: boolean;
  selected: string | null;
  zones: { polygon: [number, number][]; name: string }[];
  showZones: boolean;
  /** Trail points received before this time (ms since the epoch) are not drawn. */
  trailSinceMs: number;
  units: UnitSystem;
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

/** Draws a frame at (x, y), `size` px per unit: filled (closed along an open side), outlined except there. */
export function drawFrame(ctx: CanvasRenderingContext2D, f: Pick<CotFrame, 'shape' | 'open'>, x: number, y: number, size: number, fill: string): void {
  const pts = frameOutline(f.shape, f.open);
  ctx.beginPath();
  pts.forEach(([px, py], i) => (i ? ctx.lineTo(x + px * size, y + py * size) : ctx.moveTo(x + px * size, y + py * size)));
  ctx.closePath();
  ctx.fillStyle = fill;
  ctx.fill();
  ctx.beginPath();
  pts.forEach(([px, py], i) => (i ? ctx.lineTo(x + px * size, y + py * size) : ctx.moveTo(x + px * size, y + py * size)));
  if (!f.open) ctx.closePath();
  ctx.strokeStyle = '#000000';
  ctx.lineWidth = 1.5;
  ctx.stroke();
}

let IDX = new Int32Array(0);

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
  if (IDX.length < targets.length) IDX = new Int32Array(targets.length * 1.5);
  const idx = IDX;
  out.keys.length = 0;
  let n = 0;
  let visibleAircraft = 0;
  const xy: [number, number] = [0, 0];
  for (let i = 0; i < targets.length; i++) {
    const t = targets[i]!;
    // no allocation per target: this loop runs for every target on every frame
    if (!view.projectInto(t.lon, t.lat, xy) || xy[0] < -20 || xy[1] < -20 || xy[0] > width + 20 || xy[1] > height + 20) continue;
    out.xs[n] = xy[0];
    out.ys[n] = xy[1];
    out.rot[n] = NaN;
    out.keys.push(t.key);
    idx[n] = i;
    if (t.kind === 'aircraft') visibleAircraft++;
    n++;
  }
  out.n = n;

  if (opts.trails) drawTrails(ctx, view, targets, idx, n, opts.trailSinceMs);

  // aircraft, by level of detail (measured in headless Chromium without a GPU, 2,500 on screen:
  // a category glyph costs ~2.5x a 4-vertex arrow, and a 3-px square ~1/10 of an arrow):
  // category glyphs with outlines up to LOD_ARROWS visible, heading arrows up to LOD_DOTS,
  // squares above. One fill per target with a cached Path2D beat one batched path per colour.
  const buckets = new Map<string, number[]>();
  const others: number[] = [];
  for (let j = 0; j < n; j++) {
    const t = targets[idx[j]!]!;
    if (t.kind !== 'aircraft') {
      others.push(j);
      continue;
    }
    const c = t.stale ? STALE : t.color;
    let b = buckets.get(c);
    if (!b) buckets.set(c, (b = []));
    b.push(j);
  }
  out.lod = visibleAircraft > LOD_DOTS ? 'dots' : visibleAircraft > LOD_ARROWS ? 'arrows' : 'glyphs';
  // counts go under the symbols: a badge never hides a neighbour
  drawStacks(ctx, out, targets, idx);
  ctx.strokeStyle = 'rgba(0, 0, 0, 0.85)';
  for (const [color, list] of buckets) {
    ctx.fillStyle = color;
    ctx.globalAlpha = color === STALE ? 0.6 : 1;
    if (out.lod === 'dots') {
      ctx.beginPath();
      for (const j of list) ctx.rect(Math.round(out.xs[j]!) - 1, Math.round(out.ys[j]!) - 1, 3, 3);
      ctx.fill();
      continue;
    }
    for (const j of list) {
      const t = targets[idx[j]!]!;
      let a = 0;
      if (t.trackDeg !== null) {
        a = view.northAngle(t.lon, t.lat) + t.trackDeg * RAD;
        out.rot[j] = a;
      }
      const g = out.lod === 'arrows' ? 'arrow' : (t.glyph ?? 'unknown');
      const size = GLYPH_SIZE[g];
      const c = Math.cos(a) * size;
      const s = Math.sin(a) * size;
      ctx.setTransform(c, s, -s, c, out.xs[j]!, out.ys[j]!);
      const path = pathOf(g);
      ctx.fill(path);
      if (out.lod === 'glyphs') {
        ctx.lineWidth = 1 / size;
        ctx.stroke(path);
      }
    }
    ctx.setTransform(1, 0, 0, 1, 0, 0);
  }
  ctx.globalAlpha = 1;

  // vessels, CoT and drone tracks: few, each drawn on its own; drone tracks last, so a verdict's
  // shape stays readable where the simulated flight's CoT export puts a frame at the same spot
  others.sort((a, b) => Number(targets[idx[a]!]!.kind === 'drone') - Number(targets[idx[b]!]!.kind === 'drone'));
  for (const j of others) {
    const t = targets[idx[j]!]!;
    const x = out.xs[j]!;
    const y = out.ys[j]!;
    ctx.fillStyle = t.stale ? STALE : t.color;
    ctx.globalAlpha = t.stale ? 0.6 : 1;
    ctx.strokeStyle = 'rgba(0, 0, 0, 0.85)';
    ctx.lineWidth = 1;
    if (t.kind === 'vessel') {
      ctx.beginPath();
      ctx.moveTo(x, y - 7);
      ctx.lineTo(x + 4, y - 2);
      ctx.lineTo(x + 4, y + 6);
      ctx.lineTo(x - 4, y + 6);
      ctx.lineTo(x - 4, y - 2);
      ctx.closePath();
      ctx.fill();
      ctx.stroke();
    } else if (t.kind === 'cot' && t.frame) {
      drawFrame(ctx, t.frame, x, y, COT_FRAME_PX, t.stale ? STALE : t.color);
    } else {
      decisionShape(ctx, t.decision, x, y, 6);
      if (t.stale) {
        // stale drone tracks: hollow and grey, the shape still tells the decision
        ctx.strokeStyle = STALE;
        ctx.lineWidth = 2;
        ctx.stroke();
      } else {
        ctx.fill();
        ctx.stroke();
      }
      if (t.simulated) {
        // simulated: a dashed ring round the symbol, so it never passes for a real track
        ctx.beginPath();
        ctx.arc(x, y, 10, 0, Math.PI * 2);
        ctx.setLineDash([3, 2]);
        ctx.strokeStyle = '#f2f5f8';
        ctx.lineWidth = 1.5;
        ctx.stroke();
        ctx.setLineDash([]);
      }
      if (t.decision === 'DENY') {
        ctx.beginPath();
        ctx.moveTo(x - 6, y - 6);
        ctx.lineTo(x + 6, y + 6);
        ctx.moveTo(x + 6, y - 6);
        ctx.lineTo(x - 6, y + 6);
        ctx.strokeStyle = t.stale ? STALE : '#000000';
        ctx.lineWidth = 1.5;
        ctx.stroke();
      }
    }
  }
  ctx.globalAlpha = 1;

  // labels: all when few are visible, else only the selection; the selection's first, then each
  // label only where it overlaps none already placed (a crowded coast stays readable)
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  out.labels.length = 0;
  const placed: number[] = [];
  const sel = opts.selected ? out.keys.indexOf(opts.selected) : -1;
  const everyLabel = opts.labels && n <= 300;
  const rest = everyLabel ? Array.from({ length: n }, (_, j) => j).filter((j) => j !== sel) : [];
  for (const j of sel >= 0 ? [sel, ...rest] : rest) {
    const t = targets[idx[j]!]!;
    if (!t.label) continue;
    const text = t.kind === 'aircraft' && t.altM !== null ? `${t.label} ${altLabel(t.altM, opts.units)}` : t.label;
    // right of the symbol: CoT frames are the widest (1.5 units)
    const x = out.xs[j]! + (t.kind === 'cot' ? COT_FRAME_PX * 1.5 + 5 : 10);
    const y = out.ys[j]!;
    const w = ctx.measureText(text).width;
    if (j !== sel && overlapsAny(placed, x - 2, y - 7, w + 4, 14)) continue;
    placed.push(x - 2, y - 7, w + 4, 14);
    out.labels.push(t.key);
    ctx.lineWidth = 3;
    ctx.strokeStyle = 'rgba(4, 12, 20, 0.9)';
    ctx.strokeText(text, x, y);
    ctx.fillStyle = t.stale ? '#b9bec3' : '#e8f0f7';
    ctx.fillText(text, x, y);
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

/** Aviation labels give the flight level (hundreds of feet); metric ones whole metres. */
const altLabel = (m: number, u: UnitSystem): string => (u === 'aviation' ? String(Math.round(altIn(m, u) / 100)) : `${Math.round(m)}m`);

/**
 * Trails, batched into one path per colour (a stroke per target costs more than the vertices).
 * Only points received since `sinceMs` are drawn, and with many targets on screen only the newest
 * few per target, so 5,000 aircraft with trails stay within the frame budget.
 */
function drawTrails(ctx: CanvasRenderingContext2D, view: View, targets: readonly Target[], idx: Int32Array, n: number, sinceMs: number): void {
  const maxPoints = n > LOD_ARROWS ? 6 : n > 300 ? 30 : Infinity;
  const byColor = new Map<string, Path2D>();
  const q: [number, number] = [0, 0];
  for (let j = 0; j < n; j++) {
    const t = targets[idx[j]!]!;
    const trail = t.trail;
    if (trail.length < 2) continue;
    const color = t.stale ? 'rgba(138,143,148,0.6)' : t.color;
    let path = byColor.get(color);
    if (!path) byColor.set(color, (path = new Path2D()));
    let started = false;
    for (let i = Math.max(0, trail.length - maxPoints); i < trail.length; i++) {
      const p = trail[i]!;
      if (p[2] < sinceMs || !view.projectInto(p[0], p[1], q)) {
        started = false;
        continue;
      }
      if (started) path.lineTo(q[0], q[1]);
      else path.moveTo(q[0], q[1]);
      started = true;
    }
  }
  ctx.lineWidth = 1.2;
  ctx.globalAlpha = 0.7;
  for (const [color, path] of byColor) {
    ctx.strokeStyle = color;
    ctx.stroke(path);
  }
  ctx.globalAlpha = 1;
}

/**
 * Groups drawn targets whose symbols fall within STACK_PX of each other (a grid of that cell
 * size, neighbours included) and draws each group's count beside it: four drones on one spot read
 * "4", not one symbol.
 */
function drawStacks(ctx: CanvasRenderingContext2D, out: Drawn, targets: readonly Target[], idx: Int32Array): void {
  out.stacks.length = 0;
  if (out.lod === 'dots') return;
  const cells = new Map<number, number[]>();
  for (let j = 0; j < out.n; j++) {
    const key = Math.floor(out.xs[j]! / STACK_PX) * 65_536 + Math.floor(out.ys[j]! / STACK_PX);
    const c = cells.get(key);
    if (c) c.push(j);
    else cells.set(key, [j]);
  }
  ctx.font = 'bold 11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  for (const list of cells.values()) {
    if (list.length < 2) continue;
    const x = out.xs[list[0]!]!;
    const y = out.ys[list[0]!]!;
    out.stacks.push({ x, y, keys: list.map((j) => targets[idx[j]!]!.key) });
    const text = String(list.length);
    const w = ctx.measureText(text).width + 8;
    ctx.beginPath();
    ctx.roundRect(x + 7, y - 18, w, 15, 7);
    ctx.fillStyle = '#f2f5f8';
    ctx.fill();
    ctx.strokeStyle = '#000000';
    ctx.lineWidth = 1;
    ctx.stroke();
    ctx.fillStyle = '#0b1520';
    ctx.fillText(text, x + 11, y - 10.5);
  }
}

/** True when the box (x, y, w, h) overlaps one of the boxes in `boxes` (flat x, y, w, h quadruples). */
function overlapsAny(boxes: number[], x: number, y: number, w: number, h: number): boolean {
  for (let i = 0; i < boxes.length; i += 4) {
    if (x < boxes[i]! + boxes[i + 2]! && boxes[i]! < x + w && y < boxes[i + 1]! + boxes[i + 3]! && boxes[i + 1]! < y + h) return true;
  }
  return false;
}

/** Nearest drawn target within `radius` px of (x, y): a linear scan, as 5,000 targets take 0.4 ms. */
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
