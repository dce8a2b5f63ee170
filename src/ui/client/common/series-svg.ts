/**
 * Draws the measured energy series into an element as SVG nodes (createElementNS and attributes:
 * nothing is parsed from strings, and no style attribute is written, so the strict CSP holds). The
 * geometry is src/isomorphic/energy-chart.ts, the same the server-rendered panel uses.
 */
import { seriesChart } from '../../../isomorphic/energy-chart.js';
import type { EnergySeries } from '../../../isomorphic/wire/energy.js';

const NS = 'http://www.w3.org/2000/svg';

function svgEl(tag: string, attrs: Record<string, string | number | null>, text?: string): SVGElement {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

export function drawSeries(into: Element, series: EnergySeries, width: number, height: number, titleId: string): void {
  const c = seriesChart(series.points, width, height);
  const { plot } = c;
  const svg = svgEl('svg', { class: 'chart', role: 'img', 'aria-labelledby': titleId, viewBox: `0 0 ${width} ${height}`, width, height, 'data-points': series.points.length });
  svg.append(svgEl('title', { id: titleId }, `Measured every ${(series.interval_ms.value ?? 0) / 1000} s: ${c.summary}`));
  for (const t of c.yTicks) {
    svg.append(svgEl('line', { class: 'grid', x1: plot.left, x2: plot.right, y1: t.y, y2: t.y }), svgEl('text', { x: plot.left - 6, y: t.y + 4, 'text-anchor': 'end' }, t.label));
  }
  svg.append(svgEl('line', { class: 'axis', x1: plot.left, x2: plot.left, y1: plot.top, y2: plot.bottom }));
  for (const x of c.xLabels) svg.append(svgEl('text', { x: x.x, y: height - 4, 'text-anchor': x.anchor }, x.label));
  if (!series.points.length) svg.append(svgEl('text', { class: 'empty', x: (plot.left + plot.right) / 2, y: (plot.top + plot.bottom) / 2, 'text-anchor': 'middle' }, 'waiting for the first interval'));
  for (const l of c.lines) {
    if (!l.vertices.length) continue;
    const line = svgEl('polyline', { class: 'line', 'data-field': l.field, points: l.points, stroke: l.color, 'stroke-dasharray': l.dash });
    line.append(svgEl('title', {}, l.label));
    svg.append(line);
  }
  const legend = document.createElement('ul');
  legend.className = 'chart-legend';
  for (const l of c.lines) {
    const li = document.createElement('li');
    const s = svgEl('svg', { width: 28, height: 10, 'aria-hidden': 'true' });
    s.append(svgEl('line', { x1: 1, y1: 5, x2: 27, y2: 5, stroke: l.color, 'stroke-width': 2, 'stroke-dasharray': l.dash }));
    li.append(s, `${l.label} (${series.fields[l.field].basis})`);
    legend.append(li);
  }
  into.replaceChildren(svg, legend);
}
