import { expect } from 'chai';
import wm, { drawSystem, drawTraining, fitModel, spectralRadius, trainSteps, worldModel } from '../../../workers/kernels/worldmodel-predict.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { runRaw } from '../../helpers/kernels.js';
import { solveLinearColumns } from '../../helpers/linear-solve.js';

type Mat = number[][];
const mul = (a: Mat, b: Mat): Mat => a.map((row) => b[0]!.map((_, j) => row.reduce((s, x, k) => s + x * b[k]![j]!, 0)));
const tr = (a: Mat): Mat => a[0]!.map((_, j) => a.map((row) => row[j]!));
const add = (a: Mat, b: Mat): Mat => a.map((row, i) => row.map((x, j) => x + b[i]![j]!));

/** Cholesky that reports failure instead of throwing. */
function isPsd(a: Mat, jitter: number): boolean {
  const n = a.length;
  const l = a.map(() => new Array<number>(n).fill(0));
  for (let i = 0; i < n; i++)
    for (let j = 0; j <= i; j++) {
      let s = a[i]![j]! + (i === j ? jitter : 0);
      for (let k = 0; k < j; k++) s -= l[i]![k]! * l[j]![k]!;
      if (i === j) {
        if (s <= 0) return false;
        l[i]![i] = Math.sqrt(s);
      } else l[i]![j] = s / l[j]![j]!;
    }
  return true;
}

const det = (M: Mat): number => {
  const a = M.map((r) => [...r]);
  let d = 1;
  for (let k = 0; k < a.length; k++) {
    let p = k;
    for (let i = k + 1; i < a.length; i++) if (Math.abs(a[i]![k]!) > Math.abs(a[p]![k]!)) p = i;
    if (p !== k) {
      [a[k], a[p]] = [a[p]!, a[k]!];
      d = -d;
    }
    d *= a[k]![k]!;
    for (let i = k + 1; i < a.length; i++) {
      const f = a[i]![k]! / a[k]![k]!;
      for (let j = k; j < a.length; j++) a[i]![j] = a[i]![j]! - f * a[k]![j]!;
    }
  }
  return d;
};

/**
 * Independent replay (kernels-b §7): stream system gives a d×d normal matrix whose columns are
 * orthonormalised (modified Gram–Schmidt), A = 0.95·Q, then B (d×2, sd 1/√d); stream train gives z_0,
 * then per step a_t (2) and w_t (d, ×0.05); the ridge fit Θ = (XᵀX + 1e-6 I)⁻¹XᵀY by elimination;
 * stream test gives z_0 and the actions; stream rollout/<r> gives each true rollout's noise.
 */
