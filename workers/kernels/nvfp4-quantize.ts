/**
 * NVFP4 (NVIDIA, arXiv:2509.25149; cuDNN block-scale conversion): E2M1 4-bit elements, one FP8
 * E4M3 scale per block of 16, one FP32 tensor scale (two-level scaling). Encode scale
 * s_enc = 6·448/amax; block scale e_b = E4M3_RNE(min(448, amax_b/6·s_enc)); value ≈ e2m1·e_b/s_enc.
 * Optional: round-to-nearest-even or stochastic rounding, and a random-signed 16-point Hadamard
 * transform per block. MXFP4 (OCP MX v1.0: blocks of 32, E8M0 scale 2^(⌊log₂ amax⌋−2)) is computed
 * on the same data for comparison. Design: kernels-a §1.9.
 */
import { defineKernel } from '../kernel-def.js';
import { bool, int, num, oneOf } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';

export const E2M1: readonly number[] = [0, 0.5, 1, 1.5, 2, 3, 4, 6];
export const E4M3_MAX = 448;
export const BLOCK = 16;
export const MX_BLOCK = 32;
const HEAD = 64;
const MAX_BLOCKS_LISTED = 256;
const MAX_CODES_HEX = 4096;

/** The 127 non-negative finite E4M3 values (bias 7, S.1111.111 is NaN), ascending, with their bits. */
export const E4M3_GRID: readonly { value: number; bits: number }[] = (() => {
  const out: { value: number; bits: number }[] = [];
  for (let e = 0; e < 16; e++) {
    for (let m = 0; m < 8; m++) {
      if (e === 15 && m === 7) continue;
      out.push({ value: e === 0 ? m * 2 ** -9 : (1 + m / 8) * 2 ** (e - 7), bits: (e << 3) | m });
    }
  }
  return out;
})();

/** E4M3 round-to-nearest, ties to the even mantissa; v ≥ 448 saturates. v must be ≥ 0. */
export function e4m3Rne(v: number): { value: number; bits: number } {
  const g = E4M3_GRID;
  if (v >= E4M3_MAX) return g[g.length - 1]!;
  let lo = 0;
  let hi = g.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (g[mid]!.value <= v) lo = mid;
    else hi = mid;
  }
  const a = g[lo]!;
  const b = g[hi]!;
  if (v <= a.value) return a;
  const da = v - a.value;
  const db = b.value - v;
  if (da < db) return a;
  if (db < da) return b;
  return (a.bits & 1) === 0 ? a : b;
}

/** E2M1 magnitude index, round-to-nearest with ties to the even index (even mantissa); t > 6 saturates. */
export function e2m1Rne(t: number): number {
  if (t <= 0.25) return 0;
  if (t < 0.75) return 1;
  if (t <= 1.25) return 2;
  if (t < 1.75) return 3;
  if (t <= 2.5) return 4;
  if (t < 3.5) return 5;
  if (t <= 5) return 6;
  return 7;
}

/** E2M1 stochastic rounding: up with probability (t − lo)/(hi − lo); t ≥ 6 saturates. */
export function e2m1Stochastic(t: number, u: number): number {
  if (t >= 6) return 7;
  let lo = 0;
  while (E2M1[lo + 1]! <= t) lo++;
  const g = E2M1[lo]!;
  if (g === t) return lo;
  return u < (t - g) / (E2M1[lo + 1]! - g) ? lo + 1 : lo;
}

export interface BlockScale {
  amax: number;
  e4m3_bits: number;
  e4m3_value: number;
  effective_scale: number;
}

export interface Nvfp4Result {
  amax: number;
  encodeScale: number;
  blocks: BlockScale[];
  /** sign·8 + magnitude index per element. */
  codes: Uint8Array;
  dequant: Float64Array;
}

/** NVFP4 two-level quantisation of `x`; `sr` supplies one uniform per element for stochastic rounding. */
export function nvfp4Quantize(x: Float64Array, rounding: 'rne' | 'stochastic', sr?: Rng): Nvfp4Result {
  let amax = 0;
  for (const v of x) amax = Math.max(amax, Math.abs(v));
  const encodeScale = amax > 0 ? (6 * E4M3_MAX) / amax : 1;
  const nb = Math.ceil(x.length / BLOCK);
  const blocks: BlockScale[] = [];
  const codes = new Uint8Array(x.length);
  const dequant = new Float64Array(x.length);
  for (let b = 0; b < nb; b++) {
    const lo = b * BLOCK;
    const hi = Math.min(x.length, lo + BLOCK);
    let bmax = 0;
    for (let i = lo; i < hi; i++) bmax = Math.max(bmax, Math.abs(x[i]!));
    const e = e4m3Rne(Math.min(E4M3_MAX, (bmax / 6) * encodeScale));
    const sigma = e.value / encodeScale;
    blocks.push({ amax: bmax, e4m3_bits: e.bits, e4m3_value: e.value, effective_scale: sigma });
    for (let i = lo; i < hi; i++) {
      // one stochastic-rounding uniform per element, in element order, whatever the block
      const u = rounding === 'stochastic' ? sr!.next() : 0;
      if (sigma === 0) continue; // the whole block is 0 (code 0)
      const t = Math.abs(x[i]!) / sigma;
      const idx = rounding === 'rne' ? e2m1Rne(t) : e2m1Stochastic(t, u);
      const neg = x[i]! < 0;
      codes[i] = (neg ? 8 : 0) | idx;
      dequant[i] = (neg ? -1 : 1) * E2M1[idx]! * sigma;
    }
  }
  return { amax, encodeScale, blocks, codes, dequant };
}

