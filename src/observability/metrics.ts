/**
 * One prom-client Registry per app (collectDefaultMetrics is not idempotent, and tests build many
 * apps). Routes are labelled by template, kernels by id: label cardinality stays bounded.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { SHED_CODES } from '../http/errors.js';
import type { EventLoopMonitor } from './event-loop.js';
import { DeferredCounter, SeriesHistogram, type HistogramSeries, type PendingCount } from './request-metrics.js';

/** Latency buckets around the SLO, in seconds (at most ~8 per histogram). */
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const KERNEL_BUCKETS = [0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5];

export interface PoolSnapshot {
  threads: number;
  queueSize: number;
  utilization: number;
  completed: number;
  /** Worker threads lost since start outside a deadline kill (exited, or ended at their heap cap). */
  crashes: number;
  waitP99Ms: number;
  runP99Ms: number;
  /** Tasks the pool refused or cut short since start, by reason (counters: they only rise). */
  rejections: Record<PoolRejection, number>;
}

/** Shed at submission (estimated wait or queue cap), shed at dispatch (its deadline no longer fit),
 * or terminated past its deadline plus the kill grace. */
export type PoolRejection = 'admission' | 'dispatch' | 'killed';

export class Metrics {
  readonly registry = new Registry();
  /** Every request's two series, counted without prom-client's per-call work (request-metrics.ts). */
  readonly httpRequests: DeferredCounter<'method' | 'route' | 'status'>;
  readonly #requestDuration: SeriesHistogram<'method' | 'route'>;
  /** Observed on every kernel call: the same hot-path histogram as the request duration's. */
  readonly kernelRun: SeriesHistogram<'kernel' | 'outcome'>;
  /** Requests answered 503/504 by load shedding (pool, capacity, rate limit, deadline), by code. */
  readonly shed: Counter<'code'>;
  readonly connectionsRefused: Counter;

  constructor(private readonly eventLoop: EventLoopMonitor) {
    collectDefaultMetrics({ register: this.registry });
    // prom-client names three gauges `*_total`, a suffix reserved for counters (promtool lint);
    // the same values are exported without it, labelled by type, as nodejs_active_{handles,requests,resources}
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) this.registry.removeSingleMetric(name);
    const registers = [this.registry];
    this.httpRequests = new DeferredCounter({ name: 'http_requests_total', help: 'HTTP requests by route template and status', labelNames: ['method', 'route', 'status'], registers });
    this.#requestDuration = new SeriesHistogram({ name: 'http_request_duration_seconds', help: 'HTTP request duration by route template', buckets: HTTP_BUCKETS, registers });
    this.kernelRun = new SeriesHistogram({ name: 'svc_kernel_run_seconds', help: 'Kernel run time reported by the worker (not including queue wait)', buckets: KERNEL_BUCKETS, registers });
    this.shed = new Counter({ name: 'svc_requests_shed_total', help: 'Requests shed with 503/504 (pool full, capacity, rate limit, deadline) by error code', labelNames: ['code'], registers });
    // every code from the first scrape, so a shed ratio reads 0 rather than nothing before the first shed
    for (const code of SHED_CODES) this.shed.inc({ code }, 0);
    this.connectionsRefused = new Counter({ name: 'svc_connections_refused_total', help: 'Connections refused at the connection cap', registers });
    const loop = this.eventLoop;
    new Gauge({
      name: 'svc_event_loop_delay_seconds',
      // `percentile`, not `quantile`: that label belongs to summaries (promtool lint)
      help: `Event-loop delay percentile since the last scrape, resolution (${10} ms) subtracted`,
      labelNames: ['percentile'],
      registers,
      collect() {
        this.set({ percentile: '50' }, loop.delaySeconds(50));
        this.set({ percentile: '99' }, loop.delaySeconds(99));
        this.set({ percentile: '100' }, loop.maxDelaySeconds());
        loop.reset();
      },
    });
    new Gauge({
      name: 'svc_event_loop_utilization',
      help: 'Event-loop utilisation (busy ratio) since the last scrape',
      registers,
      collect() {
        this.set(loop.utilization());
      },
    });
  }

  private readonly requestSeries = new Map<string, { count: PendingCount<'method' | 'route' | 'status'>; duration: HistogramSeries<'method' | 'route'> }>();

  /** Hot path: one Map lookup per request finds both series of its label set. */
  recordRequest(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let series = this.requestSeries.get(key);
    if (!series) {
      series = { count: this.httpRequests.series({ method, route, status: String(status) }), duration: this.#requestDuration.series({ method, route }) };
      this.requestSeries.set(key, series);
    }
    series.count.pending++;
    series.duration.observe(seconds);
  }

  /** Pool gauges read at scrape time from the live pool. */
  observePool(read: () => PoolSnapshot): void {
    const registers = [this.registry];
    // one snapshot per scrape, shared by the six gauges
    let cached: { at: number; value: PoolSnapshot } | null = null;
    const snapshot = (): PoolSnapshot => {
      const now = performance.now();
      if (!cached || now - cached.at > 100) cached = { at: now, value: read() };
      return cached.value;
    };
    const gauge = (name: string, help: string, read: (s: PoolSnapshot) => number): void => {
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read(snapshot()));
        },
      });
    };
    gauge('svc_pool_threads', 'Worker threads alive', (s) => s.threads);
    gauge('svc_pool_queue_size', 'Tasks waiting for a worker', (s) => s.queueSize);
    gauge('svc_pool_utilization', 'Pool utilisation (0..1) as reported by piscina', (s) => s.utilization);
    // totals that only rise are counters (promtool lint), caught up with the pool's at scrape time
    const total = (name: string, help: string, read: (s: PoolSnapshot) => number): void => {
      let seen = 0;
      new Counter({
        name,
        help,
        registers,
        collect() {
          const now = read(snapshot());
          if (now > seen) this.inc(now - seen);
          seen = now;
        },
      });
    };
    total('svc_pool_completed_tasks_total', 'Tasks completed since start', (s) => s.completed);
    total('svc_pool_crashes_total', 'Worker threads lost since start (exited, or ended at their heap cap, pool.maxOldGenerationSizeMb); piscina starts a successor', (s) => s.crashes);
    // the pool keeps the counts (in-process callers such as signing are shed too, not only routes)
    const rejectionsSeen: Record<PoolRejection, number> = { admission: 0, dispatch: 0, killed: 0 };
    new Counter({
      name: 'svc_pool_rejections_total',
      help: 'Pool tasks refused or cut short, by reason: admission, dispatch (shed when a thread freed), killed (past deadline + grace)',
      labelNames: ['reason'],
      registers,
      collect() {
        const now = snapshot().rejections;
        for (const reason of Object.keys(rejectionsSeen) as PoolRejection[]) {
          // inc(0) makes every reason visible from the first scrape
          this.inc({ reason }, Math.max(0, now[reason] - rejectionsSeen[reason]));
          rejectionsSeen[reason] = Math.max(rejectionsSeen[reason], now[reason]);
        }
      },
    });
    gauge('svc_pool_wait_p99_seconds', 'p99 queue wait since start', (s) => s.waitP99Ms / 1000);
    gauge('svc_pool_run_p99_seconds', 'p99 run time since start', (s) => s.runP99Ms / 1000);
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
