/**
 * Keyless attention (X. Gao, arXiv:2606.21848): the key projection is removed and scores are
 * routed through value space, s_tj = (q_t·R)·v_j/√d_head = q_t·(R·v_j)/√d_head, a depth-3
 * factorisation W_Q·R·W_Vᵀ of the bilinear form instead of W_Q·W_Kᵀ. Only values are cached, so
 * decoding keeps T·h·d_head floats instead of 2·T·h·d_head. Computed three ways: a parallel causal
 * pass, a token-by-token decode over a value-only cache, and standard attention with explicit keys
 * k′_j = R·v_j. Design: kernels-a §1.3.
 */
import { defineKernel } from '../kernel-def.js';
import { attendRow, causalSoftmaxAttention, headRows, maxAbsDiff, project } from '../lib/attention.js';
import { int } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';

export const ATTENTION_MATRIX_CAP = 32;
export const OUTPUT_ROWS = 8;

export interface KeylessHead {
  /** d_model × d_head. */
  WQ: Float64Array;
  WV: Float64Array;
  /** d_head × d_head routing matrix. */
  R: Float64Array;
}

export interface KeylessModel {
  T: number;
  dModel: number;
  dHead: number;
  /** x[t·d_model + i]. */
  x: Float64Array;
  heads: KeylessHead[];
  /** h·d_head × d_model. */
  WO: Float64Array;
}

/**
 * Draw order: stream `x` gives T·d_model normals (row-major); stream `weights` gives, per head,
 * W_Q then W_V (entries z/√d_model) then R (z/√d_head), and finally W_O (z/√(h·d_head)).
 */
export function drawModel(T: number, dModel: number, dHead: number, h: number, xs: Rng, ws: Rng): KeylessModel {
  const x = xs.normals(T * dModel);
  const heads: KeylessHead[] = [];
  for (let k = 0; k < h; k++) {
    const WQ = ws.normals(dModel * dHead, 1 / Math.sqrt(dModel));
    const WV = ws.normals(dModel * dHead, 1 / Math.sqrt(dModel));
    const R = ws.normals(dHead * dHead, 1 / Math.sqrt(dHead));
    heads.push({ WQ, WV, R });
  }
  const WO = ws.normals(h * dHead * dModel, 1 / Math.sqrt(h * dHead));
  return { T, dModel, dHead, x, heads, WO };
}

export interface KeylessRun {
  /** y[t·d_model + i] from the parallel pass. */
  parallel: Float64Array;
  decode: Float64Array;
  reference: Float64Array;
  /** Head 0's causal attention matrix (T×T, row-major) from the parallel pass. */
  attention0: Float64Array;
  decodeVsParallel: number;
  keylessVsReference: number;
  /** Largest number of floats the decode cache held (values only). */
  cacheFloats: number;
}

/** Concatenated heads (T × h·d_head) times W_O. */
function outputProjection(m: KeylessModel, concat: Float64Array): Float64Array {
  return project(concat, m.T, m.heads.length * m.dHead, m.WO, m.dModel);
}

export function runKeyless(m: KeylessModel): KeylessRun {
  const { T, dModel: dm, dHead: dh } = m;
  const h = m.heads.length;
  const scale = 1 / Math.sqrt(dh);
  const width = h * dh;
  const catPar = new Float64Array(T * width);
  const catDec = new Float64Array(T * width);
  const catRef = new Float64Array(T * width);
  let attention0: Float64Array = new Float64Array(0);
  let cacheFloats = 0;
  m.heads.forEach((head, k) => {
    const q = project(m.x, T, dm, head.WQ, dh);
    const v = project(m.x, T, dm, head.WV, dh);
    // route each query into value space once: q̃_t = q_t·R (O(d_head²) per token)
    const qr = project(q, T, dh, head.R, dh);

    // parallel pass: all rows of the masked score matrix at once
    const par = causalSoftmaxAttention(qr, v, v, T, dh, dh, { scale, keepWeights: k === 0 });
    if (k === 0) attention0 = par.weights!;
    for (let t = 0; t < T; t++) catPar.set(par.out.subarray(t * dh, (t + 1) * dh), t * width + k * dh);

    // decode: a cache of values only, appended one token at a time; no key is formed or stored
    const cache: Float64Array[] = [];
    const scores = new Float64Array(T);
    for (let t = 0; t < T; t++) {
      cache.push(v.slice(t * dh, (t + 1) * dh));
      let max = -Infinity;
      for (let j = 0; j <= t; j++) {
        const vj = cache[j]!;
        let s = 0;
        for (let i = 0; i < dh; i++) s += qr[t * dh + i]! * vj[i]!;
        scores[j] = s * scale;
        max = Math.max(max, scores[j]!);
      }
      let z = 0;
      for (let j = 0; j <= t; j++) z += (scores[j] = Math.exp(scores[j]! - max));
      const o = t * width + k * dh;
      for (let j = 0; j <= t; j++) {
        const a = scores[j]! / z;
        const vj = cache[j]!;
        for (let i = 0; i < dh; i++) catDec[o + i] = catDec[o + i]! + a * vj[i]!;
      }
    }
    cacheFloats += cache.length * dh;

    // reference: standard attention with explicit keys k′_j = R·v_j (k′_j[i] = Σ_l R[i][l]·v_j[l])
    const keys = new Float64Array(T * dh);
    for (let j = 0; j < T; j++) {
      for (let i = 0; i < dh; i++) {
        let s = 0;
        for (let l = 0; l < dh; l++) s += head.R[i * dh + l]! * v[j * dh + l]!;
        keys[j * dh + i] = s;
      }
    }
    const ref = new Float64Array(T * dh);
    const scratch = new Float64Array(T);
    for (let t = 0; t < T; t++) attendRow(q, t * dh, keys, v, t, dh, dh, scale, ref, t * dh, undefined, 0, scratch);
    for (let t = 0; t < T; t++) catRef.set(ref.subarray(t * dh, (t + 1) * dh), t * width + k * dh);
  });
  const parallel = outputProjection(m, catPar);
  const decode = outputProjection(m, catDec);
  const reference = outputProjection(m, catRef);
  return {
    parallel,
    decode,
    reference,
    attention0,
    decodeVsParallel: maxAbsDiff(decode, parallel),
    keylessVsReference: maxAbsDiff(parallel, reference),
    cacheFloats,
  };
}

