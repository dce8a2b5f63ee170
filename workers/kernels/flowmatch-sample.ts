/**
 * Conditional flow matching (Lipman et al., arXiv:2210.02747) on the linear rectified-flow path
 * x_t = (1−t)x₀ + t·x₁ (Liu et al., arXiv:2209.03003; Albergo & Vanden-Eijnden,
 * arXiv:2209.15571) from N(0, I) to a Gaussian target N(μ, Σ). The marginal velocity is affine,
 * v*(x,t) = μ + (tΣ − (1−t)I)·C_t⁻¹·(x − tμ) with C_t = (1−t)²I + t²Σ, so a per-step affine
 * regressor fitted by least squares on the CFM loss is well specified, and the Euler sampler's
 * output law has the closed form μ + U·diag(g)·Uᵀx₀, g_i = Π_k (1 + c_i(t_k)/K).
 * Design: kernels-b §19.
 */
import { defineKernel } from '../kernel-def.js';
import { int } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';
import { cholesky, choleskySolve, gramSchmidt, jacobiEigen, type Matrix } from '../lib/linalg.js';

export const RIDGE = 1e-9;
export const SAMPLES = 128;
export const batchSize = (d: number): number => Math.max(64, 4 * (d + 1));

export interface Target {
  d: number;
  mu: Float64Array;
  /** U[i*d + j]: column j is the j-th eigenvector */
  U: Float64Array;
  s: Float64Array;
  /** Σ = U diag(s) Uᵀ and Σ^{½} = U diag(√s) Uᵀ */
  sigma: Float64Array;
  sqrtSigma: Float64Array;
}

/** U·diag(f(s))·Uᵀ. */
export function spectral(U: Float64Array, vals: ArrayLike<number>, d: number): Float64Array {
  const out = new Float64Array(d * d);
  for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) {
    let acc = 0;
    for (let m = 0; m < d; m++) acc += U[i * d + m]! * vals[m]! * U[j * d + m]!;
    out[i * d + j] = acc;
  }
  return out;
}

/** Draw order, stream `target`: μ (d normals × 2), U (d·d normals → modified Gram–Schmidt, diag R > 0), s (d uniforms, s = (0.5 + 1.5u)²). */
export function drawTarget(d: number, rng: Rng): Target {
  const mu = rng.normals(d, 2);
  const G: Matrix = { rows: d, cols: d, data: rng.normals(d * d) };
  const U = gramSchmidt(G).q.data;
  const s = Float64Array.from({ length: d }, () => (0.5 + 1.5 * rng.next()) ** 2);
  return { d, mu, U, s, sigma: spectral(U, s, d), sqrtSigma: spectral(U, Array.from(s, Math.sqrt), d) };
}

/** c_i(t) = (t·s_i − (1−t)) / ((1−t)² + t²·s_i), the eigenvalues of B*(t). */
export const cCoef = (t: number, s: number): number => (t * s - (1 - t)) / ((1 - t) ** 2 + t * t * s);

/** Exact field coefficients at t: B* = U diag(c(t)) Uᵀ, a* = μ − t·B*μ. */
export function exactField(tg: Target, t: number): { a: Float64Array; B: Float64Array } {
  const { d, mu } = tg;
  const B = spectral(tg.U, Array.from(tg.s, (s) => cCoef(t, s)), d);
  const a = new Float64Array(d);
  for (let i = 0; i < d; i++) {
    let acc = 0;
    for (let j = 0; j < d; j++) acc += B[i * d + j]! * mu[j]!;
    a[i] = mu[i]! - t * acc;
  }
  return { a, B };
}

/** Irreducible CFM loss tr(I + Σ − (tΣ − (1−t)I)C_t⁻¹(tΣ − (1−t)I)), in Σ's eigenbasis. */
export function irreducibleLoss(s: ArrayLike<number>, t: number): number {
  let acc = 0;
  for (let i = 0; i < s.length; i++) {
    const num = t * s[i]! - (1 - t);
    acc += 1 + s[i]! - (num * num) / ((1 - t) ** 2 + t * t * s[i]!);
  }
  return acc;
}

export interface Fit {
  a: Float64Array;
  B: Float64Array;
  fitLoss: number;
}

