import { expect } from 'chai';
import flowmatch, { drawTarget, exactField } from '../../../workers/kernels/flowmatch-sample.js';
import { Rng } from '../../../workers/lib/prng.js';
import { rejects, runBody, runRaw } from '../../helpers/kernels.js';

interface T {
  mu: number[];
  s: number[];
  U: number[][];
}

const targetOf = (r: any): T => ({ mu: Array.from(r.target.mean), s: Array.from(r.target.eigvals), U: r.target.eigvecs.map((row: Float64Array) => Array.from(row)) });

/** Closed-form Euler gains and W₂ for K steps, from the eigenvalues. */
function closedForm(s: number[], K: number): { g: number[]; w2: number } {
  const g = s.map((si) => {
    let prod = 1;
    for (let k = 0; k < K; k++) {
      const t = k / K;
      prod *= 1 + (t * si - (1 - t)) / ((1 - t) ** 2 + t * t * si) / K;
    }
    return prod;
  });
  return { g, w2: Math.sqrt(g.reduce((acc, gi, i) => acc + (gi - Math.sqrt(s[i]!)) ** 2, 0)) };
}

/** v*(x, t) in Σ's eigenbasis: y = Uᵀ(x − tμ), v = μ + U·(c(t) ⊙ y). */
function vStar(tg: T, x: number[], t: number): number[] {
  const d = x.length;
  const y = Array.from({ length: d }, (_, j) => tg.U.reduce((acc, row, i) => acc + row[j]! * (x[i]! - t * tg.mu[i]!), 0));
  const cy = y.map((yj, j) => ((t * tg.s[j]! - (1 - t)) / ((1 - t) ** 2 + t * t * tg.s[j]!)) * yj);
  return Array.from({ length: d }, (_, i) => tg.mu[i]! + tg.U[i]!.reduce((acc, u, j) => acc + u * cy[j]!, 0));
}

