/**
 * /energy/metrics: a JSON view of the same prom-client registry /metrics renders, limited to the
 * process, nodejs, http and energy families. Families are read one by one with metric.get(), so
 * the scrape-window gauges (event-loop delay, which reset on collect) are never touched here.
 */
import type { Registry } from 'prom-client';
import { q } from './quantity.js';
import { ENERGY_SOURCES } from './sources.js';

export const METRIC_PREFIXES = ['process_', 'nodejs_', 'http_', 'svc_energy_'];

export async function metricsBody(registry: Registry) {
  const names = registry
    .getMetricsAsArray()
    .map((m) => m.name)
    .filter((n) => METRIC_PREFIXES.some((p) => n.startsWith(p)));
  const out = [];
  for (const name of names) {
    const v = await registry.getSingleMetric(name)!.get();
    out.push({
      name: v.name,
      help: v.help,
      type: String(v.type),
      basis: v.name.startsWith('svc_energy_') ? 'model' : 'measured',
      values: v.values.map((x: { metricName?: string; labels: object; value: number }) => ({ name: x.metricName ?? v.name, labels: x.labels, value: x.value })),
    });
  }
  out.sort((a, b) => (a.name < b.name ? -1 : 1));
  return {
    schema: 'svc.energy-metrics/v1',
    scraped_at: new Date().toISOString(),
    prefixes: METRIC_PREFIXES,
    families: q(out.length, 'families', 'measured'),
    metrics: out,
    honesty: 'The same registry /metrics exposes, as JSON: process, Node.js and HTTP families are measured, svc_energy_* are model outputs.',
    limits: [{ code: 'SUBSET', detail: 'Pool, kernel and event-loop families are on /metrics only.' }],
    sources: [ENERGY_SOURCES.promClient],
  };
}