function reference(seed: number, d: number, H: number) {
  const rng = new RngStreams(seed, 'worldmodel/predict');
  const sy = rng.stream('system');
  const G = Array.from({ length: d }, () => Array.from({ length: d }, () => sy.normal()));
  const Q = G.map((r) => [...r]);
  for (let j = 0; j < d; j++) {
    for (let i = 0; i < j; i++) {
      const s = Q.reduce((t, row) => t + row[i]! * row[j]!, 0);
      Q.forEach((row) => (row[j] = row[j]! - s * row[i]!));
    }
    const len = Math.hypot(...Q.map((row) => row[j]!));
    Q.forEach((row) => (row[j] = row[j]! / len));
  }
  const A = Q.map((row) => row.map((x) => 0.95 * x));
  const B = Array.from({ length: d }, () => Array.from({ length: 2 }, () => sy.normal() / Math.sqrt(d)));
  const stepOf = (Am: Mat, Bm: Mat, z: number[], a: number[]) => z.map((_, i) => Am[i]!.reduce((s, x, j) => s + x * z[j]!, 0) + Bm[i]!.reduce((s, x, k) => s + x * a[k]!, 0));
  const trn = rng.stream('train');
  const T = 8 * (d + 2);
  let z = Array.from({ length: d }, () => trn.normal());
  const X: Mat = [];
  const Y: Mat = [];
  for (let t = 0; t < T; t++) {
    const a = [trn.normal(), trn.normal()];
    const w = Array.from({ length: d }, () => 0.05 * trn.normal());
    const next = stepOf(A, B, z, a).map((v, i) => v + w[i]!);
    X.push([...z, ...a]);
    Y.push(next);
    z = next;
  }
  const XtX = tr(X).map((row, i) => tr(X).map((col, j) => row.reduce((s, x, k) => s + x * col[k]!, 0) + (i === j ? 1e-6 : 0)));
  const theta = solveLinearColumns(XtX, mul(tr(X), Y));
  const Ahat = tr(theta.slice(0, d));
  const Bhat = tr(theta.slice(d));
  const E = Y.map((y, t) => y.map((v, k) => v - X[t]!.reduce((s, x, j) => s + x * theta[j]![k]!, 0)));
  const Qhat = tr(E).map((ei) => tr(E).map((ej) => ei.reduce((s, x, t) => s + x * ej[t]!, 0) / (T - d - 2)));
  const test = rng.stream('test');
  const z0 = Array.from({ length: d }, () => test.normal());
  const actions = Array.from({ length: H }, () => [test.normal(), test.normal()]);
  const noise = Array.from({ length: 32 }, (_, r) => rng.stream(`rollout/${r}`));
  let truth = Array.from({ length: 32 }, () => [...z0]);
  let zh = [...z0];
  let zo = [...z0];
  let P: Mat = Array.from({ length: d }, () => new Array<number>(d).fill(0));
  let c = 0;
  const out = { rmse: [] as number[], std: [] as number[], nees: [] as number[], surprise: [] as number[], trace: [] as number[], ormse: [] as number[], ostd: [] as number[], onees: [] as number[], osurprise: [] as number[], pers: [] as number[] };
  const rms = (ref: number[]) => Math.sqrt(truth.reduce((s, zt) => s + zt.reduce((t, v, i) => t + (v - ref[i]!) ** 2, 0), 0) / (32 * d));
  for (let h = 0; h < H; h++) {
    truth = truth.map((zt, r) => stepOf(A, B, zt, actions[h]!).map((v) => v + 0.05 * noise[r]!.normal()));
    out.pers.push(rms(z0));
    zh = stepOf(Ahat, Bhat, zh, actions[h]!);
    P = add(mul(mul(Ahat, P), tr(Ahat)), Qhat);
    out.rmse.push(rms(zh));
    const trace = P.reduce((s, row, i) => s + row[i]!, 0);
    out.trace.push(trace);
    out.std.push(Math.sqrt(trace / d));
    const errs = truth.map((zt) => zt.map((v, i) => [v - zh[i]!]));
    const nees = errs.reduce((s, e) => s + solveLinearColumns(P, e).reduce((t, x, i) => t + x[0]! * e[i]![0]!, 0), 0) / 32;
    out.nees.push(nees);
    out.surprise.push(0.5 * (nees + d * Math.log(2 * Math.PI) + Math.log(det(P))));
    zo = stepOf(A, B, zo, actions[h]!);
    c = 0.95 ** 2 * c + 0.05 ** 2;
    const so = truth.reduce((s, zt) => s + zt.reduce((t, v, i) => t + (v - zo[i]!) ** 2, 0), 0);
    out.ormse.push(Math.sqrt(so / (32 * d)));
    out.ostd.push(Math.sqrt(c));
    out.onees.push(so / c / 32);
    out.osurprise.push(0.5 * (so / c / 32 + d * (Math.log(2 * Math.PI) + Math.log(c))));
  }
  const relErr = Math.sqrt(Ahat.reduce((s, row, i) => s + row.reduce((t, x, j) => t + (x - A[i]![j]!) ** 2, 0), 0) / A.reduce((s, row) => s + row.reduce((t, x) => t + x * x, 0), 0));
  return { A, B, Ahat, Bhat, Qhat, z0, actions, T, relErr, ...out };
}

