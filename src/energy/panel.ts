/**
 * The /energy-sovereign HTML panel: the same object /energy/sovereign returns (one snapshot, one
 * chain link), rendered as a table, with the JSON embedded as an inert data block so a reader or
 * a test can check that the page shows exactly the numbers of that snapshot, plus a small inline
 * SVG bar chart of the same fields. No script runs.
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

const num = (q: unknown): number | null => {
  const v = (q as Quantity | undefined)?.value;
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
};
const fmt = (v: number): string => (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toPrecision(3));

/**
 * A small inline SVG of the snapshot (no script): measured CPU seconds (user, system) against the
 * window's capacity (uptime x vCPUs), event-loop utilisation, and the modelled energy split into
 * its CPU-proportional part and the rest. Bars are drawn only from numbers the snapshot holds.
 */
function chart(snapshot: Record<string, any>): string {
  const m = snapshot.measured ?? {};
  const model = snapshot.model ?? {};
  const uptime = num(snapshot.window?.uptime_s);
  const vcpus = num(m.vcpus);
  const user = num(m.cpu_user_s);
  const sys = num(m.cpu_system_s);
  const elu = num(m.event_loop_utilization);
  const total = num(model.energy_j_total);
  const marginal = num(model.energy_j_marginal);
  const W = 420;
  const L = 180; // label column
  const bars: string[] = [];
  let y = 0;
  const bar = (label: string, segments: { v: number; color: string; name: string }[], max: number, note: string) => {
    let x = 0;
    const parts = segments.map((sg) => {
      const w = max > 0 ? Math.max(0, Math.min(W - x, (sg.v / max) * W)) : 0;
      const r = `<rect x="${(L + x).toFixed(1)}" y="${y + 4}" width="${w.toFixed(1)}" height="16" fill="${sg.color}"><title>${esc(`${sg.name}: ${fmt(sg.v)}`)}</title></rect>`;
      x += w;
      return r;
    });
    bars.push(`<g data-bar="${esc(label)}"><text x="0" y="${y + 16}">${esc(label)}</text><rect x="${L}" y="${y + 4}" width="${W}" height="16" fill="none" stroke="#767676"/>${parts.join('')}<text x="${L}" y="${y + 36}" class="note">${esc(note)}</text></g>`);
    y += 46;
  };
  if (uptime !== null && vcpus !== null && user !== null && sys !== null) {
    bar('CPU time (measured)', [{ v: user, color: '#0072b2', name: 'user s' }, { v: sys, color: '#d55e00', name: 'system s' }], uptime * vcpus, `user ${fmt(user)} s + system ${fmt(sys)} s of ${fmt(uptime * vcpus)} vCPU·s`);
  }
  if (elu !== null) bar('Event loop busy (measured)', [{ v: elu, color: '#009e73', name: 'utilisation' }], 1, `${(elu * 100).toFixed(1)} % of the window`);
  if (total !== null && marginal !== null) {
    bar('Energy (model)', [{ v: marginal, color: '#cc79a7', name: 'CPU-proportional J' }, { v: Math.max(0, total - marginal), color: '#8c8c8c', name: 'idle share J' }], total, `${fmt(total)} J total, ${fmt(marginal)} J CPU-proportional`);
  }
  if (!bars.length) return '';
  return `<figure><svg role="img" aria-labelledby="chart-title" viewBox="0 0 ${L + W + 10} ${y}" width="${L + W + 10}" height="${y}" font-size="12" font-family="system-ui, sans-serif"><title id="chart-title">This snapshot: CPU time, event-loop use and modelled energy</title>${bars.join('')}</svg><figcaption>Bars from this snapshot's fields; the table below lists every value with its unit and basis.</figcaption></figure>`;
}

export function renderPanel(snapshot: Record<string, unknown> & { honesty: string; generated_at: string }): string {
  const data = JSON.stringify(snapshot).replace(/</g, '\\u003c');
  const table = rows('', { window: snapshot.window, measured: snapshot.measured, model: snapshot.model, carbon: snapshot.carbon, per_request: snapshot.per_request } as Record<string, unknown>).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Sovereign energy</title>
<style>body{font:14px system-ui,sans-serif;margin:2rem;max-width:60rem}table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:.3rem .5rem;text-align:left}td.value{font-variant-numeric:tabular-nums}figure{margin:1rem 0}.note{fill:#555}figcaption{color:#555;font-size:12px}</style>
</head>
<body>
<h1>Sovereign energy</h1>
<p>${esc(snapshot.honesty)}</p>
<p>Snapshot at ${esc(snapshot.generated_at)} &middot; JSON: <a href="/api/svc/v1/energy/sovereign">/api/svc/v1/energy/sovereign</a></p>
${chart(snapshot)}
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
