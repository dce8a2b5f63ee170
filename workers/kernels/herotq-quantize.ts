/**
 * HeRo-Q Hessian-conditioned post-training quantisation (Zhang et al., arXiv:2601.21626) on one
 * linear layer y = Wx with GPTQ's layer-wise loss proxy L(ΔW) = tr(ΔW·H·ΔWᵀ), H = XXᵀ/N
 * (arXiv:2210.17323). The weight space is transformed by T_β = S_β·Q before round-to-nearest:
 * S_β = U(Λ/g)^(β/2)Uᵀ conditions the Hessian (det 1, g the geometric mean of its eigenvalues) and
 * Q = diag(±1)·H_n/√n is a randomised Walsh–Hadamard rotation (QuaRot, arXiv:2404.00456). The layer
 * is rewritten W′ = W·T, X′ = T⁻¹X, so W′X′ = WX and the effective Hessian H′ = T⁻¹HT⁻ᵀ has the
 * spectrum g^β·λ^(1−β). The paper learns its matrix; here "learning" is a search over a β grid for the
 * lowest proxy loss. Design: kernels-a §1.1.
 */
import { defineKernel, type ConstraintViolation } from '../kernel-def.js';
import { jacobiEigen, matmul, transpose, zeros, type Matrix } from '../lib/linalg.js';
import { int, num } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';

export const BETA_GRID: readonly number[] = [0, 0.25, 0.5, 0.75, 1];
export const WEIGHT_SD = 0.5;
export const CODES_HEAD = 64;
/** Eigenvalues are floored at this fraction of λ_max (only a guard; never reached at the bounds). */
export const EIGEN_FLOOR = 1e-14;

export interface HerotqInputs {
  nIn: number;
  nOut: number;
  N: number;
  /** n_out × n_in, entries 0.5·z. */
  W: Matrix;
  /** n_in × N, rows scaled by the channel gains. */
  X: Matrix;
  /** Outlier channels ascending, and the scale c_j of every channel. */
  outlierChannels: number[];
  channelScale: Float64Array;
  /** Hadamard signs d_j ∈ {−1, +1}. */
  signs: Int8Array;
}

/**
 * Draw order: stream `w` gives W (n_out·n_in normals, row-major, ×0.5); stream `outliers` gives the
 * partial Fisher–Yates choice of the outlier channels, then one uniform u per chosen channel in
 * choice order (c_j = gain·(1+u)); stream `x` gives X (n_in·N normals, row-major, ×c_j); stream
 * `signs` gives one uniform per input channel (d_j = −1 if u < 0.5).
 */
export function drawInputs(rng: { stream(label: string): Rng }, nIn: number, nOut: number, N: number, outliers: number, gain: number): HerotqInputs {
  const W = { rows: nOut, cols: nIn, data: rng.stream('w').normals(nOut * nIn, WEIGHT_SD) };
  const os = rng.stream('outliers');
  const chosen = os.sample(nIn, outliers);
  const channelScale = new Float64Array(nIn).fill(1);
  for (const j of chosen) channelScale[j] = gain * (1 + os.next());
  const xs = rng.stream('x');
  const X = zeros(nIn, N);
  for (let j = 0; j < nIn; j++) for (let t = 0; t < N; t++) X.data[j * N + t] = channelScale[j]! * xs.normal();
  const ss = rng.stream('signs');
  const signs = Int8Array.from({ length: nIn }, () => (ss.next() < 0.5 ? -1 : 1));
  return { nIn, nOut, N, W, X, outlierChannels: [...chosen].sort((a, b) => a - b), channelScale, signs };
}

/** Round half to even. */
export function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const diff = x - f;
  if (diff < 0.5) return f;
  if (diff > 0.5) return f + 1;
  return f % 2 === 0 ? f : f + 1;
}

export interface RowQuant {
  codes: Int32Array;
  scales: Float64Array;
  /** Ŵ = q·s. */
  dequant: Matrix;
}

