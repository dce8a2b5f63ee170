/**
 * In-Place Test-Time Training (Feng et al. 2026, ICLR 2026, arXiv:2604.06169): the down-projection
 * W_down of an ordinary gated MLP becomes a fast weight updated during inference chunk by chunk
 * (apply the current weight to a chunk, then update it with that chunk), with a target aligned to
 * next-token prediction instead of the reconstruction target of earlier TTT layers. Design:
 * kernels-c §13. The chunk objective is the dot-product form −Σ_t⟨W z_t, v̂_t⟩, whose gradient step
 * is ΔW = η·Σ_t v̂_t z_tᵀ.
 */
import { defineKernel } from '../kernel-def.js';
import { int, num } from '../../src/lib/params.js';

const CHUNK = 16;
const FOLLOW_P = 0.9;
const W0_SD = 0.1;

export interface FastWeightRun {
  /** Accuracy of next-token argmax predictions per chunk, made with the weight before the chunk's update. */
  accuracy: number[];
  /** Σ_t ⟨ΔW_i z_t, v̂_t⟩ per chunk, from the applied update matrix. */
  alignment: number[];
  /** η·‖G_i‖²_F per chunk. */
  gradEnergy: number[];
  W: Float64Array;
  /** Σ over every token of v̂_t z_tᵀ, accumulated token by token (independent of the chunking). */
  outerSum: Float64Array;
}

/** argmax_k (W z(cur))_k, ties to the lower index. */
function argmaxLogit(W: Float64Array, Zv: Float64Array, V: number, d: number, cur: number): number {
  const z = cur * d;
  let best = 0;
  let bestLogit = -Infinity;
  for (let k = 0; k < V; k++) {
    let s = 0;
    const w = k * d;
    for (let j = 0; j < d; j++) s += W[w + j]! * Zv[z + j]!;
    if (s > bestLogit) {
      bestLogit = s;
      best = k;
    }
  }
  return best;
}

/**
 * Apply-then-update over `nChunks` chunks of `chunk` tokens. Zv is the V×d table of hidden vectors per
 * token (the frozen MLP depends on the current token only), W0 the V×d initial down-projection.
 * Target 'ntp' is onehot(next token), 'recon' onehot(current token); accuracy is always next-token.
 */
export function fastWeightPass(Zv: Float64Array, tokens: ArrayLike<number>, W0: Float64Array, V: number, d: number, eta: number, chunk: number, nChunks: number, target: 'ntp' | 'recon'): FastWeightRun {
  const W = Float64Array.from(W0);
  const G = new Float64Array(V * d);
  const outerSum = new Float64Array(V * d);
  const accuracy: number[] = [];
  const alignment: number[] = [];
  const gradEnergy: number[] = [];
  // with η = 0 the weight never moves, so each token's prediction is computed once (same arithmetic)
  const frozenPrediction = eta === 0 ? Int32Array.from({ length: V }, (_, v) => argmaxLogit(W, Zv, V, d, v)) : null;
  for (let c = 0; c < nChunks; c++) {
    let correct = 0;
    G.fill(0);
    for (let t = c * chunk; t < (c + 1) * chunk; t++) {
      const cur = tokens[t]!;
      const nxt = tokens[t + 1]!;
      const z = cur * d;
      if ((frozenPrediction ? frozenPrediction[cur]! : argmaxLogit(W, Zv, V, d, cur)) === nxt) correct++;
      const tgt = target === 'ntp' ? nxt : cur;
      for (let j = 0; j < d; j++) {
        G[tgt * d + j] = G[tgt * d + j]! + Zv[z + j]!;
        outerSum[tgt * d + j] = outerSum[tgt * d + j]! + Zv[z + j]!;
      }
    }
    // ΔW = η·G, then the gain it buys on this chunk's own targets
    let energy = 0;
    for (let i = 0; i < V * d; i++) energy += G[i]! * G[i]!;
    let align = 0;
    for (let t = c * chunk; t < (c + 1) * chunk; t++) {
      const cur = tokens[t]!;
      const tgt = target === 'ntp' ? tokens[t + 1]! : cur;
      let s = 0;
      for (let j = 0; j < d; j++) s += eta * G[tgt * d + j]! * Zv[cur * d + j]!;
      align += s;
    }
    for (let i = 0; i < V * d; i++) W[i] = W[i]! + eta * G[i]!;
    accuracy.push(correct / chunk);
    alignment.push(align);
    gradEnergy.push(eta * energy);
  }
  return { accuracy, alignment, gradEnergy, W, outerSum };
}

/** z = normalise(SiLU(W_gate x) ⊙ (W_up x)), normalise = zero mean and unit RMS over the d units. */
export function hiddenTable(E: Float64Array, Wg: Float64Array, Wu: Float64Array, V: number, d: number): Float64Array {
  const Z = new Float64Array(V * d);
  const h = new Float64Array(d);
  for (let v = 0; v < V; v++) {
    for (let j = 0; j < d; j++) {
      let g = 0;
      let u = 0;
      for (let k = 0; k < V; k++) {
        g += Wg[j * V + k]! * E[v * V + k]!;
        u += Wu[j * V + k]! * E[v * V + k]!;
      }
      h[j] = (g / (1 + Math.exp(-g))) * u;
    }
    const mean = h.reduce((s, x) => s + x, 0) / d;
    let ms = 0;
    for (let j = 0; j < d; j++) ms += (h[j]! - mean) ** 2;
    const rms = Math.sqrt(ms / d);
    // a constant hidden vector has no direction to keep: it maps to zero
    for (let j = 0; j < d; j++) Z[v * d + j] = rms > 0 ? (h[j]! - mean) / rms : 0;
  }
  return Z;
}

