import { expect } from 'chai';
import { Counter, Histogram, Registry } from 'prom-client';
import { DeferredCounter, SeriesHistogram } from '../../src/observability/request-metrics.js';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const NAME = 'http_request_duration_seconds';
const HELP = 'HTTP request duration by route template';

/** The same metrics twice: prom-client's own, and ours, each in a registry of its own. */
function pair() {
  const theirs = new Registry();
  const ours = new Registry();
  const histogram = new Histogram({ name: NAME, help: HELP, labelNames: ['method', 'route'], buckets: BUCKETS, registers: [theirs] });
  const counter = new Counter({ name: 'http_requests_total', help: 'requests', labelNames: ['method', 'route', 'status'], registers: [theirs] });
  const seriesHistogram = new SeriesHistogram<'method' | 'route'>({ name: NAME, help: HELP, buckets: BUCKETS, registers: [ours] });
  const deferred = new DeferredCounter<'method' | 'route' | 'status'>({ name: 'http_requests_total', help: 'requests', labelNames: ['method', 'route', 'status'], registers: [ours] });
  const record = (method: string, route: string, status: string, seconds: number): void => {
    histogram.observe({ method, route }, seconds);
    counter.inc({ method, route, status });
    seriesHistogram.series({ method, route }).observe(seconds);
    deferred.series({ method, route, status }).pending++;
  };
  return { theirs, ours, histogram, counter, seriesHistogram, deferred, record };
}

/** Durations on every bound exactly, between bounds, above the last, zero, and sums that round. */
function durations(n: number): number[] {
  const out: number[] = [...BUCKETS, 0, 1.5, 1e-9, 0.1 + 0.2];
  let x = 0x2545f491;
  while (out.length < n) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out.push((x / 2 ** 32) ** 3 * 1.2);
  }
  return out;
}

const ROUTES: [string, string, string][] = [
  ['GET', 'unmatched', '404'],
  ['GET', '/api/svc/v1/health', '200'],
  ['POST', '/api/svc/v1/verdict', '200'],
  ['POST', '/api/svc/v1/verdict', '422'],
  // label values the exposition has to escape
  ['GET', 'a "quoted"\\back\nslash', '200'],
];

describe('request metrics (hot-path counter and histogram)', () => {
  it('expose byte for byte what prom-client exposes for the same requests', async () => {
    const m = pair();
    durations(600).forEach((s, i) => m.record(...ROUTES[i % ROUTES.length]!, s));
    const expected = await m.theirs.metrics();
    expect(expected).to.include('http_request_duration_seconds_bucket{le="0.001",method="GET",route="unmatched"}');
    expect(await m.ours.metrics()).to.equal(expected);
    expect(await m.ours.getMetricsAsJSON()).to.deep.equal(await m.theirs.getMetricsAsJSON());
    expect(await m.seriesHistogram.get()).to.deep.equal(await m.histogram.get());
  });

  it('count a duration equal to a bound in that bound, and one above every bound in +Inf only', async () => {
    const { seriesHistogram } = pair();
    const s = seriesHistogram.series({ method: 'GET', route: '/x' });
    for (const v of [0.001, 0.0010000001, 2]) s.observe(v);
    const values = (await seriesHistogram.get()).values.filter((v) => v.metricName === `${NAME}_bucket`).map((v) => [v.labels.le, v.value]);
    expect(values.slice(0, 2)).to.deep.equal([
      [0.001, 1],
      [0.0025, 2],
    ]);
    expect(values.at(-2)).to.deep.equal([1, 2]);
    expect(values.at(-1)).to.deep.equal(['+Inf', 3]);
  });

  it('keep counting across collections without counting a request twice', async () => {
    const m = pair();
    m.record('GET', '/a', '200', 0.01);
    await m.ours.metrics();
    m.record('GET', '/a', '200', 0.01);
    m.record('GET', '/a', '500', 0.01);
    await m.deferred.get();
    await m.ours.metrics();
    const values = (await m.deferred.get()).values.map((v) => [v.labels.status, v.value]);
    expect(values).to.deep.equal([
      ['200', 2],
      ['500', 1],
    ]);
    expect(await m.ours.metrics()).to.equal(await m.theirs.metrics());
  });

  it('after a reset, expose only what was observed since, as prom-client does', async () => {
    const m = pair();
    durations(50).forEach((s, i) => m.record(...ROUTES[i % ROUTES.length]!, s));
    m.theirs.resetMetrics();
    m.ours.resetMetrics();
    expect(await m.ours.metrics()).to.equal(await m.theirs.metrics());
    m.record('GET', '/api/svc/v1/health', '200', 0.003);
    const after = await m.ours.metrics();
    expect(after).to.equal(await m.theirs.metrics());
    expect(after).to.include('http_request_duration_seconds_count{method="GET",route="/api/svc/v1/health"} 1');
    expect(after).to.not.include('route="unmatched"');
  });

  it('refuse a duration that is not a finite number, and buckets that do not rise', () => {
    const { seriesHistogram } = pair();
    const s = seriesHistogram.series({ method: 'GET', route: '/x' });
    expect(() => s.observe(Number.NaN)).to.throw(TypeError, 'Value is not a valid number: NaN');
    expect(() => s.observe(Infinity)).to.throw(TypeError);
    expect(s.count).to.equal(0);
    expect(() => new SeriesHistogram({ name: 'h', help: 'h', buckets: [0.1, 0.1], registers: [] })).to.throw('h: buckets must rise');
  });
});