/**
 * One CFM regression at time t. The pairs are drawn in Σ's eigenbasis (an orthogonal change of
 * coordinates, y = Uᵀx, under which N(0, I) is invariant and the target is N(Uᵀμ, diag s)); OLS is
 * equivariant, so rotating the fitted coefficients back (a = U·ã, B = U·B̃·Uᵀ) gives the fit on the
 * pairs x = U·y, with the same loss. Draw order per pair, stream `train/k`: y₀ (d normals), then ξ
 * (d normals), y₁ = Uᵀμ + √s ⊙ ξ. Affine OLS via the (d+1)² normal equations, ridge 1e-9.
 */
export function fitStep(tg: Target, t: number, nb: number, rng: Rng): Fit {
  const { d, U } = tg;
  const D = d + 1;
  const muE = new Float64Array(d);
  for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) muE[i] = muE[i]! + U[j * d + i]! * tg.mu[j]!;
  const sq = Array.from(tg.s, Math.sqrt);
  const xt = new Float64Array(nb * d);
  const u = new Float64Array(nb * d);
  let uu = 0;
  for (let n = 0; n < nb; n++) {
    const x0 = rng.normals(d);
    const xi = rng.normals(d);
    for (let i = 0; i < d; i++) {
      const x1 = muE[i]! + sq[i]! * xi[i]!;
      xt[n * d + i] = (1 - t) * x0[i]! + t * x1;
      u[n * d + i] = x1 - x0[i]!;
      uu += u[n * d + i]! ** 2;
    }
  }
  // normal equations over features φ = [1, x_t]: (ΦᵀΦ + ridge) W = ΦᵀU, W is D×d
  const A: Matrix = { rows: D, cols: D, data: new Float64Array(D * D) };
  const R = new Float64Array(D * d);
  const phi = new Float64Array(D);
  const Ad = A.data;
  for (let n = 0; n < nb; n++) {
    phi[0] = 1;
    for (let i = 0; i < d; i++) phi[i + 1] = xt[n * d + i]!;
    const uo = n * d;
    for (let a = 0; a < D; a++) {
      const pa = phi[a]!;
      const ao = a * D;
      for (let b = a; b < D; b++) Ad[ao + b] = Ad[ao + b]! + pa * phi[b]!;
      const ro = a * d;
      for (let i = 0; i < d; i++) R[ro + i] = R[ro + i]! + pa * u[uo + i]!;
    }
  }
  for (let a = 0; a < D; a++) {
    A.data[a * D + a] = A.data[a * D + a]! + RIDGE;
    for (let b = 0; b < a; b++) A.data[a * D + b] = A.data[b * D + a]!;
  }
  const L = cholesky(A);
  const aE = new Float64Array(d);
  const BE = new Float64Array(d * d);
  const col = new Float64Array(D);
  const w = new Float64Array(D);
  for (let i = 0; i < d; i++) {
    for (let r = 0; r < D; r++) col[r] = R[r * d + i]!;
    const sol = choleskySolve(L, col);
    aE[i] = sol[0]!;
    for (let j = 0; j < d; j++) BE[i * d + j] = sol[j + 1]!;
  }
  // Σ_n ‖u_n − Wᵀφ_n‖² = Σ‖u‖² − 2·tr(WᵀR) + tr(WᵀAW), with A the unridged ΦᵀΦ
  let loss = uu;
  for (let i = 0; i < d; i++) {
    w[0] = aE[i]!;
    for (let j = 0; j < d; j++) w[j + 1] = BE[i * d + j]!;
    let wr = 0;
    let waw = 0;
    for (let r = 0; r < D; r++) {
      wr += w[r]! * R[r * d + i]!;
      let aw = 0;
      for (let c = 0; c < D; c++) aw += (A.data[r * D + c]! - (r === c ? RIDGE : 0)) * w[c]!;
      waw += w[r]! * aw;
    }
    loss += waw - 2 * wr;
  }
  // back to the original coordinates: a = U·ã, B = U·B̃·Uᵀ
  const a = new Float64Array(d);
  for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) a[i] = a[i]! + U[i * d + j]! * aE[j]!;
  const B = mul(mul(U, BE, d), transposeSq(U, d), d);
  return { a, B, fitLoss: loss / nb };
}

function transposeSq(A: Float64Array, d: number): Float64Array {
  const T = new Float64Array(d * d);
  for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) T[j * d + i] = A[i * d + j]!;
  return T;
}