/** Symmetric INT-b round-to-nearest per output row: s_i = max|W_i|/qmax (1 for a zero row). */
export function quantizeRows(W: Matrix, bits: number): RowQuant {
  const qmax = 2 ** (bits - 1) - 1;
  const codes = new Int32Array(W.rows * W.cols);
  const scales = new Float64Array(W.rows);
  const dequant = zeros(W.rows, W.cols);
  for (let i = 0; i < W.rows; i++) {
    let m = 0;
    for (let j = 0; j < W.cols; j++) m = Math.max(m, Math.abs(W.data[i * W.cols + j]!));
    const s = m > 0 ? m / qmax : 1;
    scales[i] = s;
    for (let j = 0; j < W.cols; j++) {
      const q = Math.max(-qmax, Math.min(qmax, roundHalfEven(W.data[i * W.cols + j]! / s)));
      codes[i * W.cols + j] = q;
      dequant.data[i * W.cols + j] = q * s;
    }
  }
  return { codes, scales, dequant };
}

/** Sylvester Hadamard entry (−1)^popcount(i & j). */
function hadamardEntry(i: number, j: number): number {
  let x = i & j;
  let parity = 0;
  while (x) {
    parity ^= x & 1;
    x >>>= 1;
  }
  return parity ? -1 : 1;
}

/** Q = diag(d)·H_n/√n (orthogonal). */
export function hadamardRotation(signs: Int8Array): Matrix {
  const n = signs.length;
  const Q = zeros(n, n);
  const inv = 1 / Math.sqrt(n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) Q.data[i * n + j] = signs[i]! * hadamardEntry(i, j) * inv;
  return Q;
}

/** tr(A·H·Aᵀ) = Σ_i a_i·H·a_iᵀ. */
export function quadraticTrace(A: Matrix, H: Matrix): number {
  const n = A.cols;
  let s = 0;
  for (let i = 0; i < A.rows; i++) {
    const off = i * n;
    for (let j = 0; j < n; j++) {
      const aj = A.data[off + j]!;
      if (aj === 0) continue;
      let row = 0;
      for (let k = 0; k < n; k++) row += H.data[j * n + k]! * A.data[off + k]!;
      s += aj * row;
    }
  }
  return s;
}

export interface Conditioned {
  beta: number;
  T: Matrix;
  Tinv: Matrix;
  Wp: Matrix;
  Hp: Matrix;
}

export interface Spectrum {
  /** Ascending, floored at EIGEN_FLOOR·λ_max. */
  lambda: Float64Array;
  U: Matrix;
  geoMean: number;
  floored: boolean;
}

/** H = X·Xᵀ/N, the upper triangle computed and mirrored (exactly symmetric). */
export function hessian(X: Matrix): Matrix {
  const { rows: n, cols: N, data } = X;
  const H = zeros(n, n);
  for (let i = 0; i < n; i++) {
    for (let j = i; j < n; j++) {
      let s = 0;
      for (let t = 0; t < N; t++) s += data[i * N + t]! * data[j * N + t]!;
      H.data[i * n + j] = s / N;
      H.data[j * n + i] = s / N;
    }
  }
  return H;
}

export function spectrum(H: Matrix): Spectrum {
  const { values, vectors } = jacobiEigen(H);
  const top = values[values.length - 1]!;
  let floored = false;
  const lambda = values.map((v) => {
    if (v < EIGEN_FLOOR * top) {
      floored = true;
      return EIGEN_FLOOR * top;
    }
    return v;
  });
  let logSum = 0;
  for (const v of lambda) logSum += Math.log(v);
  return { lambda, U: vectors, geoMean: Math.exp(logSum / lambda.length), floored };
}

/** Uᵀ·Q, shared by every β. */
export function projectRotation(sp: Spectrum, Q: Matrix): Matrix {
  return matmul(transpose(sp.U), Q);
}

