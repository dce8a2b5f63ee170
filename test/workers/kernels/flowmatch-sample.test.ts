import { expect } from 'chai';
import flowmatch, { drawTarget, exactField } from '../../../workers/kernels/flowmatch-sample.js';
import { Rng, RngStreams } from '../../../src/lib/prng.js';
import { runRaw } from '../../helpers/kernels.js';
import { solveLinearColumns } from '../../helpers/linear-solve.js';

interface T {
  mu: number[];
  s: number[];
  U: number[][];
}

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

type Mat = number[][];
const mm = (A: Mat, B: Mat): Mat => A.map((r) => B[0]!.map((_, j) => r.reduce((acc, v, k) => acc + v * B[k]![j]!, 0)));
const tp = (A: Mat): Mat => A[0]!.map((_, j) => A.map((r) => r[j]!));
const eye = (d: number): Mat => Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => (i === j ? 1 : 0)));
const fro = (A: Mat, B: Mat): number => Math.sqrt(A.reduce((acc, r, i) => acc + r.reduce((t, v, j) => t + (v - B[i]![j]!) ** 2, 0), 0));
const solve = solveLinearColumns; // A⁻¹B
/** Principal square root of an SPD matrix by the Denman–Beavers iteration. */
function sqrtm(A: Mat): Mat {
  let Y = A;
  let Z = eye(A.length);
  for (let k = 0; k < 60; k++) {
    const Yi = solve(Y, eye(A.length));
    const Zi = solve(Z, eye(A.length));
    [Y, Z] = [Y.map((r, i) => r.map((v, j) => (v + Zi[i]![j]!) / 2)), Z.map((r, i) => r.map((v, j) => (v + Yi[i]![j]!) / 2))];
  }
  return Y;
}
/** The target redrawn from stream `target` on nested arrays: μ (×2), U by modified Gram–Schmidt on G's columns, s = (0.5 + 1.5u)². */
function referenceTarget(seed: number, d: number): T {
  const ts = new RngStreams(seed, 'flowmatch/sample').stream('target');
  const mu = Array.from({ length: d }, () => 2 * ts.normal());
  const G = Array.from({ length: d }, () => Array.from({ length: d }, () => ts.normal()));
  // modified Gram–Schmidt on the columns of G
  const cols = tp(G);
  for (let j = 0; j < d; j++) {
    for (let i = 0; i < j; i++) {
      const dot = cols[i]!.reduce((acc, v, k) => acc + v * cols[j]![k]!, 0);
      cols[j] = cols[j]!.map((v, k) => v - dot * cols[i]![k]!);
    }
    const len = Math.hypot(...cols[j]!);
    cols[j] = cols[j]!.map((v) => v / len);
  }
  const U = tp(cols);
  const s = Array.from({ length: d }, () => (0.5 + 1.5 * ts.next()) ** 2);
  return { mu, s, U };
}

