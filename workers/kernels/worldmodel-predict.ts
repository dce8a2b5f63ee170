/**
 * A linear-Gaussian latent world model (kernels-b §7): the latent dynamics z' = A z + B a + w are
 * identified by ridge least squares from one seeded trajectory (locally linear latent dynamics,
 * Watter et al. 2015, arXiv:1506.07365), then used to "imagine" open-loop rollouts under a fixed
 * action plan with propagated predictive covariance P_h = Â P_{h−1} Âᵀ + Q̂ (Ha & Schmidhuber
 * 2018, arXiv:1803.10122; DreamerV3, arXiv:2301.04104). Imagination is scored against R true
 * rollouts by RMSE, NEES (calibration) and surprise (predictive negative log-likelihood), next to
 * an oracle that knows A, B and σ_w, and a persistence baseline.
 */
import { defineKernel } from '../kernel-def.js';
import { gramSchmidt, type Matrix } from '../lib/linalg.js';
import { int } from '../../src/lib/params.js';
import type { Rng, RngStreams } from '../../src/lib/prng.js';

export const ACTION_DIM = 2;
export const RHO_TRUE = 0.95;
export const SIGMA_W = 0.05;
export const RIDGE = 1e-6;
export const ROLLOUTS = 32;
const SQUARINGS = 12;

export const trainSteps = (d: number): number => 8 * (d + ACTION_DIM);

export interface LinearSystem {
  d: number;
  m: number;
  /** Row-major d×d and d×m. */
  A: Float64Array;
  B: Float64Array;
}

/** Draw order on `system`: d×d normals (row-major) orthogonalised by MGS into Q; then d×m normals for B (sd 1/√d). */
export function drawSystem(rng: Rng, d: number): LinearSystem {
  const g: Matrix = { rows: d, cols: d, data: rng.normals(d * d) };
  const { q } = gramSchmidt(g);
  const A = q.data.map((v) => RHO_TRUE * v);
  const B = rng.normals(d * ACTION_DIM, 1 / Math.sqrt(d));
  return { d, m: ACTION_DIM, A, B };
}

/** z' = A z + B a (+ w added by the caller). */
export function step(sys: LinearSystem, z: ArrayLike<number>, a: ArrayLike<number>, out: Float64Array): Float64Array {
  const { d, m, A, B } = sys;
  for (let i = 0; i < d; i++) {
    let s = 0;
    for (let j = 0; j < d; j++) s += A[i * d + j]! * z[j]!;
    for (let k = 0; k < m; k++) s += B[i * m + k]! * a[k]!;
    out[i] = s;
  }
  return out;
}

/**
 * Training data: rows X_t = [z_t, a_t], Y_t = z_{t+1}. Draw order on `train`: z_0 (d normals);
 * then per t: a_t (m normals), w_t (d normals, times σ_w).
 */
export function drawTraining(rng: Rng, sys: LinearSystem, T: number, sigmaW = SIGMA_W): { X: Float64Array; Y: Float64Array; T: number } {
  const { d, m } = sys;
  const p = d + m;
  const X = new Float64Array(T * p);
  const Y = new Float64Array(T * d);
  let z = rng.normals(d);
  const next = new Float64Array(d);
  for (let t = 0; t < T; t++) {
    const a = rng.normals(m);
    const w = rng.normals(d, sigmaW);
    step(sys, z, a, next);
    X.set(z, t * p);
    X.set(a, t * p + d);
    for (let i = 0; i < d; i++) Y[t * d + i] = next[i]! + w[i]!;
    z = Y.slice(t * d, (t + 1) * d);
  }
  return { X, Y, T };
}

/** Cholesky L (row-major) of a symmetric n×n matrix, or null when not positive definite. */
export function choleskyOrNull(a: Float64Array, n: number): Float64Array | null {
  const l = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let s = a[i * n + j]!;
      for (let k = 0; k < j; k++) s -= l[i * n + k]! * l[j * n + k]!;
      if (i === j) {
        if (!(s > 0)) return null;
        l[i * n + i] = Math.sqrt(s);
      } else {
        l[i * n + j] = s / l[j * n + j]!;
      }
    }
  }
  return l;
}