/**
 * T_β = S_β·Q = U·diag(f)·(UᵀQ), T_β⁻¹ = Qᵀ·S_β⁻¹ = (UᵀQ)ᵀ·diag(1/f)·Uᵀ with f_k = (λ_k/g)^(β/2);
 * W′ = W·T_β and H′ = T_β⁻¹·H·T_β⁻ᵀ, the latter formed explicitly (its spectrum is then a check).
 */
export function condition(W: Matrix, H: Matrix, sp: Spectrum, UtQ: Matrix, beta: number): Conditioned {
  const n = H.rows;
  const { U, lambda, geoMean } = sp;
  const Uf = zeros(n, n); // U·diag(f)
  const PtFi = zeros(n, n); // (UᵀQ)ᵀ·diag(1/f)
  for (let k = 0; k < n; k++) {
    const f = (lambda[k]! / geoMean) ** (beta / 2);
    for (let i = 0; i < n; i++) {
      Uf.data[i * n + k] = U.data[i * n + k]! * f;
      PtFi.data[i * n + k] = UtQ.data[k * n + i]! / f;
    }
  }
  const T = matmul(Uf, UtQ);
  const Tinv = matmul(PtFi, transpose(U));
  const Wp = matmul(W, T);
  const Hp = matmul(matmul(Tinv, H), transpose(Tinv));
  return { beta, T, Tinv, Wp, Hp };
}

function maxAbs(a: Float64Array): number {
  let m = 0;
  for (const v of a) m = Math.max(m, Math.abs(v));
  return m;
}

function meanSquare(a: Float64Array): number {
  let s = 0;
  for (const v of a) s += v * v;
  return s / a.length;
}

function minus(a: Matrix, b: Matrix): Matrix {
  return { rows: a.rows, cols: a.cols, data: a.data.map((v, i) => v - b.data[i]!) };
}

