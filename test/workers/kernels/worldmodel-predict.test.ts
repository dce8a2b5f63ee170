import { expect } from 'chai';
import wm, { drawSystem, drawTraining, fitModel, spectralRadius, trainSteps, worldModel } from '../../../workers/kernels/worldmodel-predict.js';
import { RngStreams } from '../../../workers/lib/prng.js';
import { rejects, runBody, runRaw } from '../../helpers/kernels.js';

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

describe('kernel worldmodel/predict', () => {
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
    const A: Mat = r.A_hat;
    const Q: Mat = r.Q_hat;
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
      expect(r.normal_eq_residual).to.be.below(1e-8);
      // A_true / 0.95 is orthogonal
      const Q: Mat = r.A_true.map((row: number[]) => row.map((x) => x / 0.95));
      const I = mul(Q, tr(Q));
      I.forEach((row, i) => row.forEach((x, j) => expect(x).to.be.closeTo(i === j ? 1 : 0, 1e-10)));
    }
  });

  it('is deterministic and seed-sensitive; refuses bad parameters', () => {
    expect(runBody(wm, { seed: 3 })).to.equal(runBody(wm, { seed: 3 }));
    expect(runBody(wm, { seed: 1 })).to.not.equal(runBody(wm, { seed: 2 }));
    expect(rejects(wm, { horizon: '0', latent_dim: '0' })).to.deep.equal(['horizon:number.min', 'latent_dim:number.min']);
    expect(rejects(wm, { horizon: '129', latent_dim: '33' })).to.deep.equal(['horizon:number.max', 'latent_dim:number.max']);
    expect(rejects(wm, { horizon: '1e2' })).to.deep.equal(['horizon:qint.parse']);
    expect(rejects(wm, { horizon: '128', latent_dim: '32' })).to.deep.equal([]);
  });
});