/** Solves L Lᵀ x = b in place of a copy. */
function cholSolve(l: Float64Array, n: number, b: ArrayLike<number>): Float64Array {
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = b[i]!;
    for (let k = 0; k < i; k++) s -= l[i * n + k]! * y[k]!;
    y[i] = s / l[i * n + i]!;
  }
  for (let i = n - 1; i >= 0; i--) {
    let s = y[i]!;
    for (let k = i + 1; k < n; k++) s -= l[k * n + i]! * y[k]!;
    y[i] = s / l[i * n + i]!;
  }
  return y;
}

export interface Fit {
  /** Θ ((d+m)×d, row-major) = (XᵀX + λI)⁻¹ XᵀY. */
  theta: Float64Array;
  Ahat: Float64Array;
  Bhat: Float64Array;
  /** Residual covariance EᵀE/(T − d − m). */
  Qhat: Float64Array;
  /** ‖(XᵀX + λI)Θ − XᵀY‖_max / ‖XᵀY‖_max. */
  normalEqResidual: number;
}

export function fitModel(X: Float64Array, Y: Float64Array, T: number, d: number, m: number, lambda = RIDGE): Fit {
  const p = d + m;
  const G = new Float64Array(p * p);
  const XtY = new Float64Array(p * d);
  for (let t = 0; t < T; t++) {
    for (let i = 0; i < p; i++) {
      const xi = X[t * p + i]!;
      for (let j = i; j < p; j++) G[i * p + j] = G[i * p + j]! + xi * X[t * p + j]!;
      for (let k = 0; k < d; k++) XtY[i * d + k] = XtY[i * d + k]! + xi * Y[t * d + k]!;
    }
  }
  for (let i = 0; i < p; i++) {
    G[i * p + i] = G[i * p + i]! + lambda;
    for (let j = 0; j < i; j++) G[i * p + j] = G[j * p + i]!;
  }
  const L = choleskyOrNull(G, p);
  if (!L) throw new Error('worldmodel: normal equations are not positive definite');
  const theta = new Float64Array(p * d);
  for (let k = 0; k < d; k++) {
    const col = cholSolve(
      L,
      p,
      Array.from({ length: p }, (_, i) => XtY[i * d + k]!),
    );
    for (let i = 0; i < p; i++) theta[i * d + k] = col[i]!;
  }
  let res = 0;
  let scale = 0;
  for (let i = 0; i < p; i++) {
    for (let k = 0; k < d; k++) {
      let s = 0;
      for (let j = 0; j < p; j++) s += G[i * p + j]! * theta[j * d + k]!;
      res = Math.max(res, Math.abs(s - XtY[i * d + k]!));
      scale = Math.max(scale, Math.abs(XtY[i * d + k]!));
    }
  }
  // Â = Θ[0:d]ᵀ, B̂ = Θ[d:]ᵀ
  const Ahat = new Float64Array(d * d);
  const Bhat = new Float64Array(d * m);
  for (let i = 0; i < d; i++) {
    for (let j = 0; j < d; j++) Ahat[i * d + j] = theta[j * d + i]!;
    for (let k = 0; k < m; k++) Bhat[i * m + k] = theta[(d + k) * d + i]!;
  }
  const Qhat = new Float64Array(d * d);
  const e = new Float64Array(d);
  for (let t = 0; t < T; t++) {
    for (let k = 0; k < d; k++) {
      let s = Y[t * d + k]!;
      for (let j = 0; j < p; j++) s -= X[t * p + j]! * theta[j * d + k]!;
      e[k] = s;
    }
    for (let a = 0; a < d; a++) for (let b = 0; b < d; b++) Qhat[a * d + b] = Qhat[a * d + b]! + e[a]! * e[b]!;
  }
  const dof = T - d - m;
  for (let i = 0; i < d * d; i++) Qhat[i] = Qhat[i]! / dof;
  return { theta, Ahat, Bhat, Qhat, normalEqResidual: scale > 0 ? res / scale : res };
}

