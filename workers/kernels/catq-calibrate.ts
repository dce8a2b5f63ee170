/**
 * CAT-Q ternary post-training quantisation (Wang et al. 2026, arXiv:2606.26650): ternarise a
 * weight matrix against a small calibration set, modulating the weight distribution and the ternary
 * threshold, with a softened (tanh) ternariser. Threshold rule Δ = τ·mean|w| and the closed-form
 * scale for a fixed support follow Ternary Weight Networks (Li, Zhang & Liu 2016, arXiv:1605.04711).
 * Design: kernels-c §11. CAT-Q's gradient training is replaced by a grid search over modulation
 * exponents and per-row threshold multipliers, with the least-squares scale, on the same objective
 * (output reconstruction on calibration activations).
 */
import { defineKernel } from '../kernel-def.js';
import { int, num } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';

const ROW = 64;
const N_CAL = 16;
const N_EVAL = 16;
const WEIGHT_SCALE = 0.02;
const T_DOF = 4;
const OUTLIER_CHANNELS = 6; // 10 % of 64, rounded down
const OUTLIER_GAIN = 8;
const GAMMAS = [0, 0.25, 0.5];
const BASE_GRID = Array.from({ length: 13 }, (_, i) => (3 + i) / 10); // 0.3, 0.4, …, 1.5

/** Student-t(4) = z / sqrt(χ²₄/4); five normals per draw (z first), so arrays are prefix-stable. */
function studentT(rng: Rng): number {
  const z = rng.normal();
  let chi = 0;
  for (let k = 0; k < T_DOF; k++) chi += rng.normal() ** 2;
  return z / Math.sqrt(chi / T_DOF);
}

/** Rows of 64 weights; the last row may be shorter. */
export function rowBounds(n: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let lo = 0; lo < n; lo += ROW) out.push([lo, Math.min(n, lo + ROW)]);
  return out;
}

function meanAbs(w: ArrayLike<number>, lo: number, hi: number, mod?: ArrayLike<number>): number {
  let s = 0;
  for (let j = lo; j < hi; j++) s += Math.abs(w[j]! * (mod ? mod[j - lo]! : 1));
  return hi > lo ? s / (hi - lo) : 0;
}

/** TWN-style data-free baseline: per row Δ = tau·mean|w|, codes sign(w)·[|w| > Δ], scale = mean|w| over kept. */
export function baselineTernary(w: Float64Array, tau: number): { codes: Int8Array; scales: Float64Array; deltas: Float64Array; meanAbs: Float64Array } {
  const rows = rowBounds(w.length);
  const codes = new Int8Array(w.length);
  const scales = new Float64Array(rows.length);
  const deltas = new Float64Array(rows.length);
  const means = new Float64Array(rows.length);
  rows.forEach(([lo, hi], r) => {
    const ma = meanAbs(w, lo, hi);
    const delta = tau * ma;
    let kept = 0;
    let sum = 0;
    for (let j = lo; j < hi; j++) {
      if (Math.abs(w[j]!) > delta) {
        codes[j] = w[j]! > 0 ? 1 : -1;
        kept++;
        sum += Math.abs(w[j]!);
      }
    }
    scales[r] = kept ? sum / kept : 0;
    deltas[r] = delta;
    means[r] = ma;
  });
  return { codes, scales, deltas, meanAbs: means };
}

/** Softened ternariser q(w) = s·sign(w)·½(1 + tanh((|w| − Δ)/T)), T = alpha·mean|W_r| (→ the hard one as T → 0). */
export function softTernary(w: Float64Array, scales: Float64Array, deltas: Float64Array, means: Float64Array, alpha: number): Float64Array {
  const out = new Float64Array(w.length);
  rowBounds(w.length).forEach(([lo, hi], r) => {
    const temp = alpha * means[r]!;
    for (let j = lo; j < hi; j++) {
      const x = Math.abs(w[j]!) - deltas[r]!;
      // the limit at temp = 0 (an all-zero row) is the hard step
      const gate = temp > 0 ? 0.5 * (1 + Math.tanh(x / temp)) : x > 0 ? 1 : 0;
      out[j] = scales[r]! * Math.sign(w[j]!) * gate;
    }
  });
  return out;
}

/** Channel modulation m_j = rms(X_:,j)^γ, normalised to geometric mean 1. */
export function modulation(X: Float64Array, tokens: number, gamma: number): Float64Array {
  const logs = new Float64Array(ROW);
  for (let j = 0; j < ROW; j++) {
    let s = 0;
    for (let t = 0; t < tokens; t++) s += X[t * ROW + j]! ** 2;
    logs[j] = gamma * 0.5 * Math.log(s / tokens);
  }
  const meanLog = logs.reduce((a, b) => a + b, 0) / ROW;
  return logs.map((l) => Math.exp(l - meanLog));
}

export interface Calibrated {
  gamma: number;
  modulation: Float64Array;
  codes: Int8Array;
  scales: Float64Array;
  /** Index into the grid per row. */
  multiplierIndex: Int32Array;
  grid: number[];
  /** Total calibration squared output error per γ (rows summed). */
  gammaErrors: number[];
}