export default defineKernel({
  id: 'inplacettt/adapt',
  version: 2,
  informative: {
    chunkwise_equivalence_error: 'rounding-level gap between the chunk-wise and token-wise fast-weight updates, computed inside the kernel; bounded by a fixed tolerance in the tests',
  },
  input: 'query',
  summary: 'In-Place TTT: the MLP down-projection as a chunk-wise fast weight with a next-token-aligned target, against a reconstruction target and a frozen weight',
  technique: 'In-Place Test-Time Training (chunk-wise fast-weight W_down, next-token-aligned target)',
  references: ['arXiv:2604.06169'],
  honesty: 'The apply-then-update fast-weight recursion and every accuracy are computed; the frozen MLP, embeddings and the token stream (a seeded permutation rule with 10 % noise) are synthetic stand-ins for a pretrained model and a document.',
  params: {
    dim: int(2, 64, 8).description('input dimension of the MLP down-projection'),
    out_dim: int(2, 32, 4).description('output dimension'),
    n_chunks: int(1, 256, 48).description('chunks of the stream (one fast-weight update each)'),
    eta: num(0, 1, 0.05).description('fast-weight learning rate'),
  },
  worstCase: { dim: 64, out_dim: 32, n_chunks: 256, eta: 1 },
  run({ dim: d, out_dim: V, n_chunks: N, eta }, rng) {
    // draw order, one stream each: embeddings V×V (`embed`), W_gate then W_up d×V (`mlp`), W_down⁰ V×d
    // (`w0`), permutation π (`perm`, Fisher–Yates), tokens (`tokens`: first uniform, then per step a
    // uniform u; u < 0.9 follows π, otherwise one more draw picks a uniform token)
    const E = rng.stream('embed').normals(V * V);
    const mlp = rng.stream('mlp');
    const Wg = mlp.normals(d * V, 1 / Math.sqrt(V));
    const Wu = mlp.normals(d * V, 1 / Math.sqrt(V));
    const W0 = rng.stream('w0').normals(V * d, W0_SD / Math.sqrt(d));
    const perm = rng.stream('perm').shuffle(Array.from({ length: V }, (_, i) => i));
    const tr = rng.stream('tokens');
    const T = N * CHUNK + 1;
    const tokens = new Int32Array(T);
    tokens[0] = tr.int(V);
    let follows = 0;
    for (let t = 1; t < T; t++) {
      if (tr.next() < FOLLOW_P) {
        tokens[t] = perm[tokens[t - 1]!]!;
        follows++;
      } else tokens[t] = tr.int(V);
    }
    const Zv = hiddenTable(E, Wg, Wu, V, d);
    const ntp = fastWeightPass(Zv, tokens, W0, V, d, eta, CHUNK, N, 'ntp');
    const recon = fastWeightPass(Zv, tokens, W0, V, d, eta, CHUNK, N, 'recon');
    const frozen = fastWeightPass(Zv, tokens, W0, V, d, 0, CHUNK, N, 'ntp');
    const q0 = Math.floor((3 * N) / 4);
    const lastQuarter = (a: number[]) => a.slice(q0).reduce((s, x) => s + x, 0) / (N - q0);
    let eqErr = 0;
    let wNorm = 0;
    for (let i = 0; i < V * d; i++) {
      eqErr += (ntp.W[i]! - W0[i]! - eta * ntp.outerSum[i]!) ** 2;
      wNorm += ntp.W[i]! ** 2;
    }
    let alignGap = 0;
    ntp.alignment.forEach((a, i) => (alignGap = Math.max(alignGap, Math.abs(a - ntp.gradEnergy[i]!) / Math.max(1, ntp.gradEnergy[i]!))));
    return {
      constants: { chunk: CHUNK, follow_probability: FOLLOW_P, w0_sd: `${W0_SD}/sqrt(dim)`, mlp_sd: '1/sqrt(out_dim)', vocabulary: 'out_dim' },
      result: {
        permutation: perm,
        empirical_follow_rate: follows / (T - 1),
        accuracy_per_chunk: { ntp: ntp.accuracy, recon: recon.accuracy, frozen: frozen.accuracy },
        last_quarter_chunks: N - q0,
        last_quarter_accuracy: { ntp: lastQuarter(ntp.accuracy), recon: lastQuarter(recon.accuracy), frozen: lastQuarter(frozen.accuracy) },
        oracle_accuracy: FOLLOW_P + (1 - FOLLOW_P) / V,
        alignment_gain: ntp.alignment,
        grad_energy: ntp.gradEnergy,
        fast_weight_norm_final: Math.sqrt(wNorm),
        fast_weight_norm_initial: Math.sqrt(W0.reduce((s, x) => s + x * x, 0)),
        chunkwise_equivalence_error: Math.sqrt(eqErr),
      },
      checks: { alignment_minus_energy_max_rel: alignGap },
    };
  },
});