/** K Euler steps of x ← x + (1/K)(a_k + B_k x) for every sample (rows of x, in place). */
export function eulerAffine(x: Float64Array, n: number, d: number, fields: { a: Float64Array; B: Float64Array }[]): Float64Array {
  const K = fields.length;
  const v = new Float64Array(d);
  for (let p = 0; p < n; p++) {
    const o = p * d;
    for (const { a, B } of fields) {
      for (let i = 0; i < d; i++) {
        let acc = a[i]!;
        for (let j = 0; j < d; j++) acc += B[i * d + j]! * x[o + j]!;
        v[i] = acc;
      }
      for (let i = 0; i < d; i++) x[o + i] = x[o + i]! + v[i]! / K;
    }
  }
  return x;
}

/**
 * The same Euler steps for the exact field, taken in Σ's eigenbasis where B*(t_k) is diagonal:
 * y = Uᵀx, y_i ← y_i + (1/K)(ã_i + c_i(t_k)·y_i) with ã = Uᵀa* = (1 − t_k·c(t_k)) ⊙ Uᵀμ, then x = U·y.
 */
export function eulerExact(x: Float64Array, n: number, tg: Target, K: number): Float64Array {
  const { d, U, s } = tg;
  const muE = new Float64Array(d);
  for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) muE[i] = muE[i]! + U[j * d + i]! * tg.mu[j]!;
  const c = Array.from({ length: K }, (_, k) => Float64Array.from(s, (si) => cCoef(k / K, si)));
  const y = new Float64Array(d);
  for (let p = 0; p < n; p++) {
    const o = p * d;
    y.fill(0);
    for (let j = 0; j < d; j++) for (let i = 0; i < d; i++) y[i] = y[i]! + U[j * d + i]! * x[o + j]!;
    for (let k = 0; k < K; k++) {
      const t = k / K;
      const ck = c[k]!;
      for (let i = 0; i < d; i++) y[i] = y[i]! + ((1 - t * ck[i]!) * muE[i]! + ck[i]! * y[i]!) / K;
    }
    for (let i = 0; i < d; i++) {
      let acc = 0;
      for (let j = 0; j < d; j++) acc += U[i * d + j]! * y[j]!;
      x[o + i] = acc;
    }
  }
  return x;
}

/** Sample mean and (1/n) covariance of the rows of x. */
export function moments(x: Float64Array, n: number, d: number): { m: Float64Array; S: Float64Array } {
  const m = new Float64Array(d);
  for (let p = 0; p < n; p++) for (let i = 0; i < d; i++) m[i] = m[i]! + x[p * d + i]! / n;
  const S = new Float64Array(d * d);
  for (let p = 0; p < n; p++) for (let i = 0; i < d; i++) {
    const di = x[p * d + i]! - m[i]!;
    for (let j = 0; j < d; j++) S[i * d + j] = S[i * d + j]! + (di * (x[p * d + j]! - m[j]!)) / n;
  }
  return { m, S };
}

/** Symmetric PSD square root by Jacobi (negative round-off eigenvalues clipped at 0). */
export function sqrtPsd(S: Float64Array, d: number): Float64Array {
  const { values, vectors } = jacobiEigen({ rows: d, cols: d, data: S });
  return spectral(vectors.data, Array.from(values, (l) => Math.sqrt(Math.max(l, 0))), d);
}

function mul(A: Float64Array, B: Float64Array, d: number): Float64Array {
  const out = new Float64Array(d * d);
  for (let i = 0; i < d; i++) for (let k = 0; k < d; k++) {
    const aik = A[i * d + k]!;
    for (let j = 0; j < d; j++) out[i * d + j] = out[i * d + j]! + aik * B[k * d + j]!;
  }
  return out;
}

/** Gaussian W₂ between N(m, S) and the target: ‖m − μ‖² + tr(S + Σ − 2(Σ^{½} S Σ^{½})^{½}), square-rooted. */
export function gaussianW2(m: Float64Array, S: Float64Array, tg: Target): number {
  const { d } = tg;
  const inner = mul(mul(tg.sqrtSigma, S, d), tg.sqrtSigma, d);
  for (let i = 0; i < d; i++) for (let j = 0; j < i; j++) {
    const avg = (inner[i * d + j]! + inner[j * d + i]!) / 2;
    inner[i * d + j] = avg;
    inner[j * d + i] = avg;
  }
  const root = sqrtPsd(inner, d);
  let w = 0;
  for (let i = 0; i < d; i++) w += (m[i]! - tg.mu[i]!) ** 2 + S[i * d + i]! + tg.sigma[i * d + i]! - 2 * root[i * d + i]!;
  return Math.sqrt(Math.max(w, 0));
}