/** Threshold multipliers {0.3, …, 1.5} ∪ {tau}, ascending, without duplicates. */
export function multiplierGrid(tau: number): number[] {
  const g = BASE_GRID.some((x) => x === tau) ? [...BASE_GRID] : [...BASE_GRID, tau];
  return g.sort((a, b) => a - b);
}

/**
 * Calibration (§11 step 3): for each γ quantise W·diag(m), fold diag(1/m) into the activations,
 * and per row pick the multiplier g with Δ = g·mean|w'| and the least-squares scale
 * s = ⟨Xw, X̃t⟩/‖X̃t‖²; keep the γ with the lowest total calibration error (ties: smaller γ).
 */
export function calibrate(w: Float64Array, X: Float64Array, tokens: number, tau: number): Calibrated {
  const rows = rowBounds(w.length);
  const grid = multiplierGrid(tau);
  const y = new Float64Array(tokens);
  const u = new Float64Array(tokens);
  const wm = new Float64Array(ROW);
  let best: Omit<Calibrated, 'gammaErrors' | 'grid'> | null = null;
  let bestTotal = Infinity;
  const gammaErrors: number[] = [];
  for (const gamma of GAMMAS) {
    const m = modulation(X, tokens, gamma);
    const Xt = new Float64Array(tokens * ROW);
    for (let t = 0; t < tokens; t++) for (let j = 0; j < ROW; j++) Xt[t * ROW + j] = X[t * ROW + j]! / m[j]!;
    const codes = new Int8Array(w.length);
    const scales = new Float64Array(rows.length);
    const multiplierIndex = new Int32Array(rows.length);
    let total = 0;
    rows.forEach(([lo, hi], r) => {
      const len = hi - lo;
      for (let t = 0; t < tokens; t++) {
        let s = 0;
        for (let j = 0; j < len; j++) s += X[t * ROW + j]! * w[lo + j]!;
        y[t] = s;
      }
      for (let j = 0; j < len; j++) wm[j] = w[lo + j]! * m[j]!;
      const ma = meanAbs(wm, 0, len);
      let bestErr = Infinity;
      let bestG = 0;
      let bestS = 0;
      grid.forEach((g, gi) => {
        const delta = g * ma;
        u.fill(0);
        for (let j = 0; j < len; j++) {
          const a = wm[j]!;
          if (Math.abs(a) <= delta) continue;
          if (a > 0) for (let t = 0; t < tokens; t++) u[t] = u[t]! + Xt[t * ROW + j]!;
          else for (let t = 0; t < tokens; t++) u[t] = u[t]! - Xt[t * ROW + j]!;
        }
        let yu = 0;
        let uu = 0;
        for (let t = 0; t < tokens; t++) {
          yu += y[t]! * u[t]!;
          uu += u[t]! * u[t]!;
        }
        const s = uu > 0 ? yu / uu : 0;
        let err = 0;
        for (let t = 0; t < tokens; t++) err += (y[t]! - s * u[t]!) ** 2;
        if (err < bestErr) {
          bestErr = err;
          bestG = gi;
          bestS = s;
        }
      });
      const delta = grid[bestG]! * ma;
      for (let j = 0; j < len; j++) codes[lo + j] = Math.abs(wm[j]!) > delta ? (wm[j]! > 0 ? 1 : -1) : 0;
      scales[r] = bestS;
      multiplierIndex[r] = bestG;
      total += bestErr;
    });
    gammaErrors.push(total);
    if (total < bestTotal) {
      bestTotal = total;
      best = { gamma, modulation: m, codes, scales, multiplierIndex };
    }
  }
  return { ...best!, grid, gammaErrors };
}

/** Dequantised calibrated weights ŵ_rj = s_r·t_rj / m_j. */
export function calibratedWeights(c: Calibrated, n: number): Float64Array {
  const out = new Float64Array(n);
  rowBounds(n).forEach(([lo, hi], r) => {
    for (let j = lo; j < hi; j++) out[j] = (c.scales[r]! * c.codes[j]!) / c.modulation[j - lo]!;
  });
  return out;
}

/** Mean over (row, token) of the squared output error (X(w − ŵ))². */
export function outputMse(w: Float64Array, wq: Float64Array, X: Float64Array, tokens: number): number {
  const rows = rowBounds(w.length);
  let s = 0;
  for (const [lo, hi] of rows) {
    for (let t = 0; t < tokens; t++) {
      let e = 0;
      for (let j = lo; j < hi; j++) e += X[t * ROW + j - lo]! * (w[j]! - wq[j]!);
      s += e * e;
    }
  }
  return s / (rows.length * tokens);
}

function weightMse(w: Float64Array, wq: Float64Array): number {
  let s = 0;
  for (let i = 0; i < w.length; i++) s += (w[i]! - wq[i]!) ** 2;
  return s / w.length;
}

function sparsity(codes: Int8Array): number {
  let z = 0;
  for (const c of codes) if (c === 0) z++;
  return z / codes.length;
}

