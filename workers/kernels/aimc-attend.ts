/**
 * Analog in-memory-computing attention with gain cells (Leroux et al., Nature Computational
 * Science 5:813–824, 2025, arXiv:2409.19315): K and V stored as analog charges, Q·K and A·V
 * computed in memory, HardSigmoid instead of softmax, with finite write precision, per-cell
 * Gaussian read noise, charge leakage exp(−(i−j)/τ) and ADC quantisation of the outputs. The
 * kernel separates the algorithmic gap (HardSigmoid vs softmax, both digital) from the hardware
 * error (analog vs digital HardSigmoid). Design: kernels-b §18.
 */
import { defineKernel } from '../kernel-def.js';
import { int } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';

export const READ_NOISE = 0.01;
export const TAU = 256;
export const ADC_LEVELS = 256;
/** Matrices are listed in the body when L·d stays at or below this. */
const LIST_LIMIT = 1024;

export const hardSigmoid = (x: number): number => Math.min(1, Math.max(0, x / 6 + 0.5));

export interface Quantised {
  q: Float64Array;
  c: number;
  step: number;
}

/** Uniform per-tensor quantiser over [−c, c], c = max|x|: q(x) = −c + Δ·round((x + c)/Δ), Δ = 2c/(levels − 1). */
export function quantise(x: Float64Array, levels: number): Quantised {
  let c = 0;
  for (const v of x) c = Math.max(c, Math.abs(v));
  if (c === 0) return { q: Float64Array.from(x), c, step: 0 };
  const step = (2 * c) / (levels - 1);
  return { q: x.map((v) => -c + step * Math.round((v + c) / step)), c, step };
}

/** Causal digital attention: softmax and HardSigmoid (normalised by i + 1). */
export function digitalAttention(Q: Float64Array, K: Float64Array, V: Float64Array, L: number, d: number): { softmax: Float64Array; hs: Float64Array } {
  const sm = new Float64Array(L * d);
  const hs = new Float64Array(L * d);
  const s = new Float64Array(L);
  const scale = 1 / Math.sqrt(d);
  for (let i = 0; i < L; i++) {
    let mx = -Infinity;
    for (let j = 0; j <= i; j++) {
      let acc = 0;
      for (let m = 0; m < d; m++) acc += Q[i * d + m]! * K[j * d + m]!;
      s[j] = acc * scale;
      mx = Math.max(mx, s[j]!);
    }
    let z = 0;
    for (let j = 0; j <= i; j++) z += Math.exp(s[j]! - mx);
    for (let j = 0; j <= i; j++) {
      const a = Math.exp(s[j]! - mx) / z;
      const h = hardSigmoid(s[j]!) / (i + 1);
      for (let m = 0; m < d; m++) {
        sm[i * d + m] = sm[i * d + m]! + a * V[j * d + m]!;
        hs[i * d + m] = hs[i * d + m]! + h * V[j * d + m]!;
      }
    }
  }
  return { softmax: sm, hs };
}

export interface AimcOptions {
  levels: number;
  sigma: number;
  tau: number;
  /** ADC full scale: quantise the outputs to ADC_LEVELS over [−cOut, cOut]; null turns the ADC off. */
  cOut: number | null;
}

/**
 * The analog path. Per-cell read noise σ·c·ξ on every cell of a read row is Gaussian, so its effect
 * on a dot product is drawn exactly as one normal per dot product: the score of (i, j) gets
 * σ·c_k·decay_ij·‖q̃_i‖·ξ_ij and output (i, m) gets σ·c_v·sqrt(Σ_j (a_ij·decay_ij)²)·ξ_im.
 * Draw order, stream `read`: for i, for j ≤ i one score normal; then d output normals for row i.
 */
export function aimcAttention(Q: Float64Array, K: Float64Array, V: Float64Array, L: number, d: number, opt: AimcOptions, noise: Rng) {
  const q = quantise(Q, opt.levels);
  const k = quantise(K, opt.levels);
  const v = quantise(V, opt.levels);
  const out = new Float64Array(L * d);
  const a = new Float64Array(L);
  const scale = 1 / Math.sqrt(d);
  for (let i = 0; i < L; i++) {
    let qn = 0;
    for (let m = 0; m < d; m++) qn += q.q[i * d + m]! ** 2;
    qn = Math.sqrt(qn);
    let a2 = 0;
    for (let j = 0; j <= i; j++) {
      const decay = Math.exp(-(i - j) / opt.tau);
      let acc = 0;
      for (let m = 0; m < d; m++) acc += q.q[i * d + m]! * k.q[j * d + m]!;
      const xi = noise.normal();
      const sc = (acc * decay + opt.sigma * k.c * decay * qn * xi) * scale;
      const w = hardSigmoid(sc) / (i + 1);
      a[j] = w * decay;
      a2 += a[j]! * a[j]!;
      for (let m = 0; m < d; m++) out[i * d + m] = out[i * d + m]! + a[j]! * v.q[j * d + m]!;
    }
    const outSd = opt.sigma * v.c * Math.sqrt(a2);
    for (let m = 0; m < d; m++) out[i * d + m] = out[i * d + m]! + outSd * noise.normal();
  }
  let adcStep = 0;
  if (opt.cOut !== null && opt.cOut > 0) {
    const c = opt.cOut;
    adcStep = (2 * c) / (ADC_LEVELS - 1);
    for (let p = 0; p < out.length; p++) {
      const idx = Math.min(ADC_LEVELS - 1, Math.max(0, Math.round((out[p]! + c) / adcStep)));
      out[p] = -c + adcStep * idx;
    }
  }
  return { out, q, k, v, adcStep };
}

