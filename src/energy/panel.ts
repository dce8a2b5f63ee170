/**
 * The /energy-sovereign HTML panel: the same object /energy/sovereign returns (one snapshot, one
 * chain link, and the measured series). The series is drawn as an inline SVG line chart (geometry
 * from src/isomorphic/energy-chart.ts, the one the /jackin card draws too); the snapshot is a table of
 * every value with its unit and basis; the JSON is embedded as an inert data block so a reader or a
 * test can check that the page shows exactly these numbers. No script runs, and nothing is inline
 * but the SVG's presentation attributes: the page runs under the strict UI policy (src/http/csp.ts)
 * with its styles in /shared/energy.css.
 */
import { seriesChart } from '../isomorphic/energy-chart.js';
import type { EnergySeries } from '../isomorphic/wire/energy.js';
import type { Quantity } from './quantity.js';
import { quantityText } from './quantity-text.js';

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** A dotted field path that may wrap after each dot or underscore on a narrow screen. */
const breakable = (path: string): string => esc(path).replace(/([._])/g, '$1<wbr>');

function rows(prefix: string, node: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(node)) {
    const path = prefix ? `${prefix}.${k}` : k;
    if (v && typeof v === 'object' && 'basis' in v && 'unit' in v) {
      const qv = v as Quantity;
      // the exact value stays in the cell (data-value, and the tooltip) for a reader who needs every digit
      const exact = qv.value === null ? '' : ` data-value="${qv.value}" title="${qv.value} ${esc(qv.unit)}"`;
      out.push(`<tr data-field="${esc(path)}"><th>${breakable(path)}</th><td class="value" data-unit="${esc(qv.unit)}"${exact}>${esc(quantityText(qv.value, qv.unit, path))}</td><td>${esc(qv.basis)}</td></tr>`);
    } else if (v && typeof v === 'object' && !Array.isArray(v)) out.push(...rows(path, v as Record<string, unknown>));
  }
  return out;
}

export const CHART_SIZE = { width: 640, height: 200 };
/** The chart drawn for narrow screens instead: at about its own width there, so its labels stay at their set size. */
export const COMPACT_CHART_SIZE = { width: 340, height: 200 };

/** A short stroke sample of a line's colour and dash, for the legend. */
const sample = (color: string, dash: string | null): string =>
  `<svg width="28" height="10" aria-hidden="true"><line x1="1" y1="5" x2="27" y2="5" stroke="${color}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ''}/></svg>`;

/** One drawing of the series at `size`: one polyline per measured field, vertices at the real samples. */
function chartSvg(series: EnergySeries, size: { width: number; height: number }, cls: string, id: string): string {
  const c = seriesChart(series.points, size.width, size.height);
  const { plot } = c;
  const parts: string[] = [];
  for (const t of c.yTicks) parts.push(`<line class="grid" x1="${plot.left}" x2="${plot.right}" y1="${t.y}" y2="${t.y}"/><text x="${plot.left - 6}" y="${t.y + 4}" text-anchor="end">${esc(t.label)}</text>`);
  parts.push(`<line class="axis" x1="${plot.left}" x2="${plot.left}" y1="${plot.top}" y2="${plot.bottom}"/>`);
  for (const x of c.xLabels) parts.push(`<text x="${x.x}" y="${c.height - 4}" text-anchor="${x.anchor}">${esc(x.label)}</text>`);
  if (series.points.length === 0) parts.push(`<text class="empty" x="${(plot.left + plot.right) / 2}" y="${(plot.top + plot.bottom) / 2}" text-anchor="middle">${esc(c.summary)}</text>`);
  for (const l of c.lines) {
    if (!l.vertices.length) continue;
    parts.push(`<polyline class="line" data-field="${l.field}" points="${l.points}" stroke="${l.color}"${l.dash ? ` stroke-dasharray="${l.dash}"` : ''}><title>${esc(l.label)}</title></polyline>`);
  }
  const intervalS = (series.interval_ms.value ?? 0) / 1000;
  return `<svg class="${cls}" role="img" aria-labelledby="${id}-title ${id}-desc" viewBox="0 0 ${c.width} ${c.height}" width="${c.width}" height="${c.height}" data-points="${series.points.length}"><title id="${id}-title">Measured series: CPU and event-loop use per ${intervalS} s interval</title><desc id="${id}-desc">${esc(c.summary)}</desc>${parts.join('')}</svg>`;
}

/**
 * The measured series as an SVG line chart, drawn twice from the same geometry: wide, and compact
 * for phones (the stylesheet shows one), because a 640-unit drawing scaled to a phone shrinks its
 * labels to half their size.
 */
export function seriesFigure(series: EnergySeries): string {
  const c = seriesChart(series.points, CHART_SIZE.width, CHART_SIZE.height);
  const intervalS = (series.interval_ms.value ?? 0) / 1000;
  const last = series.points[series.points.length - 1];
  const legend = c.lines.map((l) => `<li>${sample(l.color, l.dash)}${esc(l.label)} (${esc(series.fields[l.field].basis)})</li>`).join('');
  const latest = last
    ? `Latest interval: ${last.requests} request${last.requests === 1 ? '' : 's'}, ${quantityText(last.cpu_s, 's')} of CPU, model ${quantityText(last.avg_power_w, 'W')}.`
    : '';
  return `<figure class="series">
${chartSvg(series, CHART_SIZE, 'chart', 'series')}
${chartSvg(series, COMPACT_CHART_SIZE, 'chart-compact', 'series-compact')}
<ul class="chart-legend">${legend}</ul>
<figcaption>One sample every ${intervalS} s, the last ${series.points.length} interval${series.points.length === 1 ? '' : 's'} (at most ${series.max_points.value}). ${esc(latest)} ${esc(series.honesty)}</figcaption>
</figure>`;
}

export function renderPanel(snapshot: Record<string, unknown> & { honesty: string; generated_at: string; series: EnergySeries }): string {
  const data = JSON.stringify(snapshot).replace(/</g, '\\u003c');
  const table = rows('', { window: snapshot.window, measured: snapshot.measured, model: snapshot.model, carbon: snapshot.carbon, per_request: snapshot.per_request } as Record<string, unknown>).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="dark">
<title>Sovereign energy · Drone Intelligence Service</title>
<link rel="icon" href="/jackin/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/shared/energy.css">
</head>
<body class="energy-page">
<header>
<a href="/jackin">&larr; jackin</a>
<h1>Sovereign energy</h1>
</header>
<main>
<p class="honesty">${esc(snapshot.honesty)}</p>
<section aria-labelledby="series-h">
<h2 id="series-h">Measured over time</h2>
${seriesFigure(snapshot.series)}
</section>
<section aria-labelledby="snapshot-h">
<h2 id="snapshot-h">This snapshot</h2>
<p>Taken at <time datetime="${esc(snapshot.generated_at)}">${esc(snapshot.generated_at.slice(0, 19).replace('T', ' '))}Z</time> &middot; JSON: <a href="/api/svc/v1/energy/sovereign">/api/svc/v1/energy/sovereign</a></p>
<div class="table-scroll" role="region" aria-labelledby="snapshot-h" tabindex="0">
<table>
<thead><tr><th>field</th><th>value</th><th>basis</th></tr></thead>
<tbody>
${table}
</tbody>
</table>
</div>
</section>
</main>
<script type="application/json" id="sovereign-snapshot">${data}</script>
</body>
</html>
`;
}
