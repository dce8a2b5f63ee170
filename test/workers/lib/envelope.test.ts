import { expect } from 'chai';
import { createHash } from 'node:crypto';
import type { KernelDef } from '../../../workers/kernel-def.js';
import { buildEnvelope, KERNEL_SCHEMA, serializeEnvelope } from '../../../workers/lib/envelope.js';
import { NonFiniteError } from '../../../src/lib/numbers.js';

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

function def(over: Partial<KernelDef> = {}): KernelDef {
  return {
    id: 'demo/run',
    version: 3,
    input: 'query',
    summary: 'a demo',
    technique: 'Demo technique',
    references: ['arXiv:0000.00000'],
    honesty: 'real algorithm, synthetic data',
    params: {},
    worstCase: {},
    run: () => ({ result: {} }),
    ...over,
  };
}

function nonFinitePath(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    expect(e).to.be.instanceOf(NonFiniteError);
    return (e as NonFiniteError).path;
  }
  return undefined;
}

describe('workers/lib/envelope', () => {
  it('a query kernel: the exact bytes (key order, rounded result, empty checks, no request/constants/informative keys)', () => {
    const body = serializeEnvelope({ def: def(), params: { seed: 7, n: 3, x: 0.1 + 0.2 }, output: { result: { x: 0.1 + 0.2, v: new Float64Array([1, -0]), s: 'kept' } } });
    expect(body).to.equal(
      '{"schema":"svc.kernel/v1","kernel":"demo/run","kernel_version":3,"technique":"Demo technique","references":["arXiv:0000.00000"],' +
        // params are echoed as validated, not rounded; only result, checks and constants are
        '"seed":7,"params":{"seed":7,"n":3,"x":0.30000000000000004},"data_kind":"computed","synthetic_inputs":true,' +
        '"result":{"x":0.3,"v":[1,0],"s":"kept"},"checks":{},"honesty":"real algorithm, synthetic data"}',
    );
    expect(JSON.parse(body)).to.deep.equal(buildEnvelope({ def: def(), params: { seed: 7, n: 3, x: 0.1 + 0.2 }, output: { result: { x: 0.1 + 0.2, v: new Float64Array([1, -0]), s: 'kept' } } }));
    expect(KERNEL_SCHEMA).to.equal('svc.kernel/v1');
  });

  it('a request kernel: request_label and request_sha256 (SHA-256 of the canonical params) after params; constants, checks and informative when present', () => {
    const informative = { 'diag.gap': 'a rounding-level gap between two computations' };
    const params = { seed: 1, b: [1, 2], a: 'x' };
    const env = buildEnvelope({
      def: def({ input: 'request', informative }),
      params,
      requestLabel: 'label-1',
      output: { result: { y: Math.PI }, checks: { ok: true, gap: 1e-17 / 3 }, constants: { k: 2 / 3, name: 'c' } },
    });
    expect(Object.keys(env)).to.deep.equal([
      'schema', 'kernel', 'kernel_version', 'technique', 'references', 'seed', 'params',
      'request_label', 'request_sha256', 'data_kind', 'synthetic_inputs', 'constants', 'result', 'checks', 'informative', 'honesty',
    ]);
    expect(env.request_label).to.equal('label-1');
    // canonical JSON written by hand: keys sorted, no whitespace
    expect(env.request_sha256).to.equal(sha256('{"a":"x","b":[1,2],"seed":1}'));
    expect(env.seed).to.equal(1);
    expect(env.params).to.equal(params);
    expect(env.constants).to.deep.equal({ k: 0.666666666667, name: 'c' });
    expect(env.result).to.deep.equal({ y: 3.14159265359 });
    expect(env.checks).to.deep.equal({ ok: true, gap: 3.33333333333e-18 });
    expect(env.informative).to.equal(informative);
    expect(env.synthetic_inputs).to.equal(true);
    expect(env.data_kind).to.equal('computed');
  });

  it('a request kernel without a label reports request_label null; the hash follows the params, not their order', () => {
    const a = buildEnvelope({ def: def({ input: 'request' }), params: { seed: 9, m: 2 }, output: { result: {} } });
    const b = buildEnvelope({ def: def({ input: 'request' }), params: { m: 2, seed: 9 }, requestLabel: null, output: { result: {} } });
    const c = buildEnvelope({ def: def({ input: 'request' }), params: { seed: 9, m: 3 }, output: { result: {} } });
    expect(a.request_label).to.equal(null);
    expect(b.request_label).to.equal(null);
    expect(a.request_sha256).to.equal(sha256('{"m":2,"seed":9}'));
    expect(b.request_sha256).to.equal(a.request_sha256);
    expect(c.request_sha256).to.not.equal(a.request_sha256);
  });

  it('a query kernel has no request keys even when a label is passed; empty constants are still listed', () => {
    const env = buildEnvelope({ def: def(), params: { seed: 1 }, requestLabel: 'ignored', output: { result: {}, constants: {} } });
    expect(env).to.not.have.any.keys('request_label', 'request_sha256', 'informative');
    expect(env.constants).to.deep.equal({});
  });

  it('a non-finite value in result, checks or constants throws with its path', () => {
    const build = (output: Parameters<typeof buildEnvelope>[0]['output']) => () => buildEnvelope({ def: def(), params: { seed: 1 }, output });
    expect(nonFinitePath(build({ result: { a: { b: [0, Number.NaN] } } }))).to.equal('$.result.a.b[1]');
    expect(nonFinitePath(build({ result: {}, checks: { c: Infinity } }))).to.equal('$.checks.c');
    expect(nonFinitePath(build({ result: {}, constants: { k: new Float64Array([1, -Infinity]) } }))).to.equal('$.constants.k[1]');
  });
});
