import { expect } from 'chai';
import { withTestApp } from '../helpers/app.js';

describe('kernel routes (through the worker pool)', () => {
  const app = withTestApp();

  it('answers a bare call with defaults and the envelope', async () => {
    const res = await app().http.get('/api/svc/v1/ternary/quantize');
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ schema: 'svc.kernel/v1', kernel: 'ternary/quantize', seed: 42 });
    expect(res.body.params).to.deep.equal({ seed: 42, n_params: 4096, eps: 0.00001 });
  });

  it('gives byte-identical bodies for the same query (any key order) with timings only in Server-Timing', async () => {
    const a = await app().http.get('/api/svc/v1/ssm/scan?seq_len=50&state_dim=3&seed=7');
    const b = await app().http.get('/api/svc/v1/ssm/scan?seed=7&state_dim=3&seq_len=50');
    expect(a.text).to.equal(b.text);
    expect(a.headers['server-timing']).to.match(/^kernel;dur=\d+\.\d{3}, queue;dur=\d+\.\d{3}$/);
    const c = await app().http.get('/api/svc/v1/ssm/scan?seq_len=50&state_dim=3&seed=8');
    expect(c.text).to.not.equal(a.text);
  });

  it('a repeated query string (validated once, then remembered) answers exactly as the first time, 422s and cross-parameter errors included', async () => {
    for (const q of ['ssm/scan', 'ssm/scan?seq_len=50&state_dim=3&seed=7', 'ssm/scan?seed=abc&sed=7', 'ssm/scan?request=label', 'qec/surface-code?distance=4']) {
      const first = await app().http.get(`/api/svc/v1/${q}`);
      const again = await app().http.get(`/api/svc/v1/${q}`);
      expect(again.status).to.equal(first.status);
      expect(again.text).to.equal(first.text);
    }
  });

  it('422 bodies for malformed, out-of-range and unknown parameters are exact', async () => {
    const res = await app().http.get('/api/svc/v1/ssm/scan?seed=abc&seq_len=1000000&state_dim=0&sed=7');
    expect(res.status).to.equal(422);
    expect(res.body).to.deep.equal({
      detail: [
        { type: 'int_parsing', loc: ['query', 'seed'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 'abc' },
        { type: 'less_than_equal', loc: ['query', 'seq_len'], msg: 'Input should be less than or equal to 4096', input: '1000000', ctx: { le: 4096 } },
        { type: 'greater_than_equal', loc: ['query', 'state_dim'], msg: 'Input should be greater than or equal to 1', input: '0', ctx: { ge: 1 } },
        { type: 'extra_forbidden', loc: ['query', 'sed'], msg: 'Extra inputs are not permitted', input: '7' },
      ],
    });
    const seed = await app().http.get('/api/svc/v1/ternary/quantize?seed=4294967296&eps=1e');
    expect(seed.body.detail).to.deep.equal([
      { type: 'less_than_equal', loc: ['query', 'seed'], msg: 'Input should be less than or equal to 4294967295', input: '4294967296', ctx: { le: 4294967295 } },
      { type: 'float_parsing', loc: ['query', 'eps'], msg: 'Input should be a valid number, unable to parse string as a number', input: '1e' },
    ]);
  });

  it('records kernel run time on the main thread by kernel id', async () => {
    await app().http.get('/api/svc/v1/ssm/scan?seq_len=9');
    const metrics = await app().http.get('/metrics');
    expect(metrics.text).to.match(/svc_kernel_run_seconds_count\{kernel="ssm\/scan",outcome="ok"\} [1-9]/);
  });
});
