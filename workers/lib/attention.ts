/**
 * Causal scaled-dot-product attention on row-major Float64Arrays (Vaswani et al. 2017,
 * arXiv:1706.03762), written once for the attention kernels (keyless, DLA, context-ready).
 * Sequences are `T` rows: Q[t·dk + i], K[j·dk + i], V[j·dv + i].
 *
 * `attendRow` computes one query position against keys 0…t with the maximum subtracted before
 * exponentiating; every caller that needs bit-identical results for the same inputs (parallel vs
 * recurrent modes) goes through it, so the floating-point operation order is the same.
 */

/**
 * out[outOff…outOff+dv) = Σ_{j≤t} a_j·V_j with a = softmax_j(scale·q·K_j), q = Q[qOff…qOff+dk).
 * When `weights` is given, a_j is written to weights[wOff + j] for j ≤ t (entries beyond t untouched).
 * `scratch` (length ≥ t+1) avoids an allocation per row.
 */
export function attendRow(
  Q: ArrayLike<number>,
  qOff: number,
  K: ArrayLike<number>,
  V: ArrayLike<number>,
  t: number,
  dk: number,
  dv: number,
  scale: number,
  out: Float64Array,
  outOff: number,
  weights?: Float64Array,
  wOff = 0,
  scratch?: Float64Array,
): void {
  const s = scratch && scratch.length > t ? scratch : new Float64Array(t + 1);
  let max = -Infinity;
  for (let j = 0; j <= t; j++) {
    let acc = 0;
    const kOff = j * dk;
    for (let i = 0; i < dk; i++) acc += Q[qOff + i]! * K[kOff + i]!;
    const v = acc * scale;
    s[j] = v;
    if (v > max) max = v;
  }
  let sum = 0;
  for (let j = 0; j <= t; j++) {
    const e = Math.exp(s[j]! - max);
    s[j] = e;
    sum += e;
  }
  for (let i = 0; i < dv; i++) out[outOff + i] = 0;
  for (let j = 0; j <= t; j++) {
    const a = s[j]! / sum;
    if (weights) weights[wOff + j] = a;
    const vOff = j * dv;
    for (let i = 0; i < dv; i++) out[outOff + i] = out[outOff + i]! + a * V[vOff + i]!;
  }
}

export interface CausalAttention {
  /** O[t·dv + i]. */
  out: Float64Array;
  /** Row-stochastic T×T weights (zero above the diagonal), only when requested. */
  weights?: Float64Array;
}

/** Causal softmax attention over T positions; scale defaults to 1/√dk. */
export function causalSoftmaxAttention(
  Q: ArrayLike<number>,
  K: ArrayLike<number>,
  V: ArrayLike<number>,
  T: number,
  dk: number,
  dv: number,
  opts: { scale?: number; keepWeights?: boolean } = {},
): CausalAttention {
  const scale = opts.scale ?? 1 / Math.sqrt(dk);
  const out = new Float64Array(T * dv);
  const weights = opts.keepWeights ? new Float64Array(T * T) : undefined;
  const scratch = new Float64Array(T);
  for (let t = 0; t < T; t++) attendRow(Q, t * dk, K, V, t, dk, dv, scale, out, t * dv, weights, t * T, scratch);
  return weights ? { out, weights } : { out };
}

/** Y = X·W for row-major X (rows × n) and W (n × m). */
export function project(X: ArrayLike<number>, rows: number, n: number, W: ArrayLike<number>, m: number): Float64Array {
  const Y = new Float64Array(rows * m);
  for (let r = 0; r < rows; r++) {
    for (let k = 0; k < n; k++) {
      const x = X[r * n + k]!;
      if (x === 0) continue;
      const wOff = k * m;
      const yOff = r * m;
      for (let j = 0; j < m; j++) Y[yOff + j] = Y[yOff + j]! + x * W[wOff + j]!;
    }
  }
  return Y;
}

/** Largest |a_i − b_i|. */
export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new RangeError(`maxAbsDiff: lengths ${a.length} and ${b.length} differ`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

/** The first `rows` rows (at most) of a row-major matrix with `cols` columns, as nested arrays. */
export function headRows(M: ArrayLike<number>, cols: number, rows: number): number[][] {
  const n = Math.min(rows, Math.floor(M.length / cols));
  return Array.from({ length: n }, (_, r) => Array.from({ length: cols }, (_, c) => M[r * cols + c]!));
}

/**
 * Softmax attention weights of q = Q[qOff…qOff+d) over the keys K[idx[m]] for m < n, in that order:
 * w[m] = softmax_m(scale·q·K_idx[m]), maximum subtracted first. For kernels that attend to a subset
 * of positions (a KV cache after eviction, sparse-attention branches); nothing is written when n = 0.
 */
export function subsetWeights(Q: ArrayLike<number>, qOff: number, K: ArrayLike<number>, idx: ArrayLike<number>, n: number, d: number, scale: number, w: Float64Array): void {
  let max = -Infinity;
  for (let m = 0; m < n; m++) {
    const o = idx[m]! * d;
    let acc = 0;
    for (let i = 0; i < d; i++) acc += Q[qOff + i]! * K[o + i]!;
    acc *= scale;
    w[m] = acc;
    if (acc > max) max = acc;
  }
  let sum = 0;
  for (let m = 0; m < n; m++) {
    const e = Math.exp(w[m]! - max);
    w[m] = e;
    sum += e;
  }
  for (let m = 0; m < n; m++) w[m] = w[m]! / sum;
}