export default defineKernel({
  id: 'catq/calibrate',
  version: 1,
  input: 'query',
  summary: 'CAT-Q-style ternary PTQ: TWN baseline, tanh-softened ternariser, and calibration of channel modulation, per-row thresholds and least-squares scales on output error',
  technique: 'calibrated ternary post-training quantisation (CAT-Q) with TWN thresholds',
  references: ['arXiv:2606.26650', 'arXiv:1605.04711'],
  honesty: 'The ternarisers, the calibration search and every error are computed; the weights (scaled Student-t) and activations (Gaussian with outlier channels) are seeded synthetic data, and the gradient training of CAT-Q is replaced by a grid search on the same objective.',
  params: {
    n_params: int(64, 16384, 4096).description('weights quantised'),
    tau: num(0.05, 3, 0.75).description('softness of the tanh ternariser'),
    alpha: num(1e-4, 10, 0.1).description('regularisation of the calibration'),
  },
  worstCase: { n_params: 16384, tau: 0.75, alpha: 10 },
  run({ n_params: n, tau, alpha }, rng) {
    // draw order: weights (stream `w`, five normals each), outlier channels (stream `outliers`,
    // partial Fisher–Yates), calibration activations 16×64 (stream `cal`), held-out 16×64 (stream `eval`)
    const ws = rng.stream('w');
    const w = new Float64Array(n);
    for (let i = 0; i < n; i++) w[i] = WEIGHT_SCALE * studentT(ws);
    const outliers = rng.stream('outliers').sample(ROW, OUTLIER_CHANNELS).sort((a, b) => a - b);
    const acts = (label: string, tokens: number) => {
      const X = rng.stream(label).normals(tokens * ROW);
      for (let t = 0; t < tokens; t++) for (const j of outliers) X[t * ROW + j] = X[t * ROW + j]! * OUTLIER_GAIN;
      return X;
    };
    const Xcal = acts('cal', N_CAL);
    const Xeval = acts('eval', N_EVAL);

    const base = baselineTernary(w, tau);
    const wBase = new Float64Array(n);
    rowBounds(n).forEach(([lo, hi], r) => {
      for (let j = lo; j < hi; j++) wBase[j] = base.scales[r]! * base.codes[j]!;
    });
    const wSoft = softTernary(w, base.scales, base.deltas, base.meanAbs, alpha);
    const cal = calibrate(w, Xcal, N_CAL, tau);
    const wCal = calibratedWeights(cal, n);

    const counts = { neg: 0, zero: 0, pos: 0 };
    for (const c of cal.codes) {
      if (c < 0) counts.neg++;
      else if (c === 0) counts.zero++;
      else counts.pos++;
    }
    let entropyBits = 0;
    for (const k of [counts.neg, counts.zero, counts.pos]) if (k > 0) entropyBits -= (k / n) * Math.log2(k / n);
    const histogram = cal.grid.map(() => 0);
    for (const gi of cal.multiplierIndex) histogram[gi] = histogram[gi]! + 1;
    const baseline = {
      weight_mse: weightMse(w, wBase),
      output_mse_cal: outputMse(w, wBase, Xcal, N_CAL),
      output_mse_eval: outputMse(w, wBase, Xeval, N_EVAL),
      sparsity: sparsity(base.codes),
    };
    const calibrated = {
      weight_mse: weightMse(w, wCal),
      output_mse_cal: outputMse(w, wCal, Xcal, N_CAL),
      output_mse_eval: outputMse(w, wCal, Xeval, N_EVAL),
      sparsity: sparsity(cal.codes),
      chosen_gamma: cal.gamma,
      gamma_search: GAMMAS.map((g, i) => ({ gamma: g, output_mse_cal: cal.gammaErrors[i]! / (rowBounds(n).length * N_CAL) })),
      multiplier_grid: cal.grid,
      multiplier_histogram: histogram,
    };
    return {
      constants: {
        row: ROW, calibration_tokens: N_CAL, eval_tokens: N_EVAL, weight_scale: WEIGHT_SCALE, student_t_dof: T_DOF,
        outlier_channel_count: OUTLIER_CHANNELS, outlier_gain: OUTLIER_GAIN, gammas: GAMMAS, code_counts_of: 'calibrated',
      },
      result: {
        rows: rowBounds(n).length,
        last_row_length: n - ROW * (rowBounds(n).length - 1),
        outlier_channels: outliers,
        baseline,
        calibrated,
        soft: { alpha, output_mse_cal: outputMse(w, wSoft, Xcal, N_CAL), output_mse_eval: outputMse(w, wSoft, Xeval, N_EVAL), weight_mse: weightMse(w, wSoft) },
        code_counts: counts,
        code_entropy_bits: entropyBits,
        bits_per_weight: Math.log2(3),
        compression_vs_fp16: 16 / Math.log2(3),
      },
      checks: {
        calibrated_not_worse_on_cal: calibrated.output_mse_cal <= baseline.output_mse_cal * (1 + 1e-12),
        eval_improvement_ratio: baseline.output_mse_eval > 0 ? calibrated.output_mse_eval / baseline.output_mse_eval : null,
      },
    };
  },
});