function relErr(a: Float64Array, ref: Float64Array): number {
  let num = 0;
  let den = 0;
  for (let p = 0; p < a.length; p++) {
    num += (a[p]! - ref[p]!) ** 2;
    den += ref[p]! ** 2;
  }
  return den > 0 ? Math.sqrt(num / den) : Math.sqrt(num);
}

/** Mean over rows of the cosine between rows (rows where either is zero count as 1 if both are zero, else 0). */
function meanRowCosine(a: Float64Array, b: Float64Array, L: number, d: number): number {
  let s = 0;
  for (let i = 0; i < L; i++) {
    let ab = 0;
    let aa = 0;
    let bb = 0;
    for (let m = 0; m < d; m++) {
      ab += a[i * d + m]! * b[i * d + m]!;
      aa += a[i * d + m]! ** 2;
      bb += b[i * d + m]! ** 2;
    }
    s += aa > 0 && bb > 0 ? Math.max(-1, Math.min(1, ab / Math.sqrt(aa * bb))) : aa === bb ? 1 : 0;
  }
  return s / L;
}

function maxQuantError(x: Float64Array, qx: Float64Array): number {
  let e = 0;
  for (let p = 0; p < x.length; p++) e = Math.max(e, Math.abs(x[p]! - qx[p]!));
  return e;
}

export default defineKernel({
  id: 'aimc/attend',
  version: 1,
  input: 'query',
  summary: 'Analog in-memory gain-cell attention: HardSigmoid attention with write quantisation, read noise, charge leakage and ADC, against digital references',
  technique: 'analog in-memory-computing attention (gain cells, HardSigmoid) with hardware non-idealities',
  references: ['arXiv:2409.19315'],
  honesty: 'The attention arithmetic and the non-ideality model are computed exactly; Q, K, V and the noise are seeded synthetic draws, and no device physics or energy figures are claimed.',
  params: {
    seq_len: int(1, 256, 16).description('sequence length (tokens)'),
    d_head: int(1, 64, 8).description('head width'),
    levels: int(2, 4096, 16).description('quantisation levels of the analog write and the ADC'),
  },
  worstCase: { seq_len: 256, d_head: 64, levels: 4096 },
  run({ seq_len: L, d_head: d, levels }, rng) {
    // draw order: stream `qkv`: Q, K, V (L·d normals each, row-major); stream `read`: see aimcAttention
    const qkv = rng.stream('qkv');
    const Q = qkv.normals(L * d);
    const K = qkv.normals(L * d);
    const V = qkv.normals(L * d);
    const dig = digitalAttention(Q, K, V, L, d);
    let cOut = 0;
    for (const x of dig.hs) cOut = Math.max(cOut, Math.abs(x));
    const hw = aimcAttention(Q, K, V, L, d, { levels, sigma: READ_NOISE, tau: TAU, cOut }, rng.stream('read'));
    const rowErr = Array.from({ length: L }, (_, i) => {
      let s = 0;
      for (let m = 0; m < d; m++) s += (hw.out[i * d + m]! - dig.hs[i * d + m]!) ** 2;
      return Math.sqrt(s);
    });
    const listed = L * d <= LIST_LIMIT;
    const rows = (a: Float64Array): Float64Array[] => Array.from({ length: L }, (_, i) => a.subarray(i * d, (i + 1) * d));
    const mq = { q: maxQuantError(Q, hw.q.q), k: maxQuantError(K, hw.k.q), v: maxQuantError(V, hw.v.q) };
    const half = { q: hw.q.step / 2, k: hw.k.step / 2, v: hw.v.step / 2 };
    return {
      constants: { read_noise_fs: READ_NOISE, tau_steps: TAU, adc_levels: ADC_LEVELS, hard_sigmoid: 'clip(x/6 + 1/2, 0, 1)', output_normalisation: 'o_i = sum_{j<=i} a_ij v_j / (i + 1)', adc_full_scale: 'max |digital HardSigmoid output|' },
      result: {
        step_sizes: { q: hw.q.step, k: hw.k.step, v: hw.v.step },
        full_scales: { q: hw.q.c, k: hw.k.c, v: hw.v.c, out: cOut },
        adc_step: hw.adcStep,
        hardware_rel_error: relErr(hw.out, dig.hs),
        hardware_cosine: meanRowCosine(hw.out, dig.hs, L, d),
        algorithmic_rel_error: relErr(dig.hs, dig.softmax),
        algorithmic_cosine: meanRowCosine(dig.hs, dig.softmax, L, d),
        row_hardware_error: rowErr,
        max_quant_error: mq,
        half_step: half,
        ops: { macs: d * L * (L + 1), dac_conversions: L * d, adc_conversions: L * d },
        matrices_omitted: !listed,
        ...(listed ? { Q: rows(Q), K: rows(K), V: rows(V), out_aimc: rows(hw.out), out_hs: rows(dig.hs), out_softmax: rows(dig.softmax) } : {}),
      },
      checks: {
        quantiser_within_half_step: mq.q <= half.q + 1e-15 && mq.k <= half.k + 1e-15 && mq.v <= half.v + 1e-15,
      },
    };
  },
});
