/**
 * Muon's orthogonalisation (K. Jordan et al., 2024; Liu et al., arXiv:2502.16982): the update G is
 * replaced by an approximation of its polar factor U·Vᵀ by `steps` quintic Newton–Schulz
 * iterations X ← aX + (bA + cA²)X, A = XXᵀ, (a, b, c) = (3.4445, −4.7750, 2.0315), after
 * normalising by ‖G‖_F + 1e-7 and transposing tall inputs. Each singular value follows the odd
 * polynomial p(x) = ax + bx³ + cx⁵ (Polar Express, arXiv:2505.16932); the kernel checks this against
 * Jacobi singular values and the exact polar factor. Design: kernels-a §1.11.
 */
import { defineKernel } from '../kernel-def.js';
import { int, num } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';
import { frobenius, jacobiEigen, matmul, transpose, zeros, type Eigen, type Matrix } from '../lib/linalg.js';

export const NS_COEFFS: readonly [number, number, number] = [3.4445, -4.775, 2.0315];
export const NS_EPS = 1e-7;
export const UNDER_CONVERGED = 0.002;
const RMS_FACTOR = 0.2;

/** G_ij = z·(1+i)^(−decay), row-major (one normal per entry). */
export function makeGradient(rng: Rng, rows: number, cols: number, decay: number): Matrix {
  const g = zeros(rows, cols);
  for (let i = 0; i < rows; i++) {
    const s = (1 + i) ** -decay;
    for (let j = 0; j < cols; j++) g.data[i * cols + j] = rng.normal() * s;
  }
  return g;
}

/** Muon's quintic Newton–Schulz, on the wide orientation (m = min side, n = max side). */
export function newtonSchulz(g: Matrix, steps: number): Matrix {
  const [a, b, c] = NS_COEFFS;
  const scale = 1 / (frobenius(g) + NS_EPS);
  const tall = g.rows > g.cols;
  const w = tall ? transpose(g) : g;
  const m = w.rows;
  const n = w.cols;
  let x = Float64Array.from(w.data, (v) => v * scale);
  let next = new Float64Array(m * n);
  const A = new Float64Array(m * m);
  const Bm = new Float64Array(m * m);
  for (let s = 0; s < steps; s++) {
    // A = X Xᵀ (symmetric: dot products of rows)
    for (let i = 0; i < m; i++) {
      for (let j = i; j < m; j++) {
        let acc = 0;
        for (let k = 0; k < n; k++) acc += x[i * n + k]! * x[j * n + k]!;
        A[i * m + j] = acc;
        A[j * m + i] = acc;
      }
    }
    // B = bA + cA² (A symmetric, so (A²)_ij = row_i · row_j)
    for (let i = 0; i < m; i++) {
      for (let j = i; j < m; j++) {
        let acc = 0;
        for (let k = 0; k < m; k++) acc += A[i * m + k]! * A[j * m + k]!;
        const v = b * A[i * m + j]! + c * acc;
        Bm[i * m + j] = v;
        Bm[j * m + i] = v;
      }
    }
    // X ← aX + B X
    for (let i = 0; i < m; i++) {
      const row = i * n;
      for (let k = 0; k < n; k++) next[row + k] = a * x[row + k]!;
      for (let j = 0; j < m; j++) {
        const bij = Bm[i * m + j]!;
        const src = j * n;
        for (let k = 0; k < n; k++) next[row + k] = next[row + k]! + bij * x[src + k]!;
      }
    }
    [x, next] = [next, x];
  }
  const out: Matrix = { rows: m, cols: n, data: x };
  return tall ? transpose(out) : out;
}

/** p(x) = ax + bx³ + cx⁵ applied `steps` times. */
export function quinticIterate(x: number, steps: number): number {
  const [a, b, c] = NS_COEFFS;
  let y = x;
  for (let s = 0; s < steps; s++) {
    const y2 = y * y;
    y = y * (a + y2 * (b + c * y2));
  }
  return y;
}

/** Gram matrix of the smaller side: M·Mᵀ when rows ≤ cols, else Mᵀ·M. */
function smallGram(m: Matrix): Matrix {
  return m.rows <= m.cols ? matmul(m, transpose(m)) : matmul(transpose(m), m);
}

/** Singular values ascending (from Jacobi eigenvalues of the smaller Gram matrix, clipped at 0). */
export function singularValues(m: Matrix): Float64Array {
  return jacobiEigen(smallGram(m)).values.map((v) => Math.sqrt(Math.max(0, v)));
}

/** Eigen-decomposition of W·Wᵀ with W the wide orientation of G (Wᵀ for tall G). */
export function wideGramEigen(g: Matrix): Eigen {
  const w = g.rows > g.cols ? transpose(g) : g;
  return jacobiEigen(matmul(w, transpose(w)));
}

