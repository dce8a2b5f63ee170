/**
 * Event-loop delay and utilisation. The histogram records the whole timer interval, so an idle
 * loop reads about the resolution: we publish percentiles minus the resolution, as
 * @fastify/under-pressure does (node-perf-style note 1.3).
 */
import { monitorEventLoopDelay, performance, type EventLoopUtilization, type IntervalHistogram } from 'node:perf_hooks';

export const ELD_RESOLUTION_MS = 10;

export class EventLoopMonitor {
  private readonly histogram: IntervalHistogram;
  private lastElu: EventLoopUtilization;

  constructor() {
    this.histogram = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
    this.histogram.enable();
    this.lastElu = performance.eventLoopUtilization();
  }

  /** Delay percentile in seconds with the resolution subtracted (never below 0). */
  delaySeconds(percentile: number): number {
    if (this.histogram.count === 0) return 0;
    return Math.max(0, this.histogram.percentile(percentile) / 1e9 - ELD_RESOLUTION_MS / 1000);
  }

  maxDelaySeconds(): number {
    if (this.histogram.count === 0) return 0;
    return Math.max(0, this.histogram.max / 1e9 - ELD_RESOLUTION_MS / 1000);
  }

  /** Utilisation since the previous call (a scrape window). */
  utilization(): number {
    const now = performance.eventLoopUtilization();
    const delta = performance.eventLoopUtilization(now, this.lastElu);
    this.lastElu = now;
    return delta.utilization;
  }

  /** Starts a new window; called after each scrape so the percentiles describe one interval. */
  reset(): void {
    this.histogram.reset();
  }

  close(): void {
    this.histogram.disable();
  }
}