/**
 * ρ(M) by Gelfand's formula ρ = lim ‖M^k‖^{1/k}, by repeated squaring with renormalisation. The
 * ratio ‖M^{2k}‖/‖M^k‖ over the last squaring (k = 2^11) cancels the norm's constant factor, so the
 * estimate is exact for normal matrices and converges fast otherwise.
 */
export function spectralRadius(M: Float64Array, d: number): number {
  let cur = Float64Array.from(M);
  let logScale = 0; // M^(2^s) = cur · e^{logScale}
  let prevLog = NaN;
  let lastLog = NaN;
  const tmp = new Float64Array(d * d);
  for (let s = 0; s <= SQUARINGS; s++) {
    let fro = 0;
    for (const v of cur) fro += v * v;
    fro = Math.sqrt(fro);
    if (fro === 0) return 0;
    prevLog = lastLog;
    lastLog = logScale + Math.log(fro); // ln ‖M^(2^s)‖_F
    if (s === SQUARINGS) break;
    for (let i = 0; i < d * d; i++) cur[i] = cur[i]! / fro;
    logScale = 2 * lastLog;
    tmp.fill(0);
    for (let i = 0; i < d; i++) {
      for (let k = 0; k < d; k++) {
        const a = cur[i * d + k]!;
        if (a !== 0) for (let j = 0; j < d; j++) tmp[i * d + j] = tmp[i * d + j]! + a * cur[k * d + j]!;
      }
    }
    cur = Float64Array.from(tmp);
  }
  return Math.exp((lastLog - prevLog) / 2 ** (SQUARINGS - 1));
}

/** out = M P Mᵀ + Q (all d×d), with `tmp` as scratch. */
function propagate(M: Float64Array, P: Float64Array, Q: Float64Array, d: number, tmp: Float64Array, out: Float64Array): void {
  tmp.fill(0);
  for (let i = 0; i < d; i++) {
    for (let k = 0; k < d; k++) {
      const a = M[i * d + k]!;
      if (a === 0) continue;
      const pk = k * d;
      const ti = i * d;
      for (let j = 0; j < d; j++) tmp[ti + j] = tmp[ti + j]! + a * P[pk + j]!;
    }
  }
  for (let i = 0; i < d; i++) {
    for (let j = 0; j <= i; j++) {
      let s = 0;
      const ti = i * d;
      const mj = j * d;
      for (let k = 0; k < d; k++) s += tmp[ti + k]! * M[mj + k]!;
      // symmetrise exactly: P stays symmetric to the last bit
      out[i * d + j] = s + Q[i * d + j]!;
    }
  }
  for (let i = 0; i < d; i++) for (let j = i + 1; j < d; j++) out[i * d + j] = out[j * d + i]!;
}

/** ‖L⁻¹e‖² = eᵀ(LLᵀ)⁻¹e by forward substitution, `y` as scratch. */
function mahalanobisSq(L: Float64Array, d: number, e: Float64Array, y: Float64Array): number {
  let q = 0;
  for (let i = 0; i < d; i++) {
    let s = e[i]!;
    const li = i * d;
    for (let k = 0; k < i; k++) s -= L[li + k]! * y[k]!;
    y[i] = s / L[li + i]!;
    q += y[i]! * y[i]!;
  }
  return q;
}

interface Scores {
  rmse: number[];
  pred_std: number[];
  nees: (number | null)[];
  surprise: (number | null)[];
  trace_P: number[];
}

