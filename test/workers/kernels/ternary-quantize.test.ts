import { expect } from 'chai';
import ternary, { absmeanQuantize, erf } from '../../../workers/kernels/ternary-quantize.js';
import { Rng, RngStreams } from '../../../src/lib/prng.js';
import { runRaw } from '../../helpers/kernels.js';

describe('kernel ternary/quantize', () => {
  it('every reported value is recomputed from weights and activations redrawn from streams w and x', () => {
    for (const [seed, n, eps] of [[42, 4096, 1e-5], [3, 200, 0.01], [7, 64, 0]] as const) {
      const r = runRaw(ternary, { seed, n_params: n, eps }).result as any;
      const rng = new RngStreams(seed, 'ternary/quantize');
      const ws = rng.stream('w');
      const w = Array.from({ length: n }, () => 0.02 * ws.normal());
      const gamma = w.reduce((a, v) => a + Math.abs(v), 0) / n;
      // RoundClip(w/(γ+ε), −1, 1), halves away from zero
      const code = (v: number): number => Math.max(-1, Math.min(1, Math.sign(v) * Math.floor(Math.abs(v / (gamma + eps)) + 0.5)));
      const codes = w.map(code);
      expect(r.gamma).to.be.closeTo(gamma, 1e-15);
      expect(r.code_counts).to.deep.equal({ neg: codes.filter((c) => c < 0).length, zero: codes.filter((c) => c === 0).length, pos: codes.filter((c) => c > 0).length });
      expect(r.zero_fraction).to.equal(codes.filter((c) => c === 0).length / n);
      expect(r.weight_mse).to.be.closeTo(w.reduce((a, v, i) => a + (v - gamma * codes[i]!) ** 2, 0) / n, 1e-18);
      // erf(1/(2√π)) = 0.31006426544883714 (a known value, computed outside this code base)
      expect(r.expected_zero_fraction_gaussian).to.be.closeTo(0.31006426544883714, 1e-14);
      // 8 tokens of 64 activations (channel 0 ×10), absmax to ±127, against the float product
      const xs = rng.stream('x');
      const rows = Math.floor(n / 64);
      let num = 0;
      let den = 0;
      for (let tok = 0; tok < 8; tok++) {
        const x = Array.from({ length: 64 }, () => xs.normal());
        x[0] = x[0]! * 10;
        const absmax = Math.max(...x.map(Math.abs));
        const q = x.map((v) => Math.max(-127, Math.min(127, Math.round((v * 127) / absmax))));
        for (let row = 0; row < rows; row++) {
          let acc = 0;
          let fp = 0;
          for (let j = 0; j < 64; j++) {
            acc += codes[row * 64 + j]! * q[j]!;
            fp += w[row * 64 + j]! * x[j]!;
          }
          num += ((acc * gamma * absmax) / 127 - fp) ** 2;
          den += fp * fp;
        }
      }
      expect(r.matmul).to.deep.include({ rows, tokens: 8, int_mismatch: 0 });
      expect(r.matmul.rel_error_vs_fp).to.be.closeTo(Math.sqrt(num / den), 1e-12);
      expect(r.multiplications_avoided).to.equal(8 * rows * 64);
    }
  });

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
});