/** Exact polar factor: U Σ⁻¹ Uᵀ W from WWᵀ = UΣ²Uᵀ (W = G, or Gᵀ for tall G); null if G is rank-deficient. */
export function polarFactor(g: Matrix, eig: Eigen = wideGramEigen(g)): Matrix | null {
  const tall = g.rows > g.cols;
  const w = tall ? transpose(g) : g;
  const { values, vectors: U } = eig;
  const m = w.rows;
  const maxV = values[m - 1]!;
  if (!(values[0]! > 1e-24 * maxV) || maxV <= 0) return null;
  const inv = zeros(m, m);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < m; j++) {
      let s = 0;
      for (let k = 0; k < m; k++) s += (U.data[i * m + k]! * U.data[j * m + k]!) / Math.sqrt(values[k]!);
      inv.data[i * m + j] = s;
    }
  }
  const p = matmul(inv, w);
  return tall ? transpose(p) : p;
}

export default defineKernel({
  id: 'muon/orthogonalize',
  version: 1,
  input: 'query',
  summary: "Muon's quintic Newton–Schulz orthogonalisation, checked against the singular-value polynomial and the exact polar factor",
  technique: 'Muon quintic Newton–Schulz polar approximation with (3.4445, −4.7750, 2.0315)',
  references: ['kellerjordan.github.io/posts/muon', 'arXiv:2502.16982', 'arXiv:2505.16932'],
  honesty: 'The Newton–Schulz iteration and the SVD checks are real; the gradient matrix is seeded Gaussian data with a row decay, not a trained model.',
  params: {
    rows: int(2, 64, 32).description('rows of the matrix'),
    cols: int(2, 128, 64).description('columns of the matrix'),
    steps: int(1, 10, 5).description('Newton–Schulz iterations'),
    decay: num(0, 2, 0).description('singular-value decay of the synthetic matrix (0: flat spectrum)'),
  },
  worstCase: { rows: 64, cols: 128, steps: 10, decay: 0 },
  run({ rows, cols, steps, decay }, rng) {
    // draws: stream `G`, one normal per entry, row-major
    const g = makeGradient(rng.stream('G'), rows, cols, decay);
    const o = newtonSchulz(g, steps);
    const gNorm = frobenius(g);
    const m = Math.min(rows, cols);
    const gEig = wideGramEigen(g);
    const ratio = gEig.values.map((v) => Math.sqrt(Math.max(0, v)) / (gNorm + NS_EPS));
    const outSv = singularValues(o);
    const predicted = Float64Array.from(ratio, (x) => quinticIterate(x, steps)).sort();
    let svGap = 0;
    for (let i = 0; i < m; i++) svGap = Math.max(svGap, Math.abs(outSv[i]! - predicted[i]!));

    let bandMin = Infinity;
    let bandMax = -Infinity;
    let under = 0;
    let polarPred = 0;
    ratio.forEach((x) => {
      const y = quinticIterate(x, steps);
      polarPred += (y - 1) ** 2;
      if (x < UNDER_CONVERGED) under++;
      else {
        bandMin = Math.min(bandMin, y);
        bandMax = Math.max(bandMax, y);
      }
    });

    const polar = polarFactor(g, gEig);
    let polarErr: number | null = null;
    if (polar) {
      let d = 0;
      for (let i = 0; i < o.data.length; i++) d += (o.data[i]! - polar.data[i]!) ** 2;
      polarErr = Math.sqrt(d) / frobenius(polar);
    }
    const gram = smallGram(o);
    let orth = 0;
    for (let i = 0; i < m; i++) for (let j = 0; j < m; j++) orth += (gram.data[i * m + j]! - (i === j ? 1 : 0)) ** 2;
    const rms = (RMS_FACTOR * Math.sqrt(Math.max(rows, cols)) * frobenius(o)) / Math.sqrt(rows * cols);
    return {
      constants: { a: NS_COEFFS[0], b: NS_COEFFS[1], c: NS_COEFFS[2], eps: NS_EPS, under_converged_ratio: UNDER_CONVERGED, rms_factor: RMS_FACTOR, input_ratio: 'sigma_i(G)/(||G||_F + eps), what the iteration sees' },
      result: {
        coefficients: NS_COEFFS,
        shape: [rows, cols],
        frobenius_g: gNorm,
        input_sv_ratio: ratio,
        output_sv: outSv,
        predicted_sv: predicted,
        band: { min: under === m ? null : bandMin, max: under === m ? null : bandMax, under_converged: under, ...(under === m ? { reason: 'every input ratio is under-converged' } : {}) },
        polar_rel_err: polarErr,
        ...(polar ? {} : { polar_reason: 'G is numerically rank-deficient' }),
        polar_rel_err_predicted: Math.sqrt(polarPred / m),
        orth_err: Math.sqrt(orth) / Math.sqrt(m),
        rms_matched: rms,
      },
      checks: {
        spectral_identity_gap: svGap,
        polar_err_matches_prediction: polarErr === null ? null : Math.abs(polarErr - Math.sqrt(polarPred / m)) <= 1e-9,
      },
    };
  },
});
