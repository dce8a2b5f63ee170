/**
 * Geometry of the measured-series chart, computed once here and drawn twice: as an SVG string by
 * the server-rendered /energy-sovereign panel, and as SVG elements by the /jackin card. Pure (no
 * DOM, no Node), so both draw exactly the same lines from the same points.
 *
 * Two measured lines on one percent axis: CPU utilisation of the process and the event loop's busy
 * share, per sampling interval. They differ by dash pattern as well as colour (WCAG 1.4.1).
 */
import type { SeriesPoint } from './wire/energy.js';

export interface ChartVertex {
  x: number;
  y: number;
  /** The plotted value, as a ratio (0..1). */
  value: number;
  at: string;
}

export interface ChartLine {
  field: 'cpu_utilization' | 'event_loop_utilization';
  label: string;
  color: string;
  /** SVG stroke-dasharray, or null for a solid line. */
  dash: string | null;
  vertices: ChartVertex[];
  /** The vertices as an SVG `points` list. */
  points: string;
}

export interface SeriesChart {
  width: number;
  height: number;
  plot: { left: number; top: number; right: number; bottom: number };
  /** Top of the y axis, as a ratio: the smallest step of STEPS above the largest value. */
  yMax: number;
  yTicks: { y: number; label: string }[];
  xLabels: { x: number; label: string; anchor: 'start' | 'end' }[];
  lines: ChartLine[];
  /** One sentence for the chart's text alternative. */
  summary: string;
}

/** Candidate tops of the percent axis (small values stay readable instead of hugging zero); each half is a round number too. */
const STEPS = [0.02, 0.04, 0.1, 0.2, 0.4, 0.6, 0.8, 1];

export const SERIES_LINES: Omit<ChartLine, 'vertices' | 'points'>[] = [
  // Okabe–Ito sky blue and orange: distinguishable with colour-blindness, ≥ 3:1 on the dark panel
  { field: 'cpu_utilization', label: 'CPU (process, all threads)', color: '#56b4e9', dash: null },
  { field: 'event_loop_utilization', label: 'event loop busy', color: '#e69f00', dash: '5 3' },
];

const pct = (r: number): string => `${(r * 100).toFixed(r < 0.1 ? 1 : 0)} %`;
const hms = (iso: string): string => `${iso.slice(11, 19)}Z`;

export function seriesChart(points: readonly SeriesPoint[], width: number, height: number): SeriesChart {
  const plot = { left: 44, top: 8, right: width - 8, bottom: height - 22 };
  const max = Math.max(0, ...points.flatMap((p) => SERIES_LINES.map((l) => p[l.field])));
  const yMax = STEPS.find((s) => s >= max * 1.1) ?? 1;
  const t = points.map((p) => Date.parse(p.at));
  const t0 = t[0] ?? 0;
  const span = (t[t.length - 1] ?? 0) - t0;
  const xOf = (i: number): number => (span > 0 ? plot.left + ((t[i]! - t0) / span) * (plot.right - plot.left) : (plot.left + plot.right) / 2);
  const yOf = (v: number): number => plot.bottom - (Math.min(v, yMax) / yMax) * (plot.bottom - plot.top);
  const round = (n: number): number => Math.round(n * 10) / 10;
  const lines = SERIES_LINES.map((l) => {
    const vertices = points.map((p, i) => ({ x: round(xOf(i)), y: round(yOf(p[l.field])), value: p[l.field], at: p.at }));
    return { ...l, vertices, points: vertices.map((v) => `${v.x},${v.y}`).join(' ') };
  });
  const yTicks = [0, yMax / 2, yMax].map((v) => ({ y: round(yOf(v)), label: `${Math.round(v * 100)} %` }));
  const xLabels: SeriesChart['xLabels'] = points.length ? [{ x: plot.left, label: hms(points[0]!.at), anchor: 'start' }] : [];
  if (points.length > 1) xLabels.push({ x: plot.right, label: hms(points[points.length - 1]!.at), anchor: 'end' });
  const last = points[points.length - 1];
  const summary = last
    ? `${points.length} intervals from ${hms(points[0]!.at)} to ${hms(last.at)}; latest: CPU ${pct(last.cpu_utilization)}, event loop ${pct(last.event_loop_utilization)}; highest on this chart ${pct(max)}.`
    : 'No interval measured yet: the first point appears one sampling interval after start.';
  return { width, height, plot, yMax, yTicks, xLabels, lines, summary };
}
