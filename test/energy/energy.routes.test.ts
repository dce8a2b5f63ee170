import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalJson, sha256Hex } from '../../src/lib/numbers.js';
import { buildTestApp, parsePrometheus, testConfig, type TestApp } from '../helpers/app.js';
import { burn } from '../helpers/faults.js';
import { openSse } from '../helpers/sse.js';
import { quantityText } from '../../src/energy/quantity-text.js';

const API = '/api/svc/v1/energy';
const VIEWS = ['sovereign', 'jtoken', 'throughput', 'kvcache', 'gateway', 'router', 'carbon', 'metrics'];
type Rec = Record<string, any>;
const val = (x: Rec): number => x.value as number;
const rel = (a: number, b: number): number => Math.abs(a - b) / Math.max(Math.abs(b), 1e-300);

/** Every {value, unit, basis} triple in a body, with its path. */
function quantities(node: unknown, path = '$', out: [string, Rec][] = []): [string, Rec][] {
  if (node && typeof node === 'object') {
    if (!Array.isArray(node) && 'value' in node && 'unit' in node && 'basis' in node) out.push([path, node as Rec]);
    else for (const [k, v] of Object.entries(node)) quantities(v, `${path}.${k}`, out);
  }
  return out;
}

/** Paths (array indices as []) of every number that is not the value of a {value, unit, basis} triple. */
function bareNumbers(node: unknown, path = '$', out: string[] = []): string[] {
  if (typeof node === 'number') out.push(path.replace(/\.\d+(?=\.|$)/g, '[]'));
  else if (node && typeof node === 'object') {
    if (!Array.isArray(node) && 'value' in node && 'unit' in node && 'basis' in node) return out;
    for (const [k, v] of Object.entries(node)) bareNumbers(v, `${path}.${k}`, out);
  }
  return out;
}

/** The numbers allowed without a basis triple, each with the reason it is not a quantity. */
const NOT_QUANTITIES: Record<string, string> = {
  '$.receipt_link.seq': 'a sequence number of the snapshot chain, not a measurement',
  '$.defaults_example.params.seed': 'an input parameter of the example call, echoed',
  '$.defaults_example.params.tokens': 'an input parameter of the example call, echoed',
  '$.defaults_example.params.power_w': 'an input parameter of the example call, echoed',
  '$.defaults_example.params.latency_s': 'an input parameter of the example call, echoed',
  '$.defaults_example.params.grid_gco2_per_kwh': 'an input parameter of the example call, echoed',
  '$.duration_seconds.buckets[].le': 'a histogram bucket bound (configuration of the histogram, beside its measured counts)',
  '$.metrics[].values[].labels.le': 'a Prometheus label, not a value',
  '$.metrics[].values[].labels.major': 'a Prometheus label (Node version), not a value',
  '$.metrics[].values[].labels.minor': 'a Prometheus label (Node version), not a value',
  '$.metrics[].values[].labels.patch': 'a Prometheus label (Node version), not a value',
  '$.metrics[].values[].value': 'a sample of a metric whose basis is stated once on the metric (checked below)',
  ...Object.fromEntries(['interval_s', 'cpu_s', 'cpu_utilization', 'event_loop_utilization', 'requests', 'avg_power_w'].map((f) => [`$.series.points[].${f}`, 'a point of the measured series; its unit and basis are stated once in series.fields (checked in series.test.ts)'])),
};