export default defineKernel({
  id: 'herotq/quantize',
  version: 1,
  input: 'query',
  summary: 'HeRo-Q: Hessian-conditioned rotation before INT-b round-to-nearest on one linear layer, swept over the conditioning exponent',
  technique: 'Hessian-conditioned post-training quantisation (HeRo-Q) with randomised Hadamard rotation and GPTQ loss proxy',
  references: ['arXiv:2601.21626', 'arXiv:2210.17323', 'arXiv:2404.00456'],
  honesty:
    'The conditioning transform, rotation, quantiser and loss proxy are computed exactly; the weights and calibration inputs are seeded synthetic draws, and the learned matrix of the paper is replaced by a search over a one-parameter family.',
  params: {
    n_in: int(8, 64, 32).description('input width of the linear layer (a power of two: Walsh–Hadamard rotation)').meta({ jsonSchema: { enum: [8, 16, 32, 64] } }),
    n_out: int(4, 64, 32).description('output width of the linear layer'),
    calib: int(8, 512, 256).description('calibration inputs used to estimate the Hessian'),
    bits: int(2, 8, 3).description('integer bits of the round-to-nearest quantiser'),
    outliers: int(0, 16, 4).description('input channels given outlier magnitude'),
    outlier_gain: num(1, 50, 10).description('magnitude multiplier of the outlier channels'),
  },
  rules: ['n_in must be a power of two (Walsh–Hadamard rotation)', 'calib must be at least n_in (full-rank Hessian)', 'outliers must not exceed n_in/4'],
  constraints: (p) => {
    const v: ConstraintViolation[] = [];
    if ((p.n_in & (p.n_in - 1)) !== 0) v.push({ param: 'n_in', msg: 'n_in must be a power of two (Walsh–Hadamard rotation)' });
    if (p.calib < p.n_in) v.push({ param: 'calib', msg: 'calib must be at least n_in (full-rank Hessian)' });
    if (p.outliers > p.n_in / 4) v.push({ param: 'outliers', msg: 'outliers must not exceed n_in/4' });
    return v;
  },
  worstCase: { n_in: 64, n_out: 64, calib: 512, bits: 8, outliers: 16, outlier_gain: 50 },
  run({ n_in: nIn, n_out: nOut, calib: N, bits, outliers, outlier_gain: gain }, rng) {
    // draws: streams `w`, `outliers`, `x`, `signs` (see drawInputs)
    const inp = drawInputs(rng, nIn, nOut, N, outliers, gain);
    const qmax = 2 ** (bits - 1) - 1;
    const H = hessian(inp.X);
    const sp = spectrum(H);
    const lmax = sp.lambda[nIn - 1]!;
    const lmin = sp.lambda[0]!;
    const cond = lmax / lmin;
    const Q = hadamardRotation(inp.signs);
    const UtQ = projectRotation(sp, Q);

    const rtnQ = quantizeRows(inp.W, bits);
    const rtnDelta = minus(inp.W, rtnQ.dequant);
    const rtnLoss = quadraticTrace(rtnDelta, H);
    const rtnMse = meanSquare(rtnDelta.data);

    let preservation = 0;
    let gridOk = true;
    let best: { beta: number; loss: number; quant: RowQuant; errOrig: Matrix } | null = null;
    const sweep = BETA_GRID.map((beta) => {
      const c = condition(inp.W, H, sp, UtQ, beta);
      const qz = quantizeRows(c.Wp, bits);
      for (let i = 0; i < nOut; i++) {
        for (let j = 0; j < nIn; j++) {
          const r = qz.dequant.data[i * nIn + j]! / qz.scales[i]!;
          if (Math.abs(r - Math.round(r)) > 1e-9 || Math.abs(r) > qmax + 1e-9) gridOk = false;
        }
      }
      const dWp = minus(c.Wp, qz.dequant);
      const loss = quadraticTrace(dWp, c.Hp);
      const errOrig = matmul(dWp, c.Tinv); // the error seen in the original coordinates
      const back = matmul(c.Wp, c.Tinv);
      preservation = Math.max(preservation, maxAbs(minus(back, inp.W).data));
      if (!best || loss < best.loss) best = { beta, loss, quant: qz, errOrig }; // strict: ties keep the smaller β
      return {
        beta,
        loss,
        loss_ratio_vs_rtn: rtnLoss > 0 ? loss / rtnLoss : null,
        weight_mse: meanSquare(errOrig.data),
        lambda_max: sp.geoMean ** beta * lmax ** (1 - beta),
        condition: cond ** (1 - beta),
      };
    });
    const chosen = best!;
    // second formula for the chosen β: ‖(ΔW′·T⁻¹)·X‖²_F / N (one n_out×n_in×N product)
    const viaX = matmul(chosen.errOrig, inp.X);
    let lossX = 0;
    for (const v of viaX.data) lossX += v * v;
    lossX /= N;
    const lossFormulaGap = Math.abs(chosen.loss - lossX) / Math.max(Math.abs(lossX), Number.MIN_VALUE);
    return {
      constants: { beta_grid: BETA_GRID, weight_sd: WEIGHT_SD, codes_head: CODES_HEAD, eigen_floor: EIGEN_FLOOR, loss: 'tr(dW H dW^T), H = X X^T / N' },
      result: {
        outlier_channels: inp.outlierChannels,
        outlier_scales: inp.outlierChannels.map((j) => inp.channelScale[j]!),
        hessian: { lambda_max: lmax, lambda_min: lmin, condition: cond, geo_mean: sp.geoMean },
        rtn: { loss: rtnLoss, weight_mse: rtnMse },
        sweep,
        chosen: { beta: chosen.beta, loss: chosen.loss, loss_ratio_vs_rtn: rtnLoss > 0 ? chosen.loss / rtnLoss : null },
        quant: { bits, qmax, row_scales: chosen.quant.scales, codes_head: chosen.quant.codes.slice(0, CODES_HEAD) },
        rotation: { kind: 'randomized-hadamard', n: nIn, signs: inp.signs },
      },
      checks: {
        function_preservation_max_abs: preservation,
        function_preserved: preservation <= 1e-9 * maxAbs(inp.W.data),
        loss_formula_rel_gap: lossFormulaGap,
        codes_on_grid: gridOk,
        eigen_floor_applied: sp.floored,
      },
    };
  },
});
