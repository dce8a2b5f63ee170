/**
 * BitNet b1.58 absmean ternary quantisation (Ma et al. 2024, arXiv:2402.17764):
 * W̃ = RoundClip(W/(γ+ε), −1, 1), γ = mean|W|, with 8-bit absmax activations per token
 * (BitNet, arXiv:2310.11453). The product is computed twice, with additions/subtractions only and
 * with an integer multiply-accumulate; both must agree exactly. Design: kernels-c §17.
 */
import { defineKernel } from '../kernel-def.js';
import { int, num } from '../../src/lib/params.js';

const WEIGHT_SD = 0.02;
const ROW = 64;
const TOKENS = 8;
const QB = 127;

/** Round half away from zero, then clip to [-1, 1]. */
export function ternaryCode(w: number, gamma: number, eps: number): -1 | 0 | 1 {
  const denom = gamma + eps;
  if (denom === 0) return 0;
  const r = Math.sign(w / denom) * Math.round(Math.abs(w / denom));
  return (r > 1 ? 1 : r < -1 ? -1 : r === 0 ? 0 : r) as -1 | 0 | 1;
}

export function absmeanQuantize(w: Float64Array, eps: number): { gamma: number; codes: Int8Array } {
  let s = 0;
  for (const v of w) s += Math.abs(v);
  const gamma = w.length ? s / w.length : 0;
  const codes = new Int8Array(w.length);
  for (let i = 0; i < w.length; i++) codes[i] = ternaryCode(w[i]!, gamma, eps);
  return { gamma, codes };
}

/** Per-token absmax to [-Q_b, Q_b]. */
export function quantizeActivations(x: Float64Array): { q: Int32Array; absmax: number } {
  let absmax = 0;
  for (const v of x) absmax = Math.max(absmax, Math.abs(v));
  const q = new Int32Array(x.length);
  if (absmax > 0) for (let i = 0; i < x.length; i++) q[i] = Math.max(-QB, Math.min(QB, Math.round((x[i]! * QB) / absmax)));
  return { q, absmax };
}

export default defineKernel({
  id: 'ternary/quantize',
  version: 1,
  input: 'query',
  summary: 'BitNet b1.58 absmean ternary weights with 8-bit activations; multiplication-free product checked against integer MAC',
  technique: 'absmean ternary quantisation (BitNet b1.58) with absmax int8 activations',
  references: ['arXiv:2402.17764', 'arXiv:2310.11453'],
  honesty: 'The quantiser and the add/subtract product are real; the weights and activations are seeded Gaussian draws, not a trained model.',
  params: {
    n_params: int(64, 262144, 4096).description('weights quantised'),
    eps: num(0, 0.1, 1e-5).description('ε added to the absmean scale'),
  },
  worstCase: { n_params: 262144 },
  run({ n_params: n, eps }, rng) {
    // draw order: weights (stream `w`), then activations token by token (stream `x`)
    const w = rng.stream('w').normals(n, WEIGHT_SD);
    const { gamma, codes } = absmeanQuantize(w, eps);
    let neg = 0;
    let zero = 0;
    let pos = 0;
    let mse = 0;
    for (let i = 0; i < n; i++) {
      const c = codes[i]!;
      if (c < 0) neg++;
      else if (c === 0) zero++;
      else pos++;
      mse += (w[i]! - gamma * c) ** 2;
    }

    const rows = Math.floor(n / ROW);
    const xs = rng.stream('x');
    let intMismatch = 0;
    let errNum = 0;
    let errDen = 0;
    let multiplicationsAvoided = 0;
    for (let tok = 0; tok < TOKENS; tok++) {
      const x = xs.normals(ROW);
      x[0] = x[0]! * 10; // an outlier channel, as in real activations
      const { q, absmax } = quantizeActivations(x);
      for (let r = 0; r < rows; r++) {
        let addSub = 0;
        let mac = 0;
        let fp = 0;
        for (let j = 0; j < ROW; j++) {
          const c = codes[r * ROW + j]!;
          if (c === 1) addSub += q[j]!;
          else if (c === -1) addSub -= q[j]!;
          mac += c * q[j]!;
          fp += w[r * ROW + j]! * x[j]!;
        }
        multiplicationsAvoided += ROW;
        if (addSub !== mac) intMismatch++;
        const y = (addSub * gamma * absmax) / QB;
        errNum += (y - fp) ** 2;
        errDen += fp * fp;
      }
    }
    const zeroFraction = zero / n;
    const expected = erf(1 / (2 * Math.sqrt(Math.PI))); // a code is 0 iff |w| < γ/2, γ = σ·sqrt(2/π)
    return {
      constants: { weight_sd: WEIGHT_SD, row: ROW, tokens: TOKENS, q_b: QB, outlier_channel_scale: 10 },
      result: {
        gamma,
        code_counts: { neg, zero, pos },
        zero_fraction: zeroFraction,
        expected_zero_fraction_gaussian: expected,
        weight_mse: mse / n,
        matmul: { rows, tokens: TOKENS, int_mismatch: intMismatch, rel_error_vs_fp: errDen > 0 ? Math.sqrt(errNum / errDen) : 0 },
        bits_per_weight: Math.log2(3),
        compression_vs_fp16: 16 / Math.log2(3),
        multiplications_avoided: multiplicationsAvoided,
      },
      checks: {
        counts_sum: neg + zero + pos === n,
        int_paths_agree: intMismatch === 0,
        zero_fraction_within_4sigma: Math.abs(zeroFraction - expected) <= 4 * Math.sqrt((expected * (1 - expected)) / n) + 1e-4,
      },
    };
  },
});

/** erf to ~1e-15: Maclaurin series below 2.5, continued fraction for erfc above (A&S 7.1.26 is too coarse for a closed-form test). */
export function erf(x: number): number {
  const sign = x < 0 ? -1 : 1;
  const ax = Math.abs(x);
  if (ax < 2.5) {
    // Maclaurin series: erf x = 2/sqrt(pi) Σ (-1)^k x^(2k+1) / (k! (2k+1))
    let term = ax;
    let sum = ax;
    for (let k = 1; k < 60; k++) {
      term *= (-ax * ax) / k;
      sum += term / (2 * k + 1);
    }
    return (sign * 2 * sum) / Math.sqrt(Math.PI);
  }
  // continued fraction for erfc at larger x
  let f = 0;
  for (let k = 60; k >= 1; k--) f = k / 2 / (ax + f);
  return sign * (1 - Math.exp(-ax * ax) / Math.sqrt(Math.PI) / (ax + f));
}