/** The whole experiment; `sigmaW` is exposed for the noise-free identification test only. */
export function worldModel(rng: RngStreams, d: number, H: number, sigmaW = SIGMA_W) {
  const m = ACTION_DIM;
  const sys = drawSystem(rng.stream('system'), d);
  const T = trainSteps(d);
  const { X, Y } = drawTraining(rng.stream('train'), sys, T, sigmaW);
  const fit = fitModel(X, Y, T, d, m);
  const learned: LinearSystem = { d, m, A: fit.Ahat, B: fit.Bhat };
  // stream `test`: z_0 (d normals), then H actions (m normals each)
  const test = rng.stream('test');
  const z0 = test.normals(d);
  const actions = Array.from({ length: H }, () => test.normals(m));
  // streams `rollout/<r>`: per step d normals (times σ_w)
  const streams = Array.from({ length: ROLLOUTS }, (_, r) => rng.stream(`rollout/${r}`));
  const truth = Array.from({ length: ROLLOUTS }, () => Float64Array.from(z0));
  const learnedScores: Scores = { rmse: [], pred_std: [], nees: [], surprise: [], trace_P: [] };
  const oracleScores: Scores = { rmse: [], pred_std: [], nees: [], surprise: [], trace_P: [] };
  let zHat: Float64Array = Float64Array.from(z0);
  let zOracle: Float64Array = Float64Array.from(z0);
  const P = new Float64Array(d * d);
  // the oracle's covariance stays isotropic: A_true·A_trueᵀ = ρ²I (ρ times an orthogonal matrix), so
  // P_h = ρ²P_{h−1} + σ_w²I = c_h·I with c_h = σ_w² Σ_{k<h} ρ^{2k}
  let cOracle = 0;
  const persistence: number[] = [];
  const next = new Float64Array(d);
  const scratch = new Float64Array(d * d);
  const pNext = new Float64Array(d * d);
  const err = new Float64Array(d);
  const y = new Float64Array(d);
  const ln2pi = Math.log(2 * Math.PI);
  for (let h = 0; h < H; h++) {
    for (let r = 0; r < ROLLOUTS; r++) {
      step(sys, truth[r]!, actions[h]!, next);
      const w = streams[r]!.normals(d, sigmaW);
      for (let i = 0; i < d; i++) truth[r]![i] = next[i]! + w[i]!;
    }
    let pers = 0;
    for (const zt of truth) for (let i = 0; i < d; i++) pers += (zt[i]! - z0[i]!) ** 2;
    persistence.push(Math.sqrt(pers / (ROLLOUTS * d)));

    // learned model: general covariance propagation, NEES by Cholesky
    zHat = step(learned, zHat, actions[h]!, new Float64Array(d));
    propagate(learned.A, P, fit.Qhat, d, scratch, pNext);
    P.set(pNext);
    let tr = 0;
    for (let i = 0; i < d; i++) tr += P[i * d + i]!;
    const L = choleskyOrNull(P, d);
    let sq = 0;
    let nees = 0;
    for (const zt of truth) {
      for (let i = 0; i < d; i++) {
        err[i] = zt[i]! - zHat[i]!;
        sq += err[i]! * err[i]!;
      }
      if (L) nees += mahalanobisSq(L, d, err, y);
    }
    learnedScores.rmse.push(Math.sqrt(sq / (ROLLOUTS * d)));
    learnedScores.pred_std.push(Math.sqrt(tr / d));
    learnedScores.trace_P.push(tr);
    if (L) {
      let logdet = 0;
      for (let i = 0; i < d; i++) logdet += 2 * Math.log(L[i * d + i]!);
      learnedScores.nees.push(nees / ROLLOUTS);
      learnedScores.surprise.push(0.5 * (nees / ROLLOUTS + d * ln2pi + logdet));
    } else {
      learnedScores.nees.push(null);
      learnedScores.surprise.push(null);
    }

    // oracle: true A, B and σ_w²I
    zOracle = step(sys, zOracle, actions[h]!, new Float64Array(d));
    cOracle = RHO_TRUE * RHO_TRUE * cOracle + sigmaW * sigmaW;
    let sqO = 0;
    for (const zt of truth) for (let i = 0; i < d; i++) sqO += (zt[i]! - zOracle[i]!) ** 2;
    oracleScores.rmse.push(Math.sqrt(sqO / (ROLLOUTS * d)));
    oracleScores.pred_std.push(Math.sqrt(cOracle));
    oracleScores.trace_P.push(d * cOracle);
    if (cOracle > 0) {
      const neesO = sqO / cOracle / ROLLOUTS;
      oracleScores.nees.push(neesO);
      oracleScores.surprise.push(0.5 * (neesO + d * (ln2pi + Math.log(cOracle))));
    } else {
      oracleScores.nees.push(null);
      oracleScores.surprise.push(null);
    }
  }
  let num = 0;
  let den = 0;
  for (let i = 0; i < d * d; i++) {
    num += (fit.Ahat[i]! - sys.A[i]!) ** 2;
    den += sys.A[i]! ** 2;
  }
  return {
    sys,
    fit,
    T,
    z0,
    actions,
    learned: learnedScores,
    oracle: oracleScores,
    persistence,
    modelErrorRel: Math.sqrt(num / den),
    spectralRadiusHat: spectralRadius(fit.Ahat, d),
  };
}