describe('kernel worldmodel/predict', () => {
  it('every reported value recomputed by an independent replay (system, data, ridge fit by elimination, rollouts, scores)', () => {
    for (const [seed, d, H] of [[42, 16, 12], [3, 4, 30], [9, 1, 5], [5, 2, 8]] as const) {
      const r = runRaw(wm, { seed: String(seed), horizon: String(H), latent_dim: String(d) }).result as any;
      const ref = reference(seed, d, H);
      const close = (a: number, b: number, what: string, tol = 1e-8) => expect(a, what).to.be.closeTo(b, tol * Math.max(1, Math.abs(b)));
      const mat = (a: number[][], b: Mat, what: string, tol?: number) => {
        // the shape first: an empty or short matrix must not pass by checking nothing
        expect(a.map((row) => row.length), what).to.deep.equal(b.map((row) => row.length));
        a.forEach((row, i) => row.forEach((x, j) => close(x, b[i]![j]!, `${what} ${i},${j}`, tol)));
      };
      expect([r.d, r.m, r.train_steps, r.rollouts]).to.deep.equal([d, 2, ref.T, 32]);
      mat(r.A_true, ref.A, 'A', 1e-12);
      mat(r.B_true, ref.B, 'B', 1e-12);
      mat(r.A_hat, ref.Ahat, 'Â');
      mat(r.B_hat, ref.Bhat, 'B̂');
      mat(r.Q_hat, ref.Qhat, 'Q̂');
      expect([r.z0.length, r.actions.length]).to.deep.equal([d, H]);
      Array.from(r.z0 as ArrayLike<number>).forEach((x, i) => close(x, ref.z0[i]!, 'z0', 1e-15));
      r.actions.forEach((a: ArrayLike<number>, h: number) => Array.from(a).forEach((x, k) => close(x, ref.actions[h]![k]!, 'action', 1e-15)));
      const series: [string, number[], number[]][] = [
        ['rmse', r.rmse, ref.rmse], ['pred_std', r.pred_std, ref.std], ['nees', r.nees, ref.nees], ['surprise', r.surprise, ref.surprise], ['trace_P', r.trace_P, ref.trace],
        ['oracle rmse', r.oracle.rmse, ref.ormse], ['oracle std', r.oracle.pred_std, ref.ostd], ['oracle nees', r.oracle.nees, ref.onees], ['oracle surprise', r.oracle.surprise, ref.osurprise], ['persistence', r.persistence_rmse, ref.pers],
      ];
      for (const [name, got, want] of series) {
        expect(got.length, name).to.equal(H);
        got.forEach((x, h) => close(x, want[h]!, `${name} ${h}`, 1e-6));
      }
      close(r.model_error_rel, ref.relErr, 'model error');
    }
  });

  it('the spectral radius of Â (replayed): the closed-form eigenvalue modulus at d = 2, between |det Â|^(1/d) and ‖Â‖₂ otherwise', () => {
    for (const [seed, d] of [[5, 2], [11, 2], [42, 16], [3, 4]] as const) {
      const r = runRaw(wm, { seed: String(seed), horizon: '3', latent_dim: String(d) }).result as any;
      const A: Mat = reference(seed, d, 3).Ahat;
      if (d === 2) {
        const t = A[0]![0]! + A[1]![1]!;
        const dt = A[0]![0]! * A[1]![1]! - A[0]![1]! * A[1]![0]!;
        const disc = t * t - 4 * dt;
        const rho = disc >= 0 ? Math.max(Math.abs((t + Math.sqrt(disc)) / 2), Math.abs((t - Math.sqrt(disc)) / 2)) : Math.sqrt(dt);
        expect(r.spectral_radius_hat).to.be.closeTo(rho, 1e-6);
      } else {
        // ‖Â‖₂ by power iteration on ÂᵀÂ (symmetric PSD, so it converges to the largest singular value squared)
        const AtA = mul(tr(A), A);
        let v = A.map((_, i) => 1 + i / d);
        let sigma2 = 0;
        for (let k = 0; k < 2000; k++) {
          const w = AtA.map((row) => row.reduce((s, x, j) => s + x * v[j]!, 0));
          sigma2 = Math.hypot(...w) / Math.hypot(...v);
          v = w.map((x) => x / Math.hypot(...w));
        }
        // Â is near 0.95·orthogonal, so both bounds are close to 0.95 and pin the estimate to about 1 %
        expect(r.spectral_radius_hat).to.be.at.least(Math.abs(det(A)) ** (1 / d) - 1e-9);
        expect(r.spectral_radius_hat).to.be.at.most(Math.sqrt(sigma2) + 1e-9);
        expect(Math.sqrt(sigma2) - Math.abs(det(A)) ** (1 / d)).to.be.below(0.05);
      }
    }
  });

  it('ridge least squares solves its normal equations (recomputed in the test from the training data)', () => {
    for (const d of [1, 5, 16, 32]) {
      const rng = new RngStreams(d, 'worldmodel/predict');
      const sys = drawSystem(rng.stream('system'), d);
      const T = trainSteps(d);
      const { X, Y } = drawTraining(rng.stream('train'), sys, T);
      const fit = fitModel(X, Y, T, d, 2);
      const p = d + 2;
      let res = 0;
      let scale = 0;
      for (let i = 0; i < p; i++)
        for (let k = 0; k < d; k++) {
          let xty = 0;
          for (let t = 0; t < T; t++) xty += X[t * p + i]! * Y[t * d + k]!;
          let lhs = 1e-6 * fit.theta[i * d + k]!;
          for (let j = 0; j < p; j++) {
            let g = 0;
            for (let t = 0; t < T; t++) g += X[t * p + i]! * X[t * p + j]!;
            lhs += g * fit.theta[j * d + k]!;
          }
          res = Math.max(res, Math.abs(lhs - xty));
          scale = Math.max(scale, Math.abs(xty));
        }
      expect(res).to.be.at.most(1e-8 * scale);
      // Â, B̂ are the blocks of Θᵀ
      expect(fit.Ahat[0]).to.equal(fit.theta[0]);
      if (d > 1) expect(fit.Ahat[1]).to.equal(fit.theta[d]);
    }
  });

  it('P_h is Loewner-monotone: recomputed from A_hat and Q_hat, consecutive differences are PSD and trace_P matches', () => {
    const r = runRaw(wm, { seed: 4, latent_dim: 6, horizon: 15 }).result as any;
    const { Ahat: A, Qhat: Q } = reference(4, 6, 15);
    let P: Mat = Q.map((row) => row.map(() => 0));
    let prev: Mat = P;
    for (let h = 0; h < 15; h++) {
      const next = add(mul(mul(A, P), tr(A)), Q);
      const trace = next.reduce((s, row, i) => s + row[i]!, 0);
      expect(r.trace_P[h]).to.be.closeTo(trace, 1e-9 * trace);
      expect(r.pred_std[h]).to.be.closeTo(Math.sqrt(trace / 6), 1e-9);
      if (h > 0) expect(r.trace_P[h]).to.be.at.least(r.trace_P[h - 1]);
      expect(isPsd(next.map((row, i) => row.map((x, j) => x - P[i]![j]!)), 1e-12)).to.equal(true);
      prev = P;
      P = next;
    }
    expect(prev).to.not.deep.equal(P);
  });

  it('the oracle is calibrated: over seeds 0…9 every mean NEES lies in d ± 4√(2d/R)', () => {
    for (let seed = 0; seed < 10; seed++) {
      const d = 4 + seed;
      const r = runRaw(wm, { seed, latent_dim: d, horizon: 20 }).result as any;
      const band = 4 * Math.sqrt((2 * d) / 32);
      for (const n of r.oracle.nees) expect(Math.abs(n - d)).to.be.at.most(band);
      // its covariance is σ²·Σ ρ^{2k}·I, recomputed generically from A_true
      const A: Mat = r.A_true;
      let P: Mat = A.map((row) => row.map(() => 0));
      for (let h = 0; h < 20; h++) {
        P = add(mul(mul(A, P), tr(A)), A.map((row, i) => row.map((_, j) => (i === j ? 0.0025 : 0))));
        for (let i = 0; i < d; i++) expect(r.oracle.pred_std[h] ** 2).to.be.closeTo(P[i]![i]!, 1e-12);
        expect(Math.abs(P[0]![d - 1]!)).to.be.below(1e-12);
      }
    }
  });

  it('noise-free identification: with σ_w = 0 the fit recovers A and B and imagination tracks the truth', () => {
    const rng = new RngStreams(5, 'worldmodel/predict');
    const out = worldModel(rng, 8, 30, 0);
    for (let i = 0; i < 64; i++) expect(out.fit.Ahat[i]).to.be.closeTo(out.sys.A[i]!, 1e-6);
    for (let i = 0; i < 16; i++) expect(out.fit.Bhat[i]).to.be.closeTo(out.sys.B[i]!, 1e-6);
    for (const e of out.learned.rmse) expect(e).to.be.at.most(1e-6);
    expect(out.oracle.rmse.every((e) => e === 0)).to.equal(true);
    expect(out.oracle.nees.every((n) => n === null)).to.equal(true);
    expect(out.spectralRadiusHat).to.be.closeTo(0.95, 1e-3);
  });

  it('spectral radius: Gelfand estimate equals the known eigenvalue modulus of triangular and rotation matrices', () => {
    const rng = new RngStreams(1, 'test');
    const s = rng.stream('m');
    const d = 6;
    const M = new Float64Array(d * d);
    const diag = [0.3, -0.8, 0.5, 0.7, -0.1, 0.2];
    for (let i = 0; i < d; i++) for (let j = i; j < d; j++) M[i * d + j] = i === j ? diag[i]! : s.normal();
    expect(spectralRadius(M, d)).to.be.closeTo(0.8, 2e-3);
    const c = Math.cos(0.3);
    const sn = Math.sin(0.3);
    expect(spectralRadius(Float64Array.from([1.1 * c, -1.1 * sn, 1.1 * sn, 1.1 * c]), 2)).to.be.closeTo(1.1, 1e-9);
    expect(spectralRadius(new Float64Array(4), 2)).to.equal(0);
  });

  it('usefulness and diagnostics: one-step RMSE beats persistence for seeds 0…19; model error recomputes', () => {
    for (let seed = 0; seed < 20; seed++) {
      const r = runRaw(wm, { seed }).result as any;
      expect(r.rmse[0]).to.be.below(r.persistence_rmse[0]);
      let num = 0;
      let den = 0;
      r.A_hat.forEach((row: number[], i: number) => row.forEach((x, j) => ((num += (x - r.A_true[i][j]) ** 2), (den += r.A_true[i][j] ** 2))));
      expect(r.model_error_rel).to.be.closeTo(Math.sqrt(num / den), 1e-9);
      // a rounding-level residual of the kernel's own solve (no exact value to recompute): a fixed bound
      expect(r.normal_eq_residual).to.be.at.least(0).and.below(1e-8);
      // A_true / 0.95 is orthogonal
      const Q: Mat = r.A_true.map((row: number[]) => row.map((x) => x / 0.95));
      const I = mul(Q, tr(Q));
      I.forEach((row, i) => row.forEach((x, j) => expect(x).to.be.closeTo(i === j ? 1 : 0, 1e-10)));
    }
  });
});