describe('kernel flowmatch/sample', () => {
  it('reports the closed-form Euler gains and W₂, which fall roughly as 1/K', () => {
    for (const [seed, dims, steps] of [[42, 8, 16], [3, 3, 1], [4, 20, 7]] as const) {
      const r = runRaw(flowmatch, { seed, dims, steps }).result as any;
      const tg = targetOf(r);
      const cf = closedForm(tg.s, steps);
      cf.g.forEach((g, i) => expect(r.euler_gain[i]).to.be.closeTo(g, 1e-12));
      expect(r.w2_exact_euler_closed_form).to.be.closeTo(cf.w2, 1e-12);
      // U orthogonal, eigenvalues in [0.25, 4]
      for (let i = 0; i < dims; i++) for (let j = 0; j < dims; j++) expect(tg.U.reduce((acc, row) => acc + row[i]! * row[j]!, 0)).to.be.closeTo(i === j ? 1 : 0, 1e-12);
      for (const s of tg.s) expect(s).to.be.within(0.25, 4);
      const w = [1, 2, 4, 8, 16, 32, 64, 128, 256].map((K) => closedForm(tg.s, K).w2);
      for (let i = 1; i < w.length; i++) expect(w[i]).to.be.below(w[i - 1]!);
      expect((256 * w[8]!) / (128 * w[7]!)).to.be.closeTo(1, 0.05);
    }
  });

  it('the exact field transports x₀ to μ + Σ^½x₀ (RK4 with 4096 steps) and has v*(x,0) = μ − x, v*(x,1) = x', () => {
    const r = runRaw(flowmatch, { seed: 5, dims: 4 }).result as any;
    const tg = targetOf(r);
    const rng = new Rng(9);
    for (let trial = 0; trial < 3; trial++) {
      const x0 = Array.from(rng.normals(4));
      let x = x0.slice();
      const K = 4096;
      const h = 1 / K;
      for (let k = 0; k < K; k++) {
        const t = k * h;
        const add = (a: number[], b: number[], c: number): number[] => a.map((v, i) => v + c * b[i]!);
        const k1 = vStar(tg, x, t);
        const k2 = vStar(tg, add(x, k1, h / 2), t + h / 2);
        const k3 = vStar(tg, add(x, k2, h / 2), t + h / 2);
        const k4 = vStar(tg, add(x, k3, h), t + h);
        x = x.map((v, i) => v + (h / 6) * (k1[i]! + 2 * k2[i]! + 2 * k3[i]! + k4[i]!));
      }
      const y = tg.U[0]!.map((_, j) => tg.U.reduce((acc, row, i) => acc + row[j]! * x0[i]!, 0));
      const expected = tg.mu.map((m, i) => m + tg.U[i]!.reduce((acc, u, j) => acc + u * Math.sqrt(tg.s[j]!) * y[j]!, 0));
      x.forEach((v, i) => expect(v).to.be.closeTo(expected[i]!, 1e-6));
    }
    const tgt = drawTarget(5, new Rng(2));
    const at0 = exactField(tgt, 0);
    const at1 = exactField(tgt, 1);
    for (let i = 0; i < 5; i++) {
      expect(at0.a[i]).to.be.closeTo(tgt.mu[i]!, 1e-12);
      expect(at1.a[i]).to.be.closeTo(0, 1e-12);
      for (let j = 0; j < 5; j++) {
        expect(at0.B[i * 5 + j]).to.be.closeTo(i === j ? -1 : 0, 1e-12);
        expect(at1.B[i * 5 + j]).to.be.closeTo(i === j ? 1 : 0, 1e-12);
      }
    }
  });

  it('per-step regression: the dof-adjusted loss is within 4 SE of the irreducible loss, which recomputes', () => {
    for (const [seed, dims, steps] of [[42, 8, 16], [7, 2, 10], [8, 16, 6]] as const) {
      const r = runRaw(flowmatch, { seed, dims, steps }).result as any;
      const s: number[] = Array.from(r.target.eigvals);
      const nb = Math.max(64, 4 * (dims + 1));
      r.per_step.forEach((row: any, k: number) => {
        const t = k / steps;
        expect(row.t).to.equal(t);
        const lam = s.map((si) => 1 + si - (t * si - (1 - t)) ** 2 / ((1 - t) ** 2 + t * t * si));
        expect(row.irreducible_loss).to.be.closeTo(lam.reduce((a, b) => a + b, 0), 1e-12);
        const se = Math.sqrt((2 * lam.reduce((a, b) => a + b * b, 0)) / nb);
        expect(Math.abs(row.fit_loss_dof_adjusted - row.irreducible_loss)).to.be.at.most(4 * se);
        expect(row.fit_loss_dof_adjusted).to.be.closeTo((row.fit_loss * nb) / (nb - dims - 1), 1e-12);
      });
    }
  });

  it('exact-field samples follow the Euler law: mean within 4σ of μ, covariance near U·diag(g²)·Uᵀ', () => {
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(flowmatch, { seed }).result as any;
      const g: number[] = Array.from(r.euler_gain);
      const sd = Math.sqrt(g.reduce((a, b) => a + b * b, 0) / 128);
      expect(r.samples.exact.mean_err).to.be.at.most(4 * sd);
      // Frobenius error of a 128-sample covariance: E‖S − Σ‖² ≈ ((tr Σ)² + tr Σ²)/n
      const tr = g.reduce((a, b) => a + b * b, 0);
      const tr2 = g.reduce((a, b) => a + b ** 4, 0);
      expect(r.samples.exact.cov_err_vs_euler_law).to.be.at.most(4 * Math.sqrt((tr * tr + tr2) / 128));
      expect(r.samples.learned.w2).to.be.greaterThan(0);
    }
  });

  it('is deterministic in seed and sensitive to it', () => {
    expect(runBody(flowmatch, { seed: 16 })).to.equal(runBody(flowmatch, { seed: 16 }));
    expect(runBody(flowmatch, { seed: 16 })).to.not.equal(runBody(flowmatch, { seed: 17 }));
  });

  it('refuses out-of-range and malformed parameters', () => {
    expect(rejects(flowmatch, { dims: '0', steps: '0' })).to.deep.equal(['dims:number.min', 'steps:number.min']);
    expect(rejects(flowmatch, { dims: '33', steps: '33' })).to.deep.equal(['dims:number.max', 'steps:number.max']);
    expect(rejects(flowmatch, { steps: '0x10' })).to.deep.equal(['steps:qint.parse']);
    expect(rejects(flowmatch, { dims: '32', steps: '32' })).to.deep.equal([]);
  });
});
