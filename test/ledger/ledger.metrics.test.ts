// The ledger's write path on /metrics, read from a real file-mode app: the node count and the cap,
// the durability state set, and the two per-batch stages (signing batches, group commits), whose
// sizes must add up to exactly the verdicts appended and whose buckets must be cumulative.
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { Ledger } from '../../src/ledger/ledger.js';
import { ledgerMetrics } from '../../src/ledger/ledger.metrics.js';
import { MemoryStore } from '../../src/ledger/store/memory-store.js';
import { parsePrometheus, withTestApp } from '../helpers/app.js';

const frame = { track_id: 'e7a001', source: 'ADS-B', lat: 36.5, lon: -115.1, alt_m: 90, speed_mps: 15, heading_deg: 10, rssi_dbm: -45, id_authenticated: true, timestamp_skew_s: 0, n_observations: 800 };

type Samples = ReturnType<typeof parsePrometheus>;
/** The one sample of `name` whose labels include `labels`. */
function value(m: Samples, name: string, labels: Record<string, string> = {}): number {
  const hits = (m.get(name) ?? []).filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  expect(hits, `${name} ${JSON.stringify(labels)}`).to.have.length(1);
  return hits[0]!.value;
}

/** A histogram's buckets for one label set rise to its count, which +Inf equals. */
function expectCumulative(m: Samples, name: string, labels: Record<string, string>): void {
  const buckets = (m.get(`${name}_bucket`) ?? []).filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  expect(buckets.length, name).to.be.greaterThan(1);
  buckets.slice(1).forEach((b, i) => expect(b.value, `${name} le=${b.labels.le}`).to.be.at.least(buckets[i]!.value));
  expect(buckets.at(-1)!.labels.le).to.equal('+Inf');
  expect(buckets.at(-1)!.value).to.equal(value(m, `${name}_count`, labels));
}

describe('ledger metrics (/metrics)', function () {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ledger-metrics-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const app = withTestApp({ ledger: { mode: 'file', dataDir: dir, maxNodes: 5000 } });
  const scrape = async (): Promise<Samples> => parsePrometheus((await app().http.get('/metrics')).text);

  it('before any verdict: no node, the cap, DURABLE set alone, and no commit observed', async () => {
    const m = await scrape();
    expect(value(m, 'svc_ledger_nodes')).to.equal(0);
    // file mode: disk is the limit, ledger.maxNodes caps only a ledger held in memory
    expect((await app().http.get('/metrics')).text).to.match(/^svc_ledger_capacity_nodes \+Inf$/m);
    expect(Object.fromEntries(m.get('svc_ledger_durability')!.map((s) => [s.labels.state, s.value]))).to.deep.equal({ EPHEMERAL: 0, DURABLE: 1, DEGRADED: 0, CORRUPT: 0 });
    // the start-up self-test signed one bare PAE; nothing was committed yet
    expect(value(m, 'svc_signing_batch_size_sum', { lane: 'signatures' })).to.equal(1);
    expect(m.get('svc_ledger_commit_nodes_count')).to.equal(undefined);
  });

  it('after 3 sequential and 24 concurrent verdicts: nodes, commit sizes and receipt batch sizes each add up to exactly 27', async () => {
    for (let i = 0; i < 3; i++) expect((await app().http.post('/api/svc/v1/verdict').send(frame)).status).to.equal(200);
    const all = await Promise.all(Array.from({ length: 24 }, (_, i) => app().http.post('/api/svc/v1/verdict').send({ ...frame, track_id: `e7a1${i.toString(16).padStart(2, '0')}` })));
    expect(all.map((r) => r.status)).to.deep.equal(Array(24).fill(200));
    const m = await scrape();
    expect(value(m, 'svc_ledger_nodes')).to.equal(27);
    expect((await app().http.get('/api/svc/v1/ledger/readiness')).body.integrity.nodes).to.equal(27);
    expect(value(m, 'svc_ledger_commit_nodes_sum')).to.equal(27);
    expect(value(m, 'svc_signing_batch_size_sum', { lane: 'receipts' })).to.equal(27);
    // each sequential verdict is a batch of its own in both stages; the concurrent ones share some
    const commits = value(m, 'svc_ledger_commit_nodes_count');
    const batches = value(m, 'svc_signing_batch_size_count', { lane: 'receipts' });
    expect(commits).to.be.within(4, 27);
    expect(batches).to.be.within(4, 27);
    // one duration per commit and per batch, all of them answered
    expect(value(m, 'svc_ledger_commit_seconds_count', { outcome: 'ok' })).to.equal(commits);
    expect(value(m, 'svc_signing_batch_seconds_count', { lane: 'receipts', outcome: 'ok' })).to.equal(batches);
    expect(m.get('svc_ledger_commit_seconds_count')!.filter((s) => s.labels.outcome === 'error')).to.deep.equal([]);
    // a durable write and a thread round trip take time, and far less than a second each on average
    for (const [name, labels] of [
      ['svc_ledger_commit_seconds', { outcome: 'ok' }],
      ['svc_signing_batch_seconds', { lane: 'receipts', outcome: 'ok' }],
    ] as const) {
      const mean = value(m, `${name}_sum`, labels) / value(m, `${name}_count`, labels);
      expect(mean, name).to.be.greaterThan(0).and.below(1);
      expectCumulative(m, name, labels);
    }
    expectCumulative(m, 'svc_ledger_commit_nodes', {});
    expectCumulative(m, 'svc_signing_batch_size', { lane: 'receipts' });
    // a batch of one lands in the first size bucket: at least the three sequential verdicts'
    expect(value(m, 'svc_ledger_commit_nodes_bucket', { le: '1' })).to.be.at.least(3);
  });
});

describe('ledger metrics: refused commits and failed batches', () => {
  it('count under outcome="error"; a refused commit adds no nodes, a failed batch still counts its size', async () => {
    const registry = new Registry();
    const observe = ledgerMetrics(registry, new Ledger(10), new MemoryStore());
    observe.onCommit(0.004, 3, false);
    observe.onCommit(0.001, 2, true);
    observe.onBatch('receipts', 0.002, 5, false);
    observe.onBatch('signatures', 0.0003, 1, true);
    const m = parsePrometheus(await registry.metrics());
    expect([value(m, 'svc_ledger_commit_seconds_count', { outcome: 'error' }), value(m, 'svc_ledger_commit_seconds_sum', { outcome: 'error' })]).to.deep.equal([1, 0.004]);
    expect([value(m, 'svc_ledger_commit_seconds_count', { outcome: 'ok' }), value(m, 'svc_ledger_commit_nodes_sum'), value(m, 'svc_ledger_commit_nodes_count')]).to.deep.equal([1, 2, 1]);
    expect(value(m, 'svc_signing_batch_seconds_count', { lane: 'receipts', outcome: 'error' })).to.equal(1);
    expect(m.get('svc_signing_batch_seconds_count')!.filter((s) => s.labels.lane === 'receipts' && s.labels.outcome === 'ok')).to.deep.equal([]);
    expect([value(m, 'svc_signing_batch_size_sum', { lane: 'receipts' }), value(m, 'svc_signing_batch_size_sum', { lane: 'signatures' })]).to.deep.equal([5, 1]);
    expect(Object.fromEntries(m.get('svc_ledger_durability')!.map((s) => [s.labels.state, s.value]))).to.deep.equal({ EPHEMERAL: 1, DURABLE: 0, DEGRADED: 0, CORRUPT: 0 });
    expect(value(m, 'svc_ledger_capacity_nodes')).to.equal(10);
  });
});
