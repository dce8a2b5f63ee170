/**
 * Event-loop delay and utilisation. The histogram records the whole timer interval, so an idle loop
 * reads about the resolution: we publish percentiles minus the resolution, as
 * @fastify/under-pressure does.
 */
import { monitorEventLoopDelay, performance, type EventLoopUtilization, type IntervalHistogram } from 'node:perf_hooks';

export const ELD_RESOLUTION_MS = 10;
const WATCHDOG_MS = 50;
/** A stall is reported by /health for this long after it ended. */
export const STALL_MEMORY_MS = 60_000;

export class EventLoopMonitor {
  private readonly histogram: IntervalHistogram;
  private lastElu: EventLoopUtilization;

  /** The longest single stall seen by the watchdog, and when it ended (performance.now ms). */
  private stall = { ms: 0, endedAt: -Infinity };
  private readonly watchdog: NodeJS.Timeout;
  private lastTick = performance.now();

  constructor() {
    this.histogram = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
    this.histogram.enable();
    this.lastElu = performance.eventLoopUtilization();
    // a percentile hides one long block among thousands of samples: a watchdog timer remembers
    // the longest stall of the recent past, so /health reports a 17 s block for a while after it
    this.watchdog = setInterval(() => {
      const now = performance.now();
      const late = now - this.lastTick - WATCHDOG_MS;
      this.lastTick = now;
      if (late > 0 && (late >= this.stall.ms || now - this.stall.endedAt > STALL_MEMORY_MS)) this.stall = { ms: late, endedAt: now };
    }, WATCHDOG_MS);
    this.watchdog.unref();
  }

  /** Forgets stalls so far (the app's own build blocks on purpose; that is not service delay). */
  forgetStalls(): void {
    this.stall = { ms: 0, endedAt: -Infinity };
    this.lastTick = performance.now();
    this.histogram.reset();
  }

  /** Longest stall (ms) that ended within the last `windowMs`; 0 when none. */
  recentStallMs(windowMs = STALL_MEMORY_MS, now = performance.now()): number {
    return now - this.stall.endedAt <= windowMs ? this.stall.ms : 0;
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

  /**
   * The one event-loop figure the health views report (/health and /topology/health agree): p50
   * and p99 of the current window, the longest stall of the last minute, and the worse of p99 and
   * that stall (a percentile hides one long block among thousands of samples). In ms.
   */
  report(): { p50Ms: number; p99Ms: number; stallMs: number; worstMs: number; samples: number } {
    const p99Ms = this.delaySeconds(99) * 1000;
    const stallMs = this.recentStallMs();
    return { p50Ms: this.delaySeconds(50) * 1000, p99Ms, stallMs, worstMs: Math.max(p99Ms, stallMs), samples: this.histogram.count };
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
    clearInterval(this.watchdog);
  }
}