/** Largest integer e with 2^e ≤ a (a > 0). */
function floorLog2(a: number): number {
  let e = Math.floor(Math.log2(a));
  while (2 ** e > a) e--;
  while (2 ** (e + 1) <= a) e++;
  return e;
}

/** MXFP4 (OCP MX v1.0): E2M1 elements, one E8M0 scale 2^(⌊log₂ amax_b⌋ − 2) per block of 32, RNE. */
export function mxfp4Quantize(x: Float64Array): Float64Array {
  const out = new Float64Array(x.length);
  for (let lo = 0; lo < x.length; lo += MX_BLOCK) {
    const hi = Math.min(x.length, lo + MX_BLOCK);
    let bmax = 0;
    for (let i = lo; i < hi; i++) bmax = Math.max(bmax, Math.abs(x[i]!));
    if (bmax === 0) continue;
    const scale = 2 ** (floorLog2(bmax) - 2);
    for (let i = lo; i < hi; i++) out[i] = Math.sign(x[i]!) * E2M1[e2m1Rne(Math.abs(x[i]!) / scale)]! * scale;
  }
  return out;
}

/** Sylvester–Hadamard entry H16[i][j] = (−1)^popcount(i & j). */
function hadamardSign(i: number, j: number): number {
  let v = i & j;
  let parity = 0;
  while (v) {
    parity ^= v & 1;
    v >>= 1;
  }
  return parity ? -1 : 1;
}
const H16 = Float64Array.from({ length: BLOCK * BLOCK }, (_, k) => hadamardSign(Math.floor(k / BLOCK), k % BLOCK));

/** y = ¼·H16·D·x per block (orthonormal); the input is zero-padded to whole blocks. */
export function rhtForward(x: Float64Array, signs: Float64Array): Float64Array {
  const nb = Math.ceil(x.length / BLOCK);
  const y = new Float64Array(nb * BLOCK);
  for (let b = 0; b < nb; b++) {
    for (let i = 0; i < BLOCK; i++) {
      let s = 0;
      for (let j = 0; j < BLOCK; j++) {
        const k = b * BLOCK + j;
        if (k < x.length) s += H16[i * BLOCK + j]! * signs[j]! * x[k]!;
      }
      y[b * BLOCK + i] = s / 4;
    }
  }
  return y;
}

/** x = D·¼·H16·y per block, cut to n elements. */
export function rhtInverse(y: Float64Array, signs: Float64Array, n: number): Float64Array {
  const x = new Float64Array(n);
  for (let b = 0; b * BLOCK < n; b++) {
    for (let i = 0; i < BLOCK && b * BLOCK + i < n; i++) {
      let s = 0;
      for (let j = 0; j < BLOCK; j++) s += H16[i * BLOCK + j]! * y[b * BLOCK + j]!;
      x[b * BLOCK + i] = (signs[i]! * s) / 4;
    }
  }
  return x;
}

/** x_i = z, times outlier_scale with probability outlier_rate. Draw order per element: normal, outlier uniform. */
export function makeTensor(rng: Rng, n: number, outlierRate: number, outlierScale: number): Float64Array {
  const x = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const z = rng.normal();
    x[i] = rng.next() < outlierRate ? z * outlierScale : z;
  }
  return x;
}

/** 16 random signs, one uniform each: −1 when u < 0.5. */
export function rhtSigns(rng: Rng): Float64Array {
  return Float64Array.from({ length: BLOCK }, () => (rng.next() < 0.5 ? -1 : 1));
}

function errorStats(x: Float64Array, xh: Float64Array): { mse: number; sqnr_db: number | null; sqnr_reason?: string; max_abs: number } {
  let sig = 0;
  let err = 0;
  let maxAbs = 0;
  for (let i = 0; i < x.length; i++) {
    const d = x[i]! - xh[i]!;
    sig += x[i]! ** 2;
    err += d * d;
    maxAbs = Math.max(maxAbs, Math.abs(d));
  }
  const sqnr = err > 0 && sig > 0 ? 10 * Math.log10(sig / err) : null;
  return { mse: err / x.length, sqnr_db: sqnr, ...(sqnr === null ? { sqnr_reason: err === 0 ? 'zero error' : 'zero signal' } : {}), max_abs: maxAbs };
}

