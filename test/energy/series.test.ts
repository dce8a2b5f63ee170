import { expect } from 'chai';
import { intervalPoint } from '../../src/energy/series.js';
import { seriesChart } from '../../src/isomorphic/energy-chart.js';
import { SERIES_FIELDS, type EnergySeries } from '../../src/isomorphic/wire/energy.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';

const API = '/api/svc/v1/energy';
const BASES = ['measured', 'computed', 'model', 'published', 'dataset', 'config', 'input'];
const MODEL = { wMinPerVcpu: 0.74, wMaxPerVcpu: 3.5, pue: 1.2 };

/** Keeps this thread (the service's event loop: the test runs in the same process) busy for `cpuS` CPU seconds. */
function burnCpu(cpuS: number): void {
  const start = process.cpuUsage();
  let x = 0;
  while (true) {
    for (let i = 0; i < 1e5; i++) x += Math.sqrt(i);
    const d = process.cpuUsage(start);
    if ((d.user + d.system) / 1e6 >= cpuS) break;
  }
  if (x < 0) throw new Error('unreachable');
}

describe('energy: the measured series (a ring of real samples)', () => {
  it('a point is the difference of two readings: CPU seconds, utilisation, loop share, requests and the power model of that interval', () => {
    const a = { at: new Date('2026-01-01T00:00:00Z'), uptimeS: 10, cpuUserS: 1, cpuSystemS: 0.5, vcpus: 2, eluActiveS: 2, requestsTotal: 40 };
    const b = { at: new Date('2026-01-01T00:00:05Z'), uptimeS: 15, cpuUserS: 2.5, cpuSystemS: 1, vcpus: 2, eluActiveS: 4.5, requestsTotal: 52 };
    const p = intervalPoint(a, b, MODEL);
    expect(p.at).to.equal('2026-01-01T00:00:05.000Z');
    expect(p.interval_s).to.equal(5);
    expect(p.cpu_s).to.equal(2);
    expect(p.cpu_utilization).to.equal(2 / (5 * 2));
    expect(p.event_loop_utilization).to.equal(0.5);
    expect(p.requests).to.equal(12);
    // CCF: vcpus x (w_min + u (w_max - w_min)); PUE applies to energy, not to power
    expect(p.avg_power_w).to.be.closeTo(2 * (0.74 + 0.2 * (3.5 - 0.74)), 1e-12);
  });

  it('the chart geometry puts one vertex per point, left to right in time, higher values higher up', () => {
    const points = [0.1, 0.4, 0.2].map((u, i) => ({ at: `2026-01-01T00:00:0${i * 2}.000Z`, interval_s: 2, cpu_s: u * 4, cpu_utilization: u, event_loop_utilization: u / 2, requests: i, avg_power_w: 1 }));
    const c = seriesChart(points, 400, 120);
    const cpu = c.lines.find((l) => l.field === 'cpu_utilization')!;
    expect(cpu.vertices.map((v) => v.x)).to.deep.equal([c.plot.left, (c.plot.left + c.plot.right) / 2, c.plot.right]);
    expect(c.yMax).to.equal(0.6); // the smallest step above 0.4 x 1.1
    expect(c.yTicks.map((t) => t.label)).to.deep.equal(['0 %', '30 %', '60 %']);
    expect(cpu.vertices[1]!.y).to.equal(Math.round((c.plot.bottom - (0.4 / 0.6) * (c.plot.bottom - c.plot.top)) * 10) / 10);
    expect(cpu.vertices[1]!.y).to.be.below(cpu.vertices[2]!.y).and.below(cpu.vertices[0]!.y);
    expect(cpu.points.split(' ')).to.have.length(3);
    expect(c.lines.find((l) => l.field === 'event_loop_utilization')!.dash).to.be.a('string');
    expect(seriesChart([], 400, 120).lines.every((l) => l.vertices.length === 0)).to.equal(true);
  });

  describe('GET /energy/sovereign `series` and the /energy-sovereign panel', function () {
    // above the waits' own 60 s limit, so a slow machine fails on the condition it waited for
    this.timeout(120_000);
    let t: TestApp;
    before(async () => {
      t = await buildTestApp({ energy: { seriesIntervalMs: 60, seriesPoints: 6 } });
    });
    after(() => t.close());

    type Read = EnergySeries & { vcpus: number; cpuTotalS: number };
    const series = async (): Promise<Read> => {
      const b = (await t.http.get(`${API}/sovereign`).expect(200)).body;
      return { ...b.series, vcpus: b.measured.vcpus.value, cpuTotalS: b.measured.cpu_user_s.value + b.measured.cpu_system_s.value };
    };
    const waitFor = (ok: (s: EnergySeries) => boolean): Promise<Read> =>
      until('the series to get there', async () => {
        const s = await series();
        return ok(s) ? s : null;
      }, 60_000);

    it('grows from samples taken on the interval, each field stated once with its unit and basis, each point recomputable', async () => {
      const s = await waitFor((x) => x.points.length >= 3);
      expect(s.interval_ms).to.deep.include({ value: 60, unit: 'ms', basis: 'config' });
      expect(s.max_points).to.deep.include({ value: 6, basis: 'config' });
      expect(Object.keys(s.fields)).to.deep.equal([...SERIES_FIELDS]);
      for (const f of Object.values(s.fields)) expect(BASES).to.include(f.basis);
      const times = s.points.map((p) => Date.parse(p.at));
      for (let i = 1; i < times.length; i++) expect(times[i], 'strictly later').to.be.above(times[i - 1]!);
      // the clocks are read with the counters, when the timer fires (not when the meter answers)
      for (let i = 1; i < s.points.length; i++) expect(times[i]! - times[i - 1]!, `point ${i}`).to.be.closeTo(s.points[i]!.interval_s * 1000, 3);
      for (const p of s.points) {
        expect(Object.keys(p).sort()).to.deep.equal(['at', ...SERIES_FIELDS].sort());
        // a timer of 60 ms on a loaded machine fires late, never early
        expect(p.interval_s).to.be.at.least(0.05).and.below(5);
        expect(p.cpu_utilization).to.be.closeTo(p.cpu_s / (p.interval_s * s.vcpus), 1e-9);
        expect(p.avg_power_w).to.be.closeTo(s.vcpus * (0.74 + p.cpu_utilization * (3.5 - 0.74)), 1e-9);
        expect(p.event_loop_utilization).to.be.within(0, 1);
      }
      // the intervals cannot hold more CPU than the process has used since start (read just after them)
      expect(s.points.reduce((n, p) => n + p.cpu_s, 0)).to.be.at.most(s.cpuTotalS);
    });

    it('is bounded: past max_points the oldest points are dropped, and later reads show later points', async () => {
      const first = await waitFor((x) => x.points.length === 6);
      const later = await waitFor((x) => Date.parse(x.points[0]!.at) > Date.parse(first.points[5]!.at));
      expect(later.points).to.have.length(6);
    });

    it('is measured: CPU burnt between two samples shows up in the point of that interval', async () => {
      const before = await waitFor((x) => x.points.length >= 2);
      const lastBefore = Date.parse(before.points.at(-1)!.at);
      burnCpu(0.3);
      const after = await waitFor((x) => x.points.filter((p) => Date.parse(p.at) > lastBefore).length >= 2);
      const busy = after.points.filter((p) => Date.parse(p.at) > lastBefore && p.cpu_s >= 0.3);
      expect(busy, JSON.stringify(after.points)).to.have.length.at.least(1);
      // the loop was blocked for the whole burn: that interval's busy share is high too
      expect(busy[0]!.event_loop_utilization).to.be.above(0.5);
    });

    it('the panel charts the series: one polyline per measured field with a vertex per point, under the strict CSP', async () => {
      await waitFor((x) => x.points.length >= 3);
      const res = await t.http.get('/energy-sovereign').expect(200);
      const embedded = JSON.parse(/<script type="application\/json" id="sovereign-snapshot">(.*?)<\/script>/s.exec(res.text)![1]!) as { series: EnergySeries };
      const n = embedded.series.points.length;
      expect(n).to.be.at.least(3);
      expect(res.text).to.contain(`data-points="${n}"`);
      const chart = seriesChart(embedded.series.points, 640, 200);
      for (const field of ['cpu_utilization', 'event_loop_utilization']) {
        const drawn = new RegExp(`<polyline class="line" data-field="${field}" points="([^"]+)"`).exec(res.text)![1]!;
        expect(drawn.split(' '), field).to.have.length(n);
        expect(drawn, field).to.equal(chart.lines.find((l) => l.field === field)!.points);
      }
      expect(res.text).to.not.match(/<style|\sstyle=/);
      expect(res.text).to.contain('<link rel="stylesheet" href="/shared/energy.css">');
    });
  });
});
