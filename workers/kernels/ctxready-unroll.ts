/**
 * The Context-Ready Transformer (M. Godavarti, arXiv:2606.27538) with one block (D = 1): the input
 * at position t is pre-contextualised by a correction network, x_t = e_t + tanh([h_{t−1}; e_t]·W_c),
 * so sequential inference is a recurrent network; training unrolls the correction K times over the
 * whole sequence in parallel (a Jacobi iteration on the causal recurrence). After k unrolls the
 * first k+1 positions are exact, K ≥ T−1 reproduces the recurrence, and a zero-initialised
 * correction (gain 0) is the plain transformer. Block: causal single-head attention with a residual
 * and a tanh FFN. Design: kernels-a §1.7.
 */
import { defineKernel } from '../kernel-def.js';
import { attendRow } from '../lib/attention.js';
import { int, num } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';

export interface CtxModel {
  T: number;
  d: number;
  V: number;
  /** E[v·d + i]. */
  E: Float64Array;
  Wq: Float64Array;
  Wk: Float64Array;
  Wv: Float64Array;
  /** d × 2d and 2d × d. */
  W1: Float64Array;
  W2: Float64Array;
  /** 2d × d, rows 0…d−1 act on h_{t−1}, rows d…2d−1 on e_t. */
  Wc: Float64Array;
  /** d × V. */
  Wo: Float64Array;
  tokens: Int32Array;
}

/**
 * Draw order: stream `weights` gives E (V×d, z), W_q, W_k, W_v (d×d, z/√d), W₁ (d×2d, z/√d),
 * W₂ (2d×d, z/√(2d)), W_c (2d×d, gain·z/√(2d)), W_o (d×V, z/√d); stream `tokens` gives T draws of int(V).
 */
export function drawModel(T: number, d: number, V: number, gain: number, ws: Rng, ts: Rng): CtxModel {
  const E = ws.normals(V * d);
  const Wq = ws.normals(d * d, 1 / Math.sqrt(d));
  const Wk = ws.normals(d * d, 1 / Math.sqrt(d));
  const Wv = ws.normals(d * d, 1 / Math.sqrt(d));
  const W1 = ws.normals(d * 2 * d, 1 / Math.sqrt(d));
  const W2 = ws.normals(2 * d * d, 1 / Math.sqrt(2 * d));
  const Wc = ws.normals(2 * d * d, gain / Math.sqrt(2 * d));
  const Wo = ws.normals(d * V, 1 / Math.sqrt(d));
  const tokens = Int32Array.from({ length: T }, () => ts.int(V));
  return { T, d, V, E, Wq, Wk, Wv, W1, W2, Wc, Wo, tokens };
}

/** out[outOff…+m) = x[xOff…+n)·W for W (n × m). */
function rowTimes(x: Float64Array, xOff: number, n: number, W: Float64Array, m: number, out: Float64Array, outOff: number): void {
  for (let j = 0; j < m; j++) {
    let acc = 0;
    for (let k = 0; k < n; k++) acc += x[xOff + k]! * W[k * m + j]!;
    out[outOff + j] = acc;
  }
}

/** Scratch buffers of one model size, shared by both modes (results do not depend on them). */
class Block {
  private readonly q: Float64Array;
  private readonly att: Float64Array;
  private readonly hid: Float64Array;
  private readonly ffn: Float64Array;
  private readonly cat: Float64Array;
  private readonly scratch: Float64Array;

  constructor(private readonly m: CtxModel) {
    this.q = new Float64Array(m.d);
    this.att = new Float64Array(m.d);
    this.hid = new Float64Array(2 * m.d);
    this.ffn = new Float64Array(m.d);
    this.cat = new Float64Array(2 * m.d);
    this.scratch = new Float64Array(m.T);
  }

  /** K_t = X_t·W_k and V_t = X_t·W_v into the caches. */
  keysValues(X: Float64Array, t: number, K: Float64Array, Vc: Float64Array): void {
    const { d } = this.m;
    rowTimes(X, t * d, d, this.m.Wk, d, K, t * d);
    rowTimes(X, t * d, d, this.m.Wv, d, Vc, t * d);
  }

  /** H_t = Block(X_0…X_t)_t, given K, V of rows 0…t. */
  position(X: Float64Array, t: number, K: Float64Array, Vc: Float64Array, H: Float64Array): void {
    const { d, Wq, W1, W2 } = this.m;
    rowTimes(X, t * d, d, Wq, d, this.q, 0);
    attendRow(this.q, 0, K, Vc, t, d, d, 1 / Math.sqrt(d), this.att, 0, undefined, 0, this.scratch);
    for (let i = 0; i < d; i++) H[t * d + i] = X[t * d + i]! + this.att[i]!;
    rowTimes(H, t * d, d, W1, 2 * d, this.hid, 0);
    for (let i = 0; i < 2 * d; i++) this.hid[i] = Math.tanh(this.hid[i]!);
    rowTimes(this.hid, 0, 2 * d, W2, d, this.ffn, 0);
    for (let i = 0; i < d; i++) H[t * d + i] = H[t * d + i]! + this.ffn[i]!;
  }

  /** X_t = e_t + tanh([h_prev; e_t]·W_c) (X_0 = e_0 when hPrev is null). */
  correct(hPrev: Float64Array | null, hOff: number, t: number, X: Float64Array): void {
    const { d, E, tokens, Wc } = this.m;
    const eOff = tokens[t]! * d;
    if (!hPrev) {
      for (let i = 0; i < d; i++) X[t * d + i] = E[eOff + i]!;
      return;
    }
    for (let i = 0; i < d; i++) {
      this.cat[i] = hPrev[hOff + i]!;
      this.cat[d + i] = E[eOff + i]!;
    }
    rowTimes(this.cat, 0, 2 * d, Wc, d, X, t * d);
    for (let i = 0; i < d; i++) X[t * d + i] = E[eOff + i]! + Math.tanh(X[t * d + i]!);
  }

