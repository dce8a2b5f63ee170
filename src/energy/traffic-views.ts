/**
 * /energy/throughput, /energy/gateway and /energy/router: golden signals read from the app's
 * registry, the pool and the server tap. Energy per route is an attribution of the sovereign
 * marginal energy, labelled model and approximate.
 */
import type { RouteDef } from '../http/route.js';
import type { EnergyServices } from './energy.routes.js';
import { powerModel, type Reading } from './meter.js';
import { mergeHistogram, quantile, samples, sumWhere, type Sample } from './prom.js';
import { q } from './quantity.js';
import { ENERGY_SOURCES } from './sources.js';
import type { CounterSnapshot, RequestWindows, ServerTap } from './traffic.js';

const ms = (s: number | null): number | null => (s === null ? null : s * 1000);

export async function throughputBody(s: EnergyServices, r: Reading, windows: RequestWindows, now: CounterSnapshot) {
  const http = await samples(s.metrics.registry, 'http_request_duration_seconds');
  const kern = await samples(s.metrics.registry, 'svc_kernel_run_seconds');
  const lat = mergeHistogram(http, 'http_request_duration_seconds');
  const run = mergeHistogram(kern, 'svc_kernel_run_seconds', (l) => l.outcome === 'ok');
  const pool = s.pool.detailedSnapshot();
  const win = (sec: number | null) => {
    const w = windows.window(now, sec);
    const span = sec === null ? r.uptimeS : w.covered_s;
    return {
      covered_s: q(span, 's', 'measured'),
      requests: q(w.requests, 'requests', 'measured'),
      rps: q(span > 0 ? w.requests / span : null, 'requests/s', 'computed', 'requests / covered_s'),
      by_status_class: Object.fromEntries(Object.entries(w.by_status_class).map(([k, v]) => [k, q(v, 'requests', 'measured')])),
    };
  };
  return {
    schema: 'svc.energy-throughput/v1',
    generated_at: r.at.toISOString(),
    windows: { '60s': win(60), '300s': win(300), since_start: win(null) },
    latency_ms: {
      p50: q(ms(quantile(lat, 0.5)), 'ms', 'measured', 'bucket-interpolated from http_request_duration_seconds'),
      p95: q(ms(quantile(lat, 0.95)), 'ms', 'measured'),
      p99: q(ms(quantile(lat, 0.99)), 'ms', 'measured'),
    },
    kernels: {
      tasks_completed: q(pool.completed, 'tasks', 'measured', 'piscina completed counter (all pool tasks)'),
      run_time_ms: { p50: q(ms(quantile(run, 0.5)), 'ms', 'measured'), p99: q(ms(quantile(run, 0.99)), 'ms', 'measured') },
      wait_time_ms: { p99: q(pool.waitP99Ms, 'ms', 'measured', 'piscina wait-time histogram') },
      utilization: q(pool.utilization, 'ratio', 'measured'),
    },
    sse: await sseBody(s),
    honesty: 'Every value is read from this process: the request counter and histogram behind /metrics, and the worker pool.',
    limits: [{ code: 'WINDOW_SAMPLING', detail: 'The 60 s and 300 s windows start at the oldest 5-second snapshot inside them; covered_s states the span.' }],
    sources: [ENERGY_SOURCES.goldenSignals, ENERGY_SOURCES.promClient],
  };
}

/** SSE counters from the stream feature's gauges; null when the stream feature is not mounted. */
async function sseBody(s: EnergyServices) {
  const read = async (name: string, unit: string, basis: string) => {
    const list = await samples(s.metrics.registry, name);
    return q(list.length ? sumWhere(list) : null, unit, 'measured', list.length ? basis : 'the stream feature is not mounted');
  };
  return {
    open_streams: await read('svc_sse_viewers', 'streams', 'svc_sse_viewers gauge'),
    events_published: await read('svc_sse_events_published_total', 'events', 'svc_sse_events_published_total (one per verdict, fanned out to every viewer)'),
    viewers_dropped: await read('svc_sse_viewers_dropped_total', 'streams', 'svc_sse_viewers_dropped_total'),
  };
}

const byStatus = (list: readonly Sample[], pred: (code: number) => boolean): number => sumWhere(list, (l) => pred(Number(l.status)));