/** Packed nibbles, low nibble first, as hex. */
export function packCodes(codes: Uint8Array): string {
  const bytes = Buffer.alloc(Math.ceil(codes.length / 2));
  for (let i = 0; i < codes.length; i++) bytes[i >> 1] = bytes[i >> 1]! | (codes[i]! << (i & 1 ? 4 : 0));
  return bytes.toString('hex');
}

export default defineKernel({
  id: 'nvfp4/quantize',
  version: 1,
  input: 'query',
  summary: 'NVFP4 two-level block quantisation (E2M1 × E4M3 per 16 × FP32 tensor scale), optional stochastic rounding and random Hadamard transform, against MXFP4',
  technique: 'nvfp4-e2m1-e4m3-16 two-level scaling, with MXFP4 (E8M0 per 32) comparison',
  references: ['arXiv:2509.25149', 'OCP Microscaling Formats (MX) v1.0'],
  honesty: 'The NVFP4 and MXFP4 encoders are real (bit-exact grids); the tensor is seeded Gaussian data with planted outliers, not a trained model.',
  params: {
    n: int(16, 65536, 256).description('values in the synthetic tensor'),
    outlier_rate: num(0, 0.5, 0.02).description('fraction of values that are outliers'),
    outlier_scale: num(1, 64, 8).description('magnitude multiplier of the outliers'),
    rounding: oneOf(['rne', 'stochastic'], 'rne').description('rne: round to nearest even; stochastic: stochastic rounding'),
    rht: bool(false).description('apply a random Hadamard transform before quantising'),
  },
  worstCase: { n: 65536, rounding: 'stochastic', rht: true },
  run({ n, outlier_rate, outlier_scale, rounding, rht }, rng) {
    // draws: stream `x` (per element: normal, outlier uniform); stream `rht` (16 sign uniforms);
    // stream `sr` (one stochastic-rounding uniform per quantised element, in order)
    const x = makeTensor(rng.stream('x'), n, outlier_rate, outlier_scale);
    const signs = rht ? rhtSigns(rng.stream('rht')) : null;
    const y = signs ? rhtForward(x, signs) : x;
    const q = nvfp4Quantize(y, rounding, rng.stream('sr'));
    const xhat = signs ? rhtInverse(q.dequant, signs, n) : q.dequant;
    const err = errorStats(x, xhat);
    const mx = errorStats(x, mxfp4Quantize(x));

    // self-checks on the quantised domain (y, ŷ)
    let gridOk = true;
    let topCodeOk = true;
    q.blocks.forEach((b, bi) => {
      let arg = -1;
      for (let i = bi * BLOCK; i < Math.min(y.length, (bi + 1) * BLOCK); i++) {
        if (b.effective_scale > 0) {
          // x̂/σ_b is a grid point up to the one rounding of the product g·σ_b
          const t = Math.abs(q.dequant[i]!) / b.effective_scale;
          if (!E2M1.some((g) => Math.abs(t - g) <= 1e-15 * 6)) gridOk = false;
        }
        if (arg < 0 || Math.abs(y[i]!) > Math.abs(y[arg]!)) arg = i;
      }
      if (rounding === 'rne' && b.e4m3_value >= 2 ** -6 && (q.codes[arg]! & 7) !== 7) topCodeOk = false;
    });
    const nb = q.blocks.length;
    return {
      constants: { e2m1_grid: E2M1, e4m3_max: E4M3_MAX, block: BLOCK, mx_block: MX_BLOCK, head: HEAD, code_layout: 'sign*8 + magnitude index', rht_padding: 'zero-pad to whole blocks' },
      result: {
        tensor: { amax: q.amax, encode_scale: q.encodeScale, decode_scale: 1 / q.encodeScale },
        n_blocks: nb,
        blocks: q.blocks.slice(0, MAX_BLOCKS_LISTED),
        blocks_truncated: nb > MAX_BLOCKS_LISTED,
        codes_hex: packCodes(q.codes.subarray(0, MAX_CODES_HEX)),
        codes_truncated: q.codes.length > MAX_CODES_HEX,
        input_head: x.subarray(0, HEAD),
        dequant_head: xhat.subarray(0, HEAD),
        transformed_head: signs ? { signs, y: y.subarray(0, HEAD), y_hat: q.dequant.subarray(0, HEAD) } : null,
        error: err,
        mxfp4: mx,
        mse_ratio_mxfp4_over_nvfp4: err.mse > 0 ? mx.mse / err.mse : null,
        ...(err.mse > 0 ? {} : { mse_ratio_reason: 'NVFP4 error is zero' }),
        // 4 bits per element, 8 per block (a partial last block still stores its scale), 32 per tensor
        bits_per_element: (4 * n + 8 * Math.ceil(n / BLOCK) + 32) / n,
      },
      checks: { grid_membership: gridOk, block_max_top_code: topCodeOk },
    };
  },
});
