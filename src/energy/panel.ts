/**
 * The /energy-sovereign HTML panel: the same object /energy/sovereign returns (one snapshot, one
 * chain link), rendered as a table, with the JSON embedded as an inert data block so a reader or
 * a test can check that the page shows exactly the numbers of that snapshot. No script runs.
 */
import type { Quantity } from './quantity.js';

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function rows(prefix: string, node: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(node)) {
    const path = prefix ? `${prefix}.${k}` : k;
    if (v && typeof v === 'object' && 'basis' in v && 'unit' in v) {
      const qv = v as Quantity;
      out.push(`<tr data-field="${esc(path)}"><th>${esc(path)}</th><td class="value">${qv.value === null ? '–' : esc(String(qv.value))}</td><td>${esc(qv.unit)}</td><td>${esc(qv.basis)}</td></tr>`);
    } else if (v && typeof v === 'object' && !Array.isArray(v)) out.push(...rows(path, v as Record<string, unknown>));
  }
  return out;
}

export function renderPanel(snapshot: Record<string, unknown> & { honesty: string; generated_at: string }): string {
  const data = JSON.stringify(snapshot).replace(/</g, '\\u003c');
  const table = rows('', { window: snapshot.window, measured: snapshot.measured, model: snapshot.model, carbon: snapshot.carbon, per_request: snapshot.per_request } as Record<string, unknown>).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Sovereign energy</title>
<style>body{font:14px system-ui,sans-serif;margin:2rem;max-width:60rem}table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:.3rem .5rem;text-align:left}td.value{font-variant-numeric:tabular-nums}</style>
</head>
<body>
<h1>Sovereign energy</h1>
<p>${esc(snapshot.honesty)}</p>
<p>Snapshot at ${esc(snapshot.generated_at)} &middot; JSON: <a href="/api/svc/v1/energy/sovereign">/api/svc/v1/energy/sovereign</a></p>
<table>
<thead><tr><th>field</th><th>value</th><th>unit</th><th>basis</th></tr></thead>
<tbody>
${table}
</tbody>
</table>
<script type="application/json" id="sovereign-snapshot">${data}</script>
</body>
</html>
`;
}