describe('energy routes', () => {
  let t: TestApp;
  const get = async (r: string): Promise<Rec> => {
    const res = await t.http.get(`${API}/${r}`);
    expect(res.status, r).to.equal(200);
    return res.body as Rec;
  };
  before(async () => {
    t = await buildTestApp({}, { faults: true }); // a fault kernel that burns CPU gives worker CPU time
  });
  after(() => t.close());

  it('every view: envelope, basis on every number, and a link of the snapshot chain', async () => {
    for (const r of VIEWS) {
      const b = await get(r);
      expect(b.schema, r).to.equal(`svc.energy-${r}/v1`);
      expect(b.doctrine).to.equal('v11');
      expect(b.honesty).to.be.a('string').and.not.equal('');
      expect(b.limits.length).to.be.greaterThan(0);
      for (const s of b.sources) expect(s).to.have.keys('leader', 'kind', 'url', 'data_kind');
      for (const [path, qv] of quantities(b)) expect(['measured', 'computed', 'model', 'published', 'dataset', 'config', 'input'], `${r} ${path}`).to.include(qv.basis);
      // a bare number (no basis) is allowed only where it is not a quantity, and each such place is listed
      for (const path of bareNumbers(b)) expect(NOT_QUANTITIES, `${r}: bare number at ${path}`).to.have.property(path);
      if (r === 'metrics') for (const m of b.metrics as Rec[]) expect(['measured', 'computed', 'model', 'published', 'dataset', 'config', 'input'], `metrics ${m.name}`).to.include(m.basis);
      if (r !== 'metrics') expect(quantities(b).length, r).to.be.greaterThan(3);
    }
  });

  it('errors: POST is 405, an unknown query parameter is 422 extra_forbidden (views and the panel)', async () => {
    for (const path of [...VIEWS.map((r) => `${API}/${r}`), '/energy-sovereign']) {
      expect((await t.http.post(path)).status, path).to.equal(405);
      const bad = await t.http.get(`${path}?window=60`);
      expect(bad.status, path).to.equal(422);
      expect(bad.body.detail[0]).to.include({ type: 'extra_forbidden' });
    }
  });

  it('chain: each view links to the previous one, hashes recompute, and /energy/receipt continues the chain', async () => {
    const a = await get('sovereign');
    const b = await get('carbon');
    expect(b.receipt_link.prev_hash).to.equal(a.receipt_link.hash);
    expect(b.receipt_link.seq).to.equal(a.receipt_link.seq + 1);
    for (const body of [a, b]) {
      const { hash, ...link } = body.receipt_link;
      expect(sha256Hex(canonicalJson({ ...body, receipt_link: link }))).to.equal(hash);
    }
    const tampered = { ...b, carbon_note: 'x', receipt_link: { ...b.receipt_link, hash: undefined } };
    expect(sha256Hex(canonicalJson(tampered))).to.not.equal(b.receipt_link.hash);
    const receipt = await t.http.get(`${API}/receipt?prev_hash=${b.receipt_link.hash}`);
    expect(receipt.status).to.equal(200);
    expect(receipt.body.result.receipt.prev_hash).to.equal(b.receipt_link.hash);
    expect(sha256Hex(canonicalJson(receipt.body.result.receipt))).to.equal(receipt.body.result.hash);
    const upper = await t.http.get(`${API}/receipt?prev_hash=${b.receipt_link.hash.toUpperCase()}`);
    expect(upper.status).to.equal(200);
    expect(upper.body.result.receipt.prev_hash).to.equal(b.receipt_link.hash);
    expect(upper.body.result.hash).to.equal(receipt.body.result.hash);
    expect((await t.http.get(`${API}/receipt?prev_hash=xyz`)).status).to.equal(422);
  });

  it('/sovereign: energy and carbon recompute from the returned inputs; requests_total follows requests', async () => {
    const before = await get('sovereign');
    for (let i = 0; i < 5; i++) await t.http.get('/api/svc/v1/health');
    const b = await get('sovereign');
    const m = b.measured;
    const c = b.model.coefficients;
    const cpu = val(m.cpu_user_s) + val(m.cpu_system_s);
    const u = cpu / (val(b.window.uptime_s) * val(m.vcpus));
    expect(rel(val(m.cpu_utilization), u)).to.be.below(1e-9);
    const total = (val(c.w_min_per_vcpu) + u * (val(c.w_max_per_vcpu) - val(c.w_min_per_vcpu))) * val(m.vcpus) * val(b.window.uptime_s) * val(c.pue);
    expect(rel(val(b.model.energy_j_total), total)).to.be.below(1e-9);
    expect(rel(val(b.model.energy_kwh), total / 3.6e6)).to.be.below(1e-9);
    expect(rel(val(b.carbon.gco2e), val(b.model.energy_kwh) * val(b.carbon.grid_gco2_per_kwh))).to.be.below(1e-9);
    expect(val(m.requests_total) - val(before.measured.requests_total)).to.be.at.least(6);
    expect(val(b.window.uptime_s)).to.be.greaterThan(val(before.window.uptime_s));
    expect(b.model.coefficients.w_min_per_vcpu).to.include({ value: 0.74, basis: 'config' });
  });

  it('/sovereign: CPU time rises with a worker task (worker CPU is included); marginal energy never decreases; the panel shows the same snapshot', async () => {
    const a = await get('sovereign');
    // the worker burns 250 ms of CPU (measured in CPU time, so a loaded machine cannot shrink it);
    // a view that counted only the main thread would rise by a fraction of that
    // (a deadline a loaded machine's niced kernel thread meets: 250 ms of CPU can take seconds of wall time)
    await t.services.pool.run(burn(250), { deadlineMs: 120_000 });
    const b = await get('sovereign');
    const cpu = (x: Rec) => val(x.measured.cpu_user_s) + val(x.measured.cpu_system_s);
    expect(cpu(b) - cpu(a)).to.be.at.least(0.24);
    expect(val(b.model.energy_j_marginal)).to.be.at.least(val(a.model.energy_j_marginal));
    const page = await t.http.get('/energy-sovereign');
    expect(page.status).to.equal(200);
    expect(page.headers['content-type']).to.match(/^text\/html/);
    expect(page.headers['content-security-policy']).to.include("default-src 'self'");
    const embedded = JSON.parse(/<script type="application\/json" id="sovereign-snapshot">(.*?)<\/script>/s.exec(page.text)![1]!) as Rec;
    expect(embedded.schema).to.equal('svc.energy-sovereign/v1');
    // the cell shows the value rounded with its unit and keeps the exact number in data-value
    const [, exact, shown] = /<tr data-field="model\.energy_kwh"><th>.*?<\/th><td class="value" data-unit="kWh" data-value="([^"]*)"[^>]*>([^<]*)<\/td>/.exec(page.text)!;
    expect(Number(exact)).to.equal(val(embedded.model.energy_kwh));
    expect(shown).to.equal(quantityText(val(embedded.model.energy_kwh), 'kWh'));
    expect(val(embedded.model.energy_j_marginal)).to.be.at.least(val(b.model.energy_j_marginal));
    expect(embedded.receipt_link.prev_hash).to.equal(b.receipt_link.hash);
  });

  it('/jtoken: defaults_example equals the /energy/receipt kernel called with its defaults', async () => {
    const j = await get('jtoken');
    const r = (await t.http.get(`${API}/receipt`)).body.result;
    const ex = j.defaults_example;
    expect(val(ex.energy_j)).to.equal(r.nominal.energy_j);
    expect(val(ex.j_per_token)).to.equal(r.nominal.j_per_token);
    expect(val(ex.energy_kwh)).to.equal(r.nominal.energy_kwh);
    expect(val(ex.co2_g)).to.equal(r.nominal.co2_g);
    expect(ex.receipt_hash).to.equal(r.hash);
    expect(ex.prev_hash).to.equal('0'.repeat(64));
    expect(val(ex.j_per_token)).to.equal(350 * 0.02);
    expect(j.this_service.llm).to.equal(false);
  });

  it('/jtoken: published references carry a URL and basis published, and nothing named live or measured', async () => {
    const j = await get('jtoken');
    const keys = (o: unknown): string[] => (o && typeof o === 'object' ? Object.entries(o).flatMap(([k, v]) => [k, ...keys(v)]) : []);
    expect(j.published_references.length).to.be.greaterThan(0);
    for (const ref of j.published_references) {
      expect(ref.url).to.match(/^https:\/\//);
      expect(ref.basis).to.equal('published');
      expect(keys(ref)).to.not.include.members(['live', 'measured']);
      for (const [, qv] of quantities(ref)) expect(qv.basis).to.equal('published');
    }
  });

  it('/throughput: since_start rises by at least N after N requests and rps = requests / uptime', async () => {
    const a = await get('throughput');
    for (let i = 0; i < 7; i++) await t.http.get('/api/svc/v1/doctrine');
    const b = await get('throughput');
    const s = b.windows.since_start;
    expect(val(s.requests) - val(a.windows.since_start.requests)).to.be.at.least(7);
    expect(rel(val(s.rps), val(s.requests) / val(s.covered_s))).to.be.below(1e-12);
    expect(val(b.windows['60s'].requests)).to.be.at.most(val(s.requests));
  });

  it('/throughput: p50 ≤ p95 ≤ p99, and tasks_completed rises by exactly K after K kernel calls', async () => {
    const a = await get('throughput');
    for (let i = 0; i < 3; i++) expect((await t.http.get(`/api/svc/v1/ssm/scan?seed=${i}`)).status).to.equal(200);
    const b = await get('throughput');
    const l = b.latency_ms;
    expect(val(l.p50)).to.be.at.most(val(l.p95));
    expect(val(l.p95)).to.be.at.most(val(l.p99));
    expect(val(b.kernels.tasks_completed) - val(a.kernels.tasks_completed)).to.equal(3);
    expect(val(b.kernels.run_time_ms.p50)).to.be.greaterThan(0);
  });

  it('/throughput: SSE counters follow the stream: a viewer opens a stream and its events are counted', async () => {
    const a = (await get('throughput')).sse;
    expect(val(a.open_streams)).to.equal(0);
    const viewer = await openSse(`${t.baseUrl}/api/svc/v1/stream/verdicts`);
    try {
      await viewer.waitFor(2);
      const b = (await get('throughput')).sse;
      expect(val(b.open_streams)).to.equal(1);
      expect(val(b.events_published) - val(a.events_published)).to.be.at.least(2);
      expect(b.events_published.basis).to.equal('measured');
    } finally {
      viewer.close();
    }
  });

  it('/kvcache: Llama 3.1 8B in bf16 is 131072 B/token and 1 GiB at 8192 tokens (query heads would give 4x)', async () => {
    const k = await get('kvcache');
    const row = k.table.find((x: Rec) => x.model === 'Llama-3.1-8B' && x.precision === 'bf16');
    expect(val(row.bytes_per_token)).to.equal(131072);
    expect(val(row.totals_at['8192'])).to.equal(1073741824);
  });

  it('/kvcache: totals are exactly linear in context; retained_fraction = budget / seq_len', async () => {
    const k = await get('kvcache');
    for (const row of k.table) for (const [n, qv] of Object.entries(row.totals_at as Record<string, Rec>)) expect(val(qv)).to.equal(val(row.bytes_per_token) * Number(n));
    const h = k.h2o_default;
    expect(val(h.retained_fraction)).to.equal(val(h.budget) / val(h.seq_len));
    expect(val(h.bytes_saved)).to.equal(131072 * (val(h.seq_len) - val(h.budget)));
  });

  it('/gateway: one malformed typed parameter raises errors.by_code.422 by exactly 1', async () => {
    const a = await get('gateway');
    expect((await t.http.get('/api/svc/v1/ssm/scan?seq_len=abc')).status).to.equal(422);
    const b = await get('gateway');
    expect(val(b.errors.by_code['422']) - val(a.errors.by_code['422'])).to.equal(1);
    expect(val(b.errors['4xx']) - val(a.errors['4xx'])).to.equal(1);
  });

  it('/gateway: after a burst completes in_flight is back, the histogram count rose by the burst, bytes grew', async () => {
    const a = await get('gateway');
    await Promise.all(Array.from({ length: 10 }, () => t.http.get('/api/svc/v1/health')));
    const b = await get('gateway');
    expect(val(b.in_flight)).to.equal(val(a.in_flight));
    // the first gateway call itself is recorded after it answered
    expect(val(b.duration_seconds.count) - val(a.duration_seconds.count)).to.equal(11);
    expect(val(b.bytes.out)).to.be.greaterThan(val(a.bytes.out));
  });

  it('/router: the route set is the registered table; K calls to one route raise its requests by K', async () => {
    const a = await get('router');
    const key = (x: Rec) => `${x.method} ${x.template}`;
    expect(a.routes.map(key).sort()).to.deep.equal(t.routes.map((d) => `${d.method} ${d.path}`).sort());
    for (let i = 0; i < 4; i++) await t.http.get(`${API}/kvcache`);
    const b = await get('router');
    const count = (x: Rec) => val(x.routes.find((r: Rec) => r.template === `${API}/kvcache`).requests);
    expect(count(b) - count(a)).to.equal(4);
  });

  it('/router: energy over routes ≤ sovereign marginal energy (+1%), shares sum to at most 1', async () => {
    await t.http.get('/api/svc/v1/ssm/scan');
    const r = await get('router');
    const s = await get('sovereign');
    const sum = r.routes.reduce((a: number, x: Rec) => a + val(x.energy_j_marginal), 0);
    expect(sum).to.be.at.most(val(s.model.energy_j_marginal) * 1.01);
    expect(r.routes.reduce((a: number, x: Rec) => a + val(x.share), 0)).to.be.at.most(1 + 1e-12);
    expect(sum).to.be.greaterThan(0);
  });

  it('/carbon: gco2e_total = energy_kwh × grid intensity; SCI recomputes', async () => {
    await get('carbon'); // SCI is per request: R counts at least this one (a fresh app has none)
    const c = await get('carbon');
    expect(val(c.sci.R)).to.be.at.least(1);
    expect(rel(val(c.gco2e_total), val(c.energy_kwh) * val(c.grid_gco2_per_kwh))).to.be.below(1e-12);
    const sci = c.sci;
    expect(rel(val(sci.value), (val(sci.E_kwh) * val(sci.I) + val(sci.M_g)) / val(sci.R))).to.be.below(1e-12);
    expect(c.method).to.equal('location-based');
  });

  it('/carbon: intensity 960 doubles gCO2e per kWh, 0 gives 0, a negative value is refused at start-up', async () => {
    for (const [grid, ratio] of [[960, 960], [0, 0]] as const) {
      const other = await buildTestApp({ energy: { gridGco2PerKwh: grid } });
      try {
        const c = (await other.http.get(`${API}/carbon`)).body;
        expect(val(c.grid_gco2_per_kwh)).to.equal(grid);
        if (ratio === 0) expect(val(c.gco2e_total)).to.equal(0);
        else expect(rel(val(c.gco2e_total) / val(c.energy_kwh), 2 * 480)).to.be.below(1e-12);
      } finally {
        await other.close();
      }
    }
    expect(() => testConfig({ energy: { gridGco2PerKwh: -1 } })).to.throw(/energy\.gridGco2PerKwh \(env SVC_GRID_GCO2_PER_KWH\)/);
    expect(() => testConfig({ energy: { wMinPerVcpu: 5, wMaxPerVcpu: 1 } })).to.throw(/energy\.wMaxPerVcpu/);
  });

  it('/metrics: process_cpu_seconds_total is present, non-decreasing, and bracketed by the /metrics text value', async () => {
    const cpuOf = (b: Rec) => b.metrics.find((m: Rec) => m.name === 'process_cpu_seconds_total').values[0].value as number;
    const a = await get('metrics');
    const text = parsePrometheus((await t.http.get('/metrics')).text).get('process_cpu_seconds_total')![0]!.value;
    const b = await get('metrics');
    expect(cpuOf(a)).to.be.at.most(text + 1e-6);
    expect(text).to.be.at.most(cpuOf(b) + 1e-6);
    expect(cpuOf(b)).to.be.at.least(cpuOf(a));
  });

  it('/metrics: every counter family here appears in /metrics with the same name and labels', async () => {
    const b = await get('metrics');
    const text = parsePrometheus((await t.http.get('/metrics')).text);
    const counters = (b.metrics as Rec[]).filter((m) => m.type === 'counter');
    expect(counters.map((m) => m.name)).to.include('http_requests_total');
    for (const m of counters) {
      const series = text.get(m.name);
      expect(series, m.name).to.not.equal(undefined);
      for (const v of m.values) {
        const labels = Object.fromEntries(Object.entries(v.labels as Rec).map(([k, x]) => [k, String(x)]));
        expect(series!.some((s) => canonicalJson(s.labels) === canonicalJson(labels)), `${m.name} ${JSON.stringify(labels)}`).to.equal(true);
      }
    }
    expect((b.metrics as Rec[]).some((m) => m.name === 'svc_energy_model_joules' && m.basis === 'model')).to.equal(true);
  });
});

describe('energy: RAPL counter when readable', () => {
  it('reports measured package energy that follows the counter, and says why when it is absent', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rapl-'));
    const path = join(dir, 'energy_uj');
    writeFileSync(path, '1000000\n');
    const t = await buildTestApp({ energy: { raplPath: path } });
    const none = await buildTestApp({ energy: { raplPath: 'none' } });
    try {
      const a = (await t.http.get(`${API}/sovereign`)).body.measured.rapl_package_energy_j;
      writeFileSync(path, '3500000\n');
      const b = (await t.http.get(`${API}/sovereign`)).body.measured.rapl_package_energy_j;
      expect(a).to.include({ value: 0, basis: 'measured' });
      expect(b).to.include({ value: 2.5, unit: 'J', basis: 'measured' });
      const n = (await none.http.get(`${API}/sovereign`)).body.measured.rapl_package_energy_j;
      expect(n.value).to.equal(null);
      expect(n.note).to.match(/disabled/);
    } finally {
      await t.close();
      await none.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
