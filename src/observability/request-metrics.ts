/**
 * The metrics every request records (http_requests_total, http_request_duration_seconds, and
 * svc_kernel_run_seconds for a kernel call) without prom-client's per-call work. prom-client
 * validates the label set, builds its hash and looks the series up on every `inc` and `observe`,
 * even through a labelled child: ~0.6 µs a request for the pair, about 8 % of a 404's main thread.
 * Here a request's series are found once per label set and take plain additions.
 *
 * What scrapers and the views read is unchanged: the counter is still a prom-client Counter,
 * brought up to date before anyone reads it (the registry, or `get()`), and the histogram is a
 * metric of its own that hands the registry its values in prom-client's shape, so the registry
 * writes the same exposition a prom-client Histogram fed the same observations would
 * (test/observability/request-metrics.test.ts compares the two byte for byte).
 */
import { Counter, type Metric, type Registry } from 'prom-client';

type Labels<L extends string> = Record<L, string>;

/** The series of one label set in `all`, made on first sight. Callers look it up once and keep it. */
function seriesIn<L extends string, S>(all: Map<string, S>, labels: Labels<L>, make: () => S): S {
  const key = JSON.stringify(labels);
  let s = all.get(key);
  if (!s) all.set(key, (s = make()));
  return s;
}

/** Requests of one label set counted since the counter was last collected. */
export class PendingCount<L extends string> {
  pending = 0;
  constructor(readonly labels: Labels<L>) {}
}

/**
 * A prom-client Counter whose hot path is `series(labels).pending++`, folded into the counter
 * whenever it is read (prom-client calls `collect` first in `get()`, which the registry uses).
 */
export class DeferredCounter<L extends string> extends Counter<L> {
  // a plain field, not #private: prom-client's constructor calls reset() before it exists
  private readonly bySet: Map<string, PendingCount<L>> | undefined = new Map();

  series(labels: Labels<L>): PendingCount<L> {
    return seriesIn(this.bySet!, labels, () => new PendingCount(labels));
  }

  collect(): void {
    for (const s of this.bySet!.values()) {
      if (s.pending > 0) {
        this.inc(s.labels, s.pending);
        s.pending = 0;
      }
    }
  }

  override reset(): void {
    super.reset();
    if (this.bySet) for (const s of this.bySet.values()) s.pending = 0;
  }
}

/** One label set of a histogram: a count per bucket (the last is above every bound), the sum and the count. */
export class HistogramSeries<L extends string> {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Labels<L>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    // prom-client refuses these too: a NaN would poison the sum for good
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

interface ExportedValue {
  value: number;
  labels: Record<string, string | number>;
  metricName: string;
  exemplar?: null;
  sharedLabels?: Record<string, string>;
}

/**
 * A histogram with prom-client's exposition: cumulative `_bucket` series with `le` first, then
 * `+Inf`, `_sum` and `_count`, per label set in the order the sets were first observed.
 */
export class SeriesHistogram<L extends string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  readonly #bounds: readonly number[];
  readonly #series = new Map<string, HistogramSeries<L>>();

  constructor(config: { name: string; help: string; buckets: readonly number[]; registers: Registry[] }) {
    this.name = config.name;
    this.help = config.help;
    if (config.buckets.some((b, i) => i > 0 && b <= config.buckets[i - 1]!)) throw new Error(`${config.name}: buckets must rise`);
    this.#bounds = [...config.buckets];
    // the registry reads a metric through get()/getForPromString(), name, help, type and aggregator
    for (const registry of config.registers) registry.registerMetric(this as unknown as Metric);
  }

  series(labels: Labels<L>): HistogramSeries<L> {
    return seriesIn(this.#series, labels, () => new HistogramSeries(labels, this.#bounds));
  }

  /** What prom-client's Histogram.getForPromString() gives: the labels of a set kept apart as `sharedLabels`. */
  async getForPromString(): Promise<{ name: string; help: string; type: 'histogram'; aggregator: 'sum'; values: ExportedValue[] }> {
    const values: ExportedValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.#series.values()) {
      // a set exists for prom-client from its first observation on (there is no zero() here)
      if (s.count === 0) continue;
      let cumulative = 0;
      for (let i = 0; i < this.#bounds.length; i++) {
        cumulative += s.counts[i]!;
        values.push({ labels: { le: this.#bounds[i]! }, sharedLabels: s.labels, value: cumulative, metricName: bucket, exemplar: null });
      }
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: bucket, exemplar: null },
        { labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${this.name}_sum`, exemplar: undefined },
        { labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_count`, exemplar: undefined },
      );
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** What prom-client's Histogram.get() gives: each value's own and shared labels in one object. */
  async get(): Promise<{ name: string; help: string; type: 'histogram'; aggregator: 'sum'; values: ExportedValue[] }> {
    const data = await this.getForPromString();
    data.values = data.values.map(({ sharedLabels, labels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } }));
    return data;
  }

  /** Every set back to nothing observed (callers keep their series objects: they are zeroed, not dropped). */
  reset(): void {
    for (const s of this.#series.values()) {
      s.counts.fill(0);
      s.sum = 0;
      s.count = 0;
    }
  }
}