const rowsOf = (a: Float64Array, r: number, c: number): number[][] => Array.from({ length: r }, (_, i) => Array.from(a.subarray(i * c, (i + 1) * c)));

export default defineKernel({
  id: 'worldmodel/predict',
  version: 1,
  input: 'query',
  summary: 'Linear-Gaussian latent world model identified by ridge least squares; imagined rollouts scored by RMSE, NEES calibration and surprise',
  technique: 'least-squares system identification of latent linear dynamics, open-loop imagination with covariance propagation, NEES and predictive NLL',
  references: ['arXiv:1803.10122', 'arXiv:2301.04104', 'arXiv:1506.07365'],
  honesty: 'The identification, covariance propagation and scores are real; the latent system, its training trajectory and the rollouts are seeded synthetic draws.',
  params: {
    horizon: int(1, 128, 12).description('imagined rollout steps'),
    latent_dim: int(1, 32, 16).description('dimension of the latent state'),
  },
  worstCase: { horizon: 128, latent_dim: 32 },
  run({ horizon: H, latent_dim: d }, rng) {
    // draws: `system` (Q then B), `train` (z_0, then a_t, w_t), `test` (z_0, actions), `rollout/<r>` (noise per step)
    const r = worldModel(rng, d, H);
    let traceMonotone = true;
    for (let h = 1; h < H; h++) if (r.learned.trace_P[h]! < r.learned.trace_P[h - 1]! * (1 - 1e-12)) traceMonotone = false;
    return {
      constants: { action_dim: ACTION_DIM, rho_true: RHO_TRUE, sigma_w: SIGMA_W, ridge: RIDGE, spectral_radius_method: `Gelfand formula by repeated squaring: (||A^(2^${SQUARINGS})||_F / ||A^(2^${SQUARINGS - 1})||_F)^(2^-${SQUARINGS - 1})` },
      result: {
        d,
        m: ACTION_DIM,
        train_steps: r.T,
        rollouts: ROLLOUTS,
        rmse: r.learned.rmse,
        pred_std: r.learned.pred_std,
        nees: r.learned.nees,
        surprise: r.learned.surprise,
        trace_P: r.learned.trace_P,
        oracle: { rmse: r.oracle.rmse, pred_std: r.oracle.pred_std, nees: r.oracle.nees, surprise: r.oracle.surprise },
        persistence_rmse: r.persistence,
        model_error_rel: r.modelErrorRel,
        spectral_radius_hat: r.spectralRadiusHat,
        normal_eq_residual: r.fit.normalEqResidual,
        z0: r.z0,
        actions: r.actions,
        A_hat: rowsOf(r.fit.Ahat, d, d),
        B_hat: rowsOf(r.fit.Bhat, d, ACTION_DIM),
        Q_hat: rowsOf(r.fit.Qhat, d, d),
        A_true: rowsOf(r.sys.A, d, d),
        B_true: rowsOf(r.sys.B, d, ACTION_DIM),
      },
      checks: {
        normal_equations_solved: r.fit.normalEqResidual <= 1e-8,
        trace_P_non_decreasing: traceMonotone,
      },
    };
  },
});