function frob(A: Float64Array, B: Float64Array): number {
  let s = 0;
  for (let i = 0; i < A.length; i++) s += (A[i]! - B[i]!) ** 2;
  return Math.sqrt(s);
}

export default defineKernel({
  id: 'flowmatch/sample',
  version: 1,
  input: 'query',
  summary: 'Conditional flow matching to a Gaussian target: per-step affine least-squares velocity, Euler sampling, and the closed-form law of the Euler sampler',
  technique: 'conditional flow matching on the rectified (linear) path with an exactly solvable Gaussian target',
  references: ['arXiv:2210.02747', 'arXiv:2209.03003', 'arXiv:2209.15571'],
  honesty: 'The regression, the exact field, the Euler sampler and its closed-form law are computed exactly; the target distribution and all samples are seeded synthetic draws.',
  params: {
    dims: int(1, 32, 8).description('dimension of the Gaussian target'),
    steps: int(1, 32, 16).description('Euler steps'),
  },
  worstCase: { dims: 32, steps: 32 },
  run({ dims: d, steps: K }, rng) {
    // draw order: target (stream `target`, see drawTarget); per step k stream `train/k` (see fitStep); samples (stream `sample`: SAMPLES·d normals)
    const tg = drawTarget(d, rng.stream('target'));
    const nb = batchSize(d);
    const learned: Fit[] = [];
    const perStep = [];
    for (let k = 0; k < K; k++) {
      const t = k / K;
      const fit = fitStep(tg, t, nb, rng.stream(`train/${k}`));
      const ex = exactField(tg, t);
      learned.push(fit);
      perStep.push({
        t,
        fit_loss: fit.fitLoss,
        fit_loss_dof_adjusted: (fit.fitLoss * nb) / (nb - d - 1),
        irreducible_loss: irreducibleLoss(tg.s, t),
        coef_err_B: frob(fit.B, ex.B),
        coef_err_a: frob(fit.a, ex.a),
      });
    }
    const gain = Array.from(tg.s, (s) => {
      let g = 1;
      for (let k = 0; k < K; k++) g *= 1 + cCoef(k / K, s) / K;
      return g;
    });
    let w2cf = 0;
    gain.forEach((g, i) => (w2cf += (g - Math.sqrt(tg.s[i]!)) ** 2));
    const x0 = rng.stream('sample').normals(SAMPLES * d);
    const outL = eulerAffine(Float64Array.from(x0), SAMPLES, d, learned);
    const outE = eulerExact(Float64Array.from(x0), SAMPLES, tg, K);
    const euLaw = spectral(tg.U, gain.map((g) => g * g), d);
    const summary = (x: Float64Array) => {
      const { m, S } = moments(x, SAMPLES, d);
      let me = 0;
      for (let i = 0; i < d; i++) me += (m[i]! - tg.mu[i]!) ** 2;
      return { mean_err: Math.sqrt(me), cov_err: frob(S, tg.sigma), cov_err_vs_euler_law: frob(S, euLaw), w2: gaussianW2(m, S, tg) };
    };
    const Urows = Array.from({ length: d }, (_, i) => tg.U.subarray(i * d, (i + 1) * d));
    return {
      constants: { ridge: RIDGE, batch_per_step: nb, samples: SAMPLES, mean_law: 'mu = 2 N(0, I)', eigval_law: 's = (0.5 + 1.5u)^2', covariance: '1/n sample covariance' },
      result: {
        target: { mean: tg.mu, eigvals: tg.s, eigvecs: Urows },
        per_step: perStep,
        euler_gain: gain,
        w2_exact_euler_closed_form: Math.sqrt(w2cf),
        samples: { learned: summary(outL), exact: summary(outE) },
      },
      checks: {
        max_dof_gap_over_irreducible: Math.max(...perStep.map((r) => Math.abs(r.fit_loss_dof_adjusted - r.irreducible_loss) / r.irreducible_loss)),
      },
    };
  },
});
