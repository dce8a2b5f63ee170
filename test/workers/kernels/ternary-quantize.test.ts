import { expect } from 'chai';
import ternary, { absmeanQuantize, erf } from '../../../workers/kernels/ternary-quantize.js';
import { Rng } from '../../../workers/lib/prng.js';
import { rejects, runBody, runRaw } from '../../helpers/kernels.js';

describe('kernel ternary/quantize', () => {
  it('codes are ternary, counts sum to n_params and both integer product paths agree exactly', () => {
    for (const n of [64, 1000, 4096]) {
      const r = runRaw(ternary, { n_params: n, seed: n }).result as any;
      expect(r.code_counts.neg + r.code_counts.zero + r.code_counts.pos).to.equal(n);
      expect(r.matmul.int_mismatch).to.equal(0);
      expect(r.matmul.rows).to.equal(Math.floor(n / 64));
    }
  });

  it('zero fraction matches erf(1/(2√π)) for Gaussian weights within 4σ over 10 seeds', () => {
    const p = erf(1 / (2 * Math.sqrt(Math.PI)));
    expect(p).to.be.closeTo(0.31010, 1e-4);
    const n = 4096;
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(ternary, { n_params: n, seed }).result as any;
      expect(Math.abs(r.zero_fraction - p)).to.be.below(4 * Math.sqrt((p * (1 - p)) / n));
    }
  });

  it('gamma is mean |W| and codes are scale invariant when eps = 0; zero weights give zero codes', () => {
    const rng = new Rng(8);
    const w = rng.normals(512, 0.02);
    const a = absmeanQuantize(w, 0);
    const b = absmeanQuantize(w.map((v) => v * 37.5), 0);
    expect(Array.from(b.codes)).to.deep.equal(Array.from(a.codes));
    expect(a.gamma).to.be.closeTo(w.reduce((s, v) => s + Math.abs(v), 0) / 512, 1e-15);
    const z = absmeanQuantize(new Float64Array(64), 0);
    expect(z.gamma).to.equal(0);
    expect(Array.from(z.codes).every((c) => c === 0)).to.equal(true);
    // |w − γt| ≤ γ/2 whenever |w| ≤ 1.5γ
    w.forEach((v, i) => {
      if (Math.abs(v) <= 1.5 * a.gamma) expect(Math.abs(v - a.gamma * a.codes[i]!)).to.be.at.most(a.gamma / 2 + 1e-15);
    });
  });

  it('reports the closed-form storage figures', () => {
    const r = runRaw(ternary).result as any;
    expect(r.bits_per_weight).to.be.closeTo(Math.log2(3), 1e-15);
    expect(r.compression_vs_fp16).to.be.closeTo(16 / Math.log2(3), 1e-12);
    expect(r.matmul.rel_error_vs_fp).to.be.greaterThan(0).and.lessThan(1);
  });

  it('is deterministic and seed-sensitive; bounds give 422-shaped failures', () => {
    expect(runBody(ternary, { seed: 1 })).to.equal(runBody(ternary, { seed: 1 }));
    expect(runBody(ternary, { seed: 1 })).to.not.equal(runBody(ternary, { seed: 2 }));
    expect(rejects(ternary, { n_params: '63' })).to.deep.equal(['n_params:number.min']);
    expect(rejects(ternary, { eps: '0.2' })).to.deep.equal(['eps:number.max']);
    expect(rejects(ternary, { eps: 'abc' })).to.deep.equal(['eps:qnum.parse']);
  });
});