/** The whole kernel written out again on nested arrays, in the original coordinates. */
function slowFlowmatch(seed: number, d: number, K: number) {
  const rngs = new RngStreams(seed, 'flowmatch/sample');
  const { mu, s, U } = referenceTarget(seed, d);
  const Sigma = mm(mm(U, s.map((si, i) => s.map((_, j) => (i === j ? si : 0)))), tp(U));
  const c = (t: number, si: number): number => (t * si - (1 - t)) / ((1 - t) ** 2 + t * t * si);
  const exact = (t: number) => {
    const B = mm(mm(U, s.map((si, i) => s.map((_, j) => (i === j ? c(t, si) : 0)))), tp(U));
    return { a: mu.map((m, i) => m - t * B[i]!.reduce((acc, v, j) => acc + v * mu[j]!, 0)), B };
  };
  const nb = Math.max(64, 4 * (d + 1));
  const steps: { t: number; a: number[]; B: Mat; loss: number; errB: number; erra: number }[] = [];
  for (let k = 0; k < K; k++) {
    const t = k / K;
    const tr = rngs.stream(`train/${k}`);
    const Phi: Mat = [];
    const V: Mat = [];
    for (let n = 0; n < nb; n++) {
      const y0 = Array.from({ length: d }, () => tr.normal());
      const xi = Array.from({ length: d }, () => tr.normal());
      // pairs drawn in Σ's eigenbasis and mapped back: x = U·y
      const x0 = U.map((row) => row.reduce((acc, u, j) => acc + u * y0[j]!, 0));
      const x1 = mu.map((m, i) => m + U[i]!.reduce((acc, u, j) => acc + u * Math.sqrt(s[j]!) * xi[j]!, 0));
      Phi.push([1, ...x0.map((v, i) => (1 - t) * v + t * x1[i]!)]);
      V.push(x1.map((v, i) => v - x0[i]!));
    }
    const A = mm(tp(Phi), Phi).map((r, i) => r.map((v, j) => v + (i === j ? 1e-9 : 0)));
    const W = solve(A, mm(tp(Phi), V)); // (d+1)×d
    const a = W[0]!;
    const B = tp(W.slice(1));
    const pred = mm(Phi, W);
    const loss = V.reduce((acc, r, n) => acc + r.reduce((q, v, i) => q + (v - pred[n]![i]!) ** 2, 0), 0) / nb;
    const ex = exact(t);
    steps.push({ t, a, B, loss, errB: fro(B, ex.B), erra: Math.hypot(...a.map((v, i) => v - ex.a[i]!)) });
  }
  const sm = rngs.stream('sample');
  const x0 = Array.from({ length: 128 }, () => Array.from({ length: d }, () => sm.normal()));
  const euler = (field: (k: number) => { a: number[]; B: Mat }) =>
    x0.map((x) => {
      let y = x.slice();
      for (let k = 0; k < K; k++) {
        const { a, B } = field(k);
        const v = a.map((ai, i) => ai + B[i]!.reduce((acc, b, j) => acc + b * y[j]!, 0)); // the whole velocity first
        y = y.map((yi, i) => yi + v[i]! / K);
      }
      return y;
    });
  const gain = s.map((si) => Array.from({ length: K }, (_, k) => 1 + c(k / K, si) / K).reduce((a, b) => a * b, 1));
  const law = mm(mm(U, gain.map((g, i) => gain.map((_, j) => (i === j ? g * g : 0)))), tp(U));
  const rootSigma = sqrtm(Sigma);
  const summary = (X: Mat) => {
    const m = mu.map((_, i) => X.reduce((acc, x) => acc + x[i]!, 0) / X.length);
    const S = mu.map((_, i) => mu.map((__, j) => X.reduce((acc, x) => acc + (x[i]! - m[i]!) * (x[j]! - m[j]!), 0) / X.length));
    const inner = sqrtm(mm(mm(rootSigma, S), rootSigma));
    let w = 0;
    for (let i = 0; i < d; i++) w += (m[i]! - mu[i]!) ** 2 + S[i]![i]! + Sigma[i]![i]! - 2 * inner[i]![i]!;
    return { mean_err: Math.hypot(...m.map((v, i) => v - mu[i]!)), cov_err: fro(S, Sigma), cov_err_vs_euler_law: fro(S, law), w2: Math.sqrt(w) };
  };
  return {
    mu, s, U, steps,
    learned: summary(euler((k) => steps[k]!)),
    exact: summary(euler((k) => exact(k / K))),
  };
}

