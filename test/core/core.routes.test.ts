import { expect } from 'chai';
import { canonicalJson, sha256Hex } from '../../src/lib/numbers.js';
import { parsePrometheus, withTestApp } from '../helpers/app.js';

describe('core routes: health, doctrine, metrics', () => {
  const app = withTestApp();

  it('/health is passive, reports pool state and checks in the IETF shape', async () => {
    const res = await app().http.get('/api/svc/v1/health');
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ status: 'pass', version: '1.0.0', serviceId: 'svc' });
    expect(res.body.pool.threads).to.equal(2);
    const check = res.body.checks['worker-pool:utilization'];
    expect(check).to.have.keys('componentType', 'observedValue', 'observedUnit', 'status', 'time', 'output');
    expect(Date.parse(check.time)).to.be.closeTo(Date.now(), 5000);
  });

  it('/doctrine has exactly H1–H4 and a rules digest that recomputes', async () => {
    const { body } = await app().http.get('/api/svc/v1/doctrine');
    expect(body.doctrine).to.equal('v11');
    expect(body.honesty_rules.map((r: { id: string }) => r.id)).to.deep.equal(['H1', 'H2', 'H3', 'H4']);
    for (const rule of body.honesty_rules) expect(rule.evidence_claims.length).to.be.greaterThan(0);
    expect(body.rules_sha256).to.equal(sha256Hex(canonicalJson({ honesty_rules: body.honesty_rules, service_rules: body.service_rules })));
    expect(body.limits.map((l: { code: string }) => l.code)).to.include('EPHEMERAL_LEDGER');
  });

  it('/metrics parses and carries the named series, labelled by route template', async () => {
    await app().http.get('/api/svc/v1/ssm/scan?seq_len=3');
    await app().http.get('/api/svc/v1/ssm/scan?seq_len=5');
    const res = await app().http.get('/metrics');
    expect(res.headers['content-type']).to.match(/^text\/plain/);
    const series = parsePrometheus(res.text);
    for (const name of [
      'http_requests_total',
      'http_request_duration_seconds_bucket',
      'svc_pool_queue_size',
      'svc_pool_utilization',
      'svc_pool_threads',
      'svc_kernel_run_seconds_bucket',
      'svc_event_loop_delay_seconds',
      'svc_event_loop_utilization',
      'process_cpu_user_seconds_total',
      'nodejs_heap_size_used_bytes',
    ]) {
      expect(series.has(name), name).to.equal(true);
    }
    const kernelCalls = series.get('http_requests_total')!.filter((s) => s.labels.route === '/api/svc/v1/ssm/scan');
    expect(kernelCalls.reduce((a, s) => a + s.value, 0)).to.equal(2);
    expect(res.text).to.not.include('seq_len=');
    expect(series.get('svc_pool_threads')![0]!.value).to.equal(2);
    const eld = series.get('svc_event_loop_delay_seconds')!;
    expect(eld.map((s) => s.labels.percentile).sort()).to.deep.equal(['100', '50', '99']);
    for (const s of eld) expect(s.value).to.be.at.least(0).and.below(1);
  });
});
