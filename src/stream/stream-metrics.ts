/** The SSE stream's Prometheus metrics: viewers, fan-out time, and the hub's totals as counters. */
import { Counter, Gauge, Histogram } from 'prom-client';
import type { StreamServices } from './sources.js';
import type { SseHub } from './hub.js';

/** Registers the stream's metrics and has the hub report each fan-out's time. */
export function registerStreamMetrics(s: StreamServices, hub: SseHub): void {
  const fanout = new Histogram({
    name: 'svc_sse_fanout_seconds',
    help: 'Time from publishing one event to its write to the last SSE viewer (a slice of viewers per event-loop turn)',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
    registers: [s.metrics.registry],
  });
  new Gauge({ name: 'svc_sse_viewers', help: 'Connected SSE viewers', registers: [s.metrics.registry], collect() { this.set(hub.stats().viewers); } });
  // the hub keeps the totals; these counters catch up with them at scrape time
  const hubCounter = (name: string, help: string, total: () => number) => {
    let seen = 0;
    new Counter({ name, help, registers: [s.metrics.registry], collect() { const now = total(); this.inc(now - seen); seen = now; } });
  };
  hubCounter('svc_sse_events_published_total', 'Verdict events published to the SSE stream', () => hub.stats().events);
  hubCounter('svc_sse_viewers_dropped_total', 'SSE viewers dropped for too many unacknowledged bytes (queued in the process or in the kernel)', () => hub.stats().dropped);
  hubCounter('svc_sse_replays_cut_total', 'SSE resumes whose replay stopped at a byte budget (ended with event: catchup)', () => hub.stats().catchups);
  const onFanout = (seconds: number): void => fanout.observe(seconds);
  hub.onFanout = onFanout;
}