export async function gatewayBody(s: EnergyServices, r: Reading, tap: ServerTap, windows: RequestWindows, now: CounterSnapshot) {
  const counts = await samples(s.metrics.registry, 'http_requests_total');
  const dur = mergeHistogram(await samples(s.metrics.registry, 'http_request_duration_seconds'), 'http_request_duration_seconds');
  const m = powerModel(r, s.config.energy);
  const cpuS = r.cpuUserS + r.cpuSystemS;
  const share = cpuS > 0 ? Math.min(1, r.eluActiveS / cpuS) : 0;
  const pool = s.pool.detailedSnapshot();
  const rate = windows.window(now, 60);
  const bytes = tap.bytes();
  const tapNote = `counted by the server tap since ${tap.attachedAt ?? 'never'} (the first energy request)`;
  return {
    schema: 'svc.energy-gateway/v1',
    generated_at: r.at.toISOString(),
    in_flight: q(tap.inFlight, 'requests', 'measured', `${tapNote}; includes this request`),
    requests_total: q(r.requestsTotal, 'requests', 'measured'),
    rate_1m: q(rate.covered_s > 0 ? rate.requests / rate.covered_s : null, 'requests/s', 'computed'),
    errors: {
      '4xx': q(byStatus(counts, (c) => c >= 400 && c < 500), 'requests', 'measured'),
      '5xx': q(byStatus(counts, (c) => c >= 500), 'requests', 'measured'),
      by_code: Object.fromEntries([404, 405, 413, 415, 422, 499, 500, 503, 504].map((c) => [String(c), q(byStatus(counts, (x) => x === c), 'requests', 'measured')])),
    },
    duration_seconds: {
      buckets: dur.buckets.map((b) => ({ le: b.le === Infinity ? '+Inf' : b.le, count: q(b.count, 'requests', 'measured') })),
      count: q(dur.count, 'requests', 'measured'),
      sum: q(dur.sum, 's', 'measured'),
    },
    bytes: { in: q(bytes.in, 'B', 'measured', tapNote), out: q(bytes.out, 'B', 'measured', tapNote) },
    sse_open: q(null, 'streams', 'measured', 'the stream feature publishes no counters to this view'),
    event_loop: {
      delay_p50_ms: q(s.eventLoop.delaySeconds(50) * 1000, 'ms', 'measured', 'since the last /metrics scrape, timer resolution subtracted'),
      delay_p99_ms: q(s.eventLoop.delaySeconds(99) * 1000, 'ms', 'measured'),
      utilization: q(r.elu, 'ratio', 'measured', 'since this app was built'),
    },
    saturation: { worker_queue: q(pool.queueSize, 'tasks', 'measured'), worker_queue_max: q(s.config.pool.maxQueue, 'tasks', 'config'), pool_utilization: q(pool.utilization, 'ratio', 'measured') },
    energy: {
      main_thread_share: q(share, 'ratio', 'model', 'event-loop active seconds / process CPU seconds, capped at 1'),
      j_marginal: q(share * m.energyJMarginal, 'J', 'model', 'main_thread_share x energy_j_marginal of /energy/sovereign'),
    },
    honesty: 'Counters come from this process (registry, pool, server tap); the energy split is a model.',
    limits: [{ code: 'TAP_SINCE_FIRST_USE', detail: 'in_flight and bytes count from the first energy request on this server.' }],
    sources: [ENERGY_SOURCES.goldenSignals, ENERGY_SOURCES.promClient],
  };
}

export async function routerBody(s: EnergyServices, r: Reading) {
  const counts = await samples(s.metrics.registry, 'http_requests_total');
  const durs = await samples(s.metrics.registry, 'http_request_duration_seconds');
  const kern = await samples(s.metrics.registry, 'svc_kernel_run_seconds');
  const m = powerModel(r, s.config.energy);
  const cpuS = r.cpuUserS + r.cpuSystemS;
  const methods = (d: RouteDef): string[] => (d.method === 'GET' ? ['GET', 'HEAD'] : [d.method]);
  const rows = s.routeTable().map((d) => {
    const mine = (l: Sample['labels']): boolean => l.route === d.path && methods(d).includes(String(l.method));
    const h = mergeHistogram(durs, 'http_request_duration_seconds', mine);
    const kernelId = d.kernel ?? null;
    const workerS = kernelId ? mergeHistogram(kern, 'svc_kernel_run_seconds', (l) => l.kernel === kernelId).sum : 0;
    return { d, requests: sumWhere(counts, mine), errors: sumWhere(counts, (l) => mine(l) && Number(l.status) >= 400), h, wallS: h.sum, workerS };
  });
  // main-thread active time is spread over routes by their wall time; worker run time is the kernel's own
  const wallTotal = rows.reduce((a, x) => a + x.wallS, 0);
  const attributed = rows.map((x) => x.workerS + (wallTotal > 0 ? (x.wallS / wallTotal) * r.eluActiveS : 0));
  const denom = Math.max(cpuS, attributed.reduce((a, b) => a + b, 0));
  return {
    schema: 'svc.energy-router/v1',
    generated_at: r.at.toISOString(),
    attribution: 'approximate under concurrency',
    method: {
      cpu_ms_attributed: 'kernel run time reported by the worker + event-loop active time x (route wall time / all routes wall time)',
      share: 'cpu_ms_attributed / max(process CPU, sum of attributions); shares never sum above 1',
      energy_j_marginal: 'share x energy_j_marginal of /energy/sovereign',
    },
    routes: rows.map((x, i) => {
      const share = denom > 0 ? attributed[i]! / denom : 0;
      return {
        method: x.d.method,
        template: x.d.path,
        group: x.d.tag,
        requests: q(x.requests, 'requests', 'measured'),
        errors: q(x.errors, 'requests', 'measured'),
        latency_ms: { p50: q(ms(quantile(x.h, 0.5)), 'ms', 'measured'), p95: q(ms(quantile(x.h, 0.95)), 'ms', 'measured') },
        cpu_ms_attributed: q(attributed[i]! * 1000, 'ms', 'model'),
        share: q(share, 'ratio', 'model'),
        energy_j_marginal: q(share * m.energyJMarginal, 'J', 'model'),
      };
    }),
    honesty: 'Request counts and latencies are measured; the split of CPU time and energy across routes is an approximation.',
    limits: [{ code: 'APPROXIMATE_ATTRIBUTION', detail: 'Concurrent requests share the event loop; attribution by wall time is approximate.' }],
    sources: [ENERGY_SOURCES.ccf, ENERGY_SOURCES.promClient],
  };
}