  /** H = Block(X) for all positions at once (the parallel, training-time view). */
  full(X: Float64Array): Float64Array {
    const { T, d } = this.m;
    const K = new Float64Array(T * d);
    const Vc = new Float64Array(T * d);
    const H = new Float64Array(T * d);
    for (let t = 0; t < T; t++) this.keysValues(X, t, K, Vc);
    for (let t = 0; t < T; t++) this.position(X, t, K, Vc, H);
    return H;
  }
}

/** RNN mode: x_t from h_{t−1}, then h_t with the growing K/V cache. */
export function sequential(m: CtxModel): Float64Array {
  const { T, d } = m;
  const b = new Block(m);
  const X = new Float64Array(T * d);
  const K = new Float64Array(T * d);
  const Vc = new Float64Array(T * d);
  const H = new Float64Array(T * d);
  for (let t = 0; t < T; t++) {
    b.correct(t === 0 ? null : H, (t - 1) * d, t, X);
    b.keysValues(X, t, K, Vc);
    b.position(X, t, K, Vc, H);
  }
  return H;
}

/** H⁰ … H^K of the parallel unroll (X⁰ = raw embeddings). */
export function parallelUnroll(m: CtxModel, K: number): Float64Array[] {
  const { T, d } = m;
  const b = new Block(m);
  const X0 = new Float64Array(T * d);
  for (let t = 0; t < T; t++) b.correct(null, 0, t, X0);
  const out = [b.full(X0)];
  for (let k = 1; k <= K; k++) {
    const prev = out[k - 1]!;
    const X = new Float64Array(T * d);
    for (let t = 0; t < T; t++) b.correct(t === 0 ? null : prev, (t - 1) * d, t, X);
    out.push(b.full(X));
  }
  return out;
}

/** exp(mean over t < T−1 of −ln softmax(H_t·W_o)[token_{t+1}]). */
export function perplexity(m: CtxModel, H: Float64Array): number {
  const { T, d, V } = m;
  const logits = new Float64Array(V);
  let nll = 0;
  for (let t = 0; t + 1 < T; t++) {
    rowTimes(H, t * d, d, m.Wo, V, logits, 0);
    let max = -Infinity;
    for (const l of logits) max = Math.max(max, l);
    let s = 0;
    for (const l of logits) s += Math.exp(l - max);
    nll += max + Math.log(s) - logits[m.tokens[t + 1]!]!;
  }
  return Math.exp(nll / (T - 1));
}

export default defineKernel({
  id: 'ctxready/unroll',
  version: 1,
  input: 'query',
  summary: 'Context-Ready Transformer: K-step parallel unroll of the correction network against sequential (RNN-mode) inference',
  technique: 'context-ready transformer, parallel Jacobi unroll of a causal correction recurrence',
  references: ['arXiv:2606.27538', 'arXiv:1706.03762'],
  honesty: 'The block, the correction recurrence and its parallel unroll are computed exactly; weights and tokens are seeded random draws, not a trained model.',
  params: {
    seq_len: int(2, 64, 32).description('sequence length (tokens)'),
    d_model: int(4, 24, 16).description('model width'),
    vocab: int(4, 64, 32).description('vocabulary size'),
    unroll: int(0, 32, 8).description('K: parallel unroll steps of the correction network (0: none)'),
    gain: num(0, 2, 0.5).description('gain of the correction network'),
  },
  worstCase: { seq_len: 64, d_model: 24, vocab: 64, unroll: 32, gain: 2 },
  run({ seq_len: T, d_model: d, vocab: V, unroll: K, gain }, rng) {
    // draws: stream `weights` then stream `tokens`, see drawModel
    const m = drawModel(T, d, V, gain, rng.stream('weights'), rng.stream('tokens'));
    const Hseq = sequential(m);
    const Hs = parallelUnroll(m, K);
    const pplSeq = perplexity(m, Hseq);
    const perK = Hs.map((H, k) => {
      let err = 0;
      let prefix = 0;
      let stillExact = true;
      for (let t = 0; t < T; t++) {
        let rowErr = 0;
        for (let i = 0; i < d; i++) rowErr = Math.max(rowErr, Math.abs(H[t * d + i]! - Hseq[t * d + i]!));
        err = Math.max(err, rowErr);
        if (stillExact && rowErr === 0) prefix++;
        else stillExact = false;
      }
      return { k, max_abs_error: err, exact_prefix: prefix, ppl: perplexity(m, H) };
    });
    const firstExact = perK.find((r) => r.max_abs_error === 0)?.k ?? null;
    let logSum = 0;
    let pairs = 0;
    for (let k = 1; k <= K; k++) {
      const a = perK[k - 1]!.max_abs_error;
      const b = perK[k]!.max_abs_error;
      if (a > 0 && b > 0) {
        logSum += Math.log(b / a);
        pairs++;
      }
    }
    return {
      constants: { layers: 1, heads: 1, ffn_width: 2 * d, ffn_activation: 'tanh', correction: 'x_t = e_t + tanh([h_{t-1}; e_t]·W_c)' },
      result: {
        tokens: m.tokens,
        per_k: perK,
        ppl_sequential: pplSeq,
        first_exact_k: firstExact,
        contraction: pairs ? Math.exp(logSum / pairs) : null,
      },
      checks: {
        prefix_exact: perK.every((r) => r.exact_prefix >= Math.min(T, r.k + 1)),
        full_unroll_exact: K >= T - 1 ? perK[T - 1]!.max_abs_error === 0 : null,
      },
    };
  },
});