describe('kernel flowmatch/sample', () => {
  it('every reported value is recomputed by a slow nested-array rewrite (target, per-step OLS, both Euler samplers, W₂)', () => {
    for (const [seed, dims, steps] of [[42, 3, 4], [5, 2, 7], [9, 4, 2]] as const) {
      const r = runRaw(flowmatch, { seed, dims, steps }).result as any;
      const ref = slowFlowmatch(seed, dims, steps);
      expect([r.target.mean.length, r.target.eigvals.length, r.target.eigvecs.length, r.per_step.length]).to.deep.equal([dims, dims, dims, steps]);
      const cf = closedForm(ref.s, steps);
      cf.g.forEach((g, i) => expect(r.euler_gain[i]).to.be.closeTo(g, 1e-12));
      expect(r.euler_gain).to.have.length(dims);
      expect(r.w2_exact_euler_closed_form).to.be.closeTo(cf.w2, 1e-12);
      Array.from(r.target.mean as Float64Array).forEach((v, i) => expect(v).to.be.closeTo(ref.mu[i]!, 1e-12));
      Array.from(r.target.eigvals as Float64Array).forEach((v, i) => expect(v).to.be.closeTo(ref.s[i]!, 1e-12));
      r.target.eigvecs.forEach((row: Float64Array, i: number) => Array.from(row).forEach((v, j) => expect(v).to.be.closeTo(ref.U[i]![j]!, 1e-12)));
      const nb = Math.max(64, 4 * (dims + 1));
      r.per_step.forEach((row: any, k: number) => {
        const st = ref.steps[k]!;
        expect(row.t).to.equal(st.t);
        expect(row.fit_loss).to.be.closeTo(st.loss, 1e-8 * st.loss);
        expect(row.fit_loss_dof_adjusted).to.be.closeTo((st.loss * nb) / (nb - dims - 1), 1e-8 * st.loss);
        expect(row.coef_err_B).to.be.closeTo(st.errB, 1e-8);
        expect(row.coef_err_a).to.be.closeTo(st.erra, 1e-8);
        const lam = ref.s.map((si) => 1 + si - (st.t * si - (1 - st.t)) ** 2 / ((1 - st.t) ** 2 + st.t * st.t * si));
        expect(row.irreducible_loss).to.be.closeTo(lam.reduce((a, b) => a + b, 0), 1e-12);
      });
      for (const which of ['learned', 'exact'] as const) {
        for (const key of ['mean_err', 'cov_err', 'cov_err_vs_euler_law', 'w2'] as const) {
          expect(r.samples[which][key], `${which}.${key}`).to.be.closeTo(ref[which][key], 1e-7 * Math.max(1, ref[which][key]));
        }
      }
      // the learned sampler really uses the fitted fields: its output differs from the exact one
      expect(r.samples.learned.cov_err).to.not.be.closeTo(r.samples.exact.cov_err, 1e-9);
    }
  });

  it('reports the closed-form Euler gains and W₂, which fall roughly as 1/K', () => {
    for (const [seed, dims, steps] of [[42, 8, 16], [3, 3, 1], [4, 20, 7]] as const) {
      const r = runRaw(flowmatch, { seed, dims, steps }).result as any;
      const tg = referenceTarget(seed, dims);
      Array.from(r.target.eigvals as Float64Array).forEach((v, i) => expect(v).to.be.closeTo(tg.s[i]!, 1e-12));
      const cf = closedForm(tg.s, steps);
      expect(r.euler_gain).to.have.length(dims);
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
    const tg = referenceTarget(5, 4);
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
      const { s } = referenceTarget(seed, dims);
      expect(r.per_step).to.have.length(steps);
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

  it('the kernel check is the largest relative gap between the dof-adjusted and the irreducible loss, below 1 for every shape', () => {
    for (const [seed, dims, steps] of [[1, 1, 1], [2, 3, 5], [3, 8, 3]] as const) {
      const out = runRaw(flowmatch, { seed, dims, steps }) as any;
      const gaps = out.result.per_step.map((row: any) => Math.abs(row.fit_loss_dof_adjusted - row.irreducible_loss) / row.irreducible_loss);
      expect(out.checks.max_dof_gap_over_irreducible).to.equal(Math.max(...gaps));
      expect(out.checks.max_dof_gap_over_irreducible).to.be.below(1);
    }
  });

});