export default defineKernel({
  id: 'keyless/attention',
  version: 2,
  informative: {
    'residuals.decode_vs_parallel': 'rounding-level gap between the decode-cache and parallel forms of the same computation (0 up to float error); the outputs themselves are recomputed by the tests',
    'residuals.keyless_vs_reference': 'rounding-level gap between keyless attention and standard attention with explicit keys, computed inside the kernel; the outputs are recomputed by the tests',
  },
  input: 'query',
  summary: 'Keyless attention: value-space routing W_Q·R·W_Vᵀ with a value-only decode cache, checked against standard attention with keys R·v',
  technique: 'keyless attention (value-space routing, value-only KV cache)',
  references: ['arXiv:2606.21848', 'arXiv:1706.03762'],
  honesty: 'The keyless attention, decode cache and reference attention are computed exactly; the inputs and projection weights are seeded Gaussian draws, not a trained model.',
  params: {
    seq_len: int(2, 128, 16).description('sequence length (tokens)'),
    d_model: int(4, 64, 16).description('model width'),
    d_head: int(2, 32, 8).description('head width (at most d_model)'),
    heads: int(1, 4, 2).description('attention heads'),
  },
  rules: ['d_head must not exceed d_model'],
  constraints: (p) => (p.d_head > p.d_model ? [{ param: 'd_head', msg: 'd_head must not exceed d_model' }] : []),
  // measured: T = 128, d_model = 64, d_head = 32, h = 4 in ~35 ms; T = 256 or h = 8 would pass 100 ms
  worstCase: { seq_len: 128, d_model: 64, d_head: 32, heads: 4 },
  run({ seq_len: T, d_model: dm, d_head: dh, heads: h }, rng) {
    // draws: stream `x` (inputs), stream `weights` (per head W_Q, W_V, R; then W_O), see drawModel
    const model = drawModel(T, dm, dh, h, rng.stream('x'), rng.stream('weights'));
    const r = runKeyless(model);
    const valueOnly = T * h * dh;
    const standardKv = 2 * T * h * dh;
    let rowSumDev = 0;
    let causalMass = 0;
    let minEntry = Infinity;
    for (let t = 0; t < T; t++) {
      let s = 0;
      for (let j = 0; j < T; j++) {
        const a = r.attention0[t * T + j]!;
        if (j > t) causalMass += Math.abs(a);
        else s += a;
        minEntry = Math.min(minEntry, a);
      }
      rowSumDev = Math.max(rowSumDev, Math.abs(s - 1));
    }
    const attention = T <= ATTENTION_MATRIX_CAP ? { attention_head0: headRows(r.attention0, T, T) } : { attention_truncated: true };
    return {
      constants: { attention_matrix_cap: ATTENTION_MATRIX_CAP, output_rows: OUTPUT_ROWS, score_scale: '1/sqrt(d_head)' },
      result: {
        ...attention,
        output_head: headRows(r.parallel, dm, OUTPUT_ROWS),
        cache: { value_only_floats: valueOnly, standard_kv_floats: standardKv, ratio: valueOnly / standardKv, decode_cache_floats: r.cacheFloats },
        projection_params: { keyless: 2 * dm * dh + dh * dh, standard: 3 * dm * dh },
        residuals: { decode_vs_parallel: r.decodeVsParallel, keyless_vs_reference: r.keylessVsReference },
        bilinear: { depth: 3, rank_bound: dh },
      },
      checks: {
        decode_matches_parallel: r.decodeVsParallel <= 1e-12,
        matches_reference_with_keys_Rv: r.keylessVsReference <= 1e-12,
        rows_stochastic: rowSumDev <= 1e-12 && minEntry >= 0,
        causal_mass_above_diagonal: causalMass,
        cache_holds_values_only: r.cacheFloats === valueOnly,
      },
    };
  },
});
