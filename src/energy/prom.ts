/**
 * Reads from the app's own prom-client registry (the same one /metrics renders): counter sums
 * filtered by labels, and quantiles estimated from histogram buckets the way PromQL's
 * histogram_quantile does (linear within the bucket). Reading a metric never resets it.
 */
import type { Registry } from 'prom-client';

export interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

export async function samples(registry: Registry, name: string): Promise<Sample[]> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return [];
  return ((await metric.get()).values as Sample[]) ?? [];
}

export function sumWhere(list: readonly Sample[], pred: (labels: Sample['labels']) => boolean = () => true, metricName?: string): number {
  let s = 0;
  for (const x of list) if ((metricName === undefined || x.metricName === metricName) && pred(x.labels)) s += x.value;
  return s;
}

export interface Buckets {
  /** Cumulative counts per upper bound, +Inf last. */
  buckets: { le: number; count: number }[];
  count: number;
  sum: number;
}

/** Merges the histogram series that match `pred` into one set of cumulative buckets. */
export function mergeHistogram(list: readonly Sample[], name: string, pred: (labels: Sample['labels']) => boolean = () => true): Buckets {
  const byLe = new Map<number, number>();
  let count = 0;
  let sum = 0;
  for (const x of list) {
    if (!pred(x.labels)) continue;
    if (x.metricName === `${name}_bucket`) {
      const le = x.labels.le === '+Inf' ? Infinity : Number(x.labels.le);
      byLe.set(le, (byLe.get(le) ?? 0) + x.value);
    } else if (x.metricName === `${name}_count`) count += x.value;
    else if (x.metricName === `${name}_sum`) sum += x.value;
  }
  const buckets = [...byLe].sort(([a], [b]) => a - b).map(([le, c]) => ({ le, count: c }));
  return { buckets, count, sum };
}

/** histogram_quantile: null without observations; the highest finite bound when q falls in +Inf. */
export function quantile(h: Buckets, qn: number): number | null {
  if (h.count === 0 || h.buckets.length === 0) return null;
  const rank = qn * h.count;
  let prevLe = 0;
  let prevCount = 0;
  for (const b of h.buckets) {
    if (b.count >= rank) {
      if (b.le === Infinity) return prevLe;
      return prevLe + ((b.le - prevLe) * (rank - prevCount)) / Math.max(1e-300, b.count - prevCount);
    }
    prevLe = b.le;
    prevCount = b.count;
  }
  return prevLe;
}
