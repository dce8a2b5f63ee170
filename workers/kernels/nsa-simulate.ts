/**
 * DeepSeek Native Sparse Attention (Yuan et al. 2025, arXiv:2502.11089): per query, three branches
 * (attention over compressed block summaries, over the fine tokens of the top-n blocks ranked by the
 * compressed scores, and over a sliding window) mixed by sigmoid gates of the query. NSA always
 * keeps the initial and the local blocks among the selected ones. Design: kernels-c §15.
 *
 * Simplifications (the note's): single causal head; compression = mean pooling (the parameter-free
 * case of NSA's learned compressor); compression block = selection block = stride = `block`, so the
 * selection scores are the compressed scores themselves. Quadratic full attention is the reference,
 * evaluated on Q = min(L, 64) evenly spaced query rows (kernels-c C6).
 */
import { defineKernel } from '../kernel-def.js';
import { sigmoid } from '../lib/linalg.js';
import { subsetWeights } from '../lib/attention.js';
import { evenlySpaced } from '../../src/lib/numbers.js';
import { int } from '../../src/lib/params.js';

const MAX_QUERIES = 64;

/**
 * Softmax attention of query q = Q[qOff…qOff+d) over the rows K[j], V[j] for j in idx[0…n), in that
 * order: out = Σ a_j V_j, a = softmax(scale·q·K_j). The full reference and the selection branch both
 * go through here, so a selection that covers every past token gives bit-identical output.
 * `weights[j]` receives a_j when given.
 */
function attendIdx(
  Q: Float64Array,
  qOff: number,
  K: Float64Array,
  V: Float64Array,
  idx: Int32Array,
  n: number,
  d: number,
  scale: number,
  out: Float64Array,
  scratch: Float64Array,
  weights?: Float64Array,
): void {
  out.fill(0);
  if (n === 0) return; // an empty branch contributes nothing (e.g. no complete block yet)
  subsetWeights(Q, qOff, K, idx, n, d, scale, scratch);
  for (let m = 0; m < n; m++) {
    const a = scratch[m]!;
    if (weights) weights[idx[m]!] = a;
    const o = idx[m]! * d;
    for (let i = 0; i < d; i++) out[i] = out[i]! + a * V[o + i]!;
  }
}

export default defineKernel({
  id: 'nsa/simulate',
  version: 2,
  informative: {
    max_abs_diff_full_selection: 'rounding-level gap between NSA with every block selected and full attention, computed inside the kernel; bounded by a fixed tolerance in the tests',
  },
  input: 'query',
  summary: 'Native Sparse Attention: gated compressed, top-n selected-block and sliding-window branches vs full causal attention (coverage, density, error)',
  technique: 'Native Sparse Attention (compression + blockwise selection + sliding window, gated)',
  references: ['arXiv:2502.11089'],
  honesty:
    'The three NSA branches, the block selection, the gates and the full-attention reference are computed exactly; queries, keys, values and gate weights are seeded Gaussian draws (no trained model), and compression is mean pooling.',
  params: {
    seq_len: int(16, 1024, 512).description('sequence length (tokens)'),
    dim: int(2, 32, 16).description('head width'),
    block: int(2, 128, 16).description('block size of the compressed and selected branches'),
    top_n: int(1, 64, 8).description('blocks selected per query'),
    window: int(1, 1024, 32).description('sliding-window width'),
  },
  // L = 1024, dim 32, window 1024 at every block size measured 19–23 ms warm here; block 2 (512 block
  // means to score and rank per query) was the slowest
  worstCase: { seq_len: 1024, dim: 32, block: 2, top_n: 64, window: 1024 },
  run({ seq_len: L, dim: d, block: B, top_n: topN, window: W }, rng) {
    // draws: Q, K, V as L rows of d normals each (streams `q`, `k`, `v`); gate weights w_cmp, w_slc,
    // w_win as 3 rows of d normals · 1/√d (stream `gates`)
    const Q = rng.stream('q').normals(L * d);
    const K = rng.stream('k').normals(L * d);
    const V = rng.stream('v').normals(L * d);
    const Wg = rng.stream('gates').normals(3 * d, 1 / Math.sqrt(d));
    const scale = 1 / Math.sqrt(d);

    // compressed keys/values: means of the complete blocks
    const nBlocks = Math.floor(L / B);
    const Kc = new Float64Array(nBlocks * d);
    const Vc = new Float64Array(nBlocks * d);
    for (let b = 0; b < nBlocks; b++) {
      for (let j = b * B; j < (b + 1) * B; j++) {
        for (let i = 0; i < d; i++) {
          Kc[b * d + i] = Kc[b * d + i]! + K[j * d + i]!;
          Vc[b * d + i] = Vc[b * d + i]! + V[j * d + i]!;
        }
      }
      for (let i = 0; i < d; i++) {
        Kc[b * d + i] = Kc[b * d + i]! / B;
        Vc[b * d + i] = Vc[b * d + i]! / B;
      }
    }

    const nq = Math.min(L, MAX_QUERIES);
    const rows = evenlySpaced(L, nq);
    const oC = new Float64Array(d);
    const oS = new Float64Array(d);
    const oW = new Float64Array(d);
    const oF = new Float64Array(d);
    const scratch = new Float64Array(L);
    const weights = new Float64Array(L);
    const idx = new Int32Array(L);
    const blockIdx = new Int32Array(nBlocks);
    const cmpProb = new Float64Array(nBlocks);
    const inSet = new Uint8Array(L);
    const coverage: number[] = [];
    const compressedTokens: number[] = [];
    const tokensAttended: number[] = [];
    const selectedTokens: number[] = [];
    let densitySum = 0;
    const gateSum = [0, 0, 0];
    let maxDiffFullSel: number | null = null;
    let fullSelQueries = 0;
    let errNum = 0;
    let errDen = 0;
    let lastSelected: number[] = [];

    for (const t of rows) {
      const qOff = t * d;
      const gates = [0, 1, 2].map((g) => {
        let acc = 0;
        for (let i = 0; i < d; i++) acc += Wg[g * d + i]! * Q[qOff + i]!;
        return sigmoid(acc);
      });

      // 1. compressed branch over the complete blocks: (b+1)·B ≤ t+1
      const nC = Math.floor((t + 1) / B);
      for (let b = 0; b < nC; b++) blockIdx[b] = b;
      attendIdx(Q, qOff, Kc, Vc, blockIdx, nC, d, scale, oC, scratch, cmpProb);

      // 2. selection: forced current, previous, initial; then the rest by importance (ties → lower index)
      const cur = Math.floor(t / B);
      const priority: number[] = [];
      for (const b of [cur, cur - 1, 0]) if (b >= 0 && !priority.includes(b)) priority.push(b);
      const rest: number[] = [];
      for (let b = 1; b < cur - 1; b++) rest.push(b); // every such block is complete, so it has a score
      rest.sort((a, b) => cmpProb[b]! - cmpProb[a]! || a - b);
      const selected = priority.concat(rest).slice(0, topN);
      const sortedSel = selected.slice().sort((a, b) => a - b); // tokens in position order (bit-identical to full when all are chosen)
      let n = 0;
      inSet.fill(0, 0, t + 1);
      for (const b of sortedSel) for (let j = b * B; j < Math.min((b + 1) * B, t + 1); j++) {
        idx[n++] = j;
        inSet[j] = 1;
      }
      const nSel = n;
      attendIdx(Q, qOff, K, V, idx, nSel, d, scale, oS, scratch);

      // 3. sliding window over the last W tokens
      const w0 = Math.max(0, t - W + 1);
      n = 0;
      for (let j = w0; j <= t; j++) {
        idx[n++] = j;
        inSet[j] = 1;
      }
      const nWin = n;
      attendIdx(Q, qOff, K, V, idx, nWin, d, scale, oW, scratch);

      // 4. full causal reference
      for (let j = 0; j <= t; j++) idx[j] = j;
      attendIdx(Q, qOff, K, V, idx, t + 1, d, scale, oF, scratch, weights);
      let cov = 0;
      for (let j = 0; j <= t; j++) if (inSet[j]) cov += weights[j]!;

      if (selected.length === cur + 1) {
        fullSelQueries++;
        let m = 0;
        for (let i = 0; i < d; i++) m = Math.max(m, Math.abs(oS[i]! - oF[i]!));
        maxDiffFullSel = Math.max(maxDiffFullSel ?? 0, m);
      }
      for (let i = 0; i < d; i++) {
        const o = gates[0]! * oC[i]! + gates[1]! * oS[i]! + gates[2]! * oW[i]!;
        errNum += (o - oF[i]!) ** 2;
        errDen += oF[i]! ** 2;
      }
      gates.forEach((g, i) => (gateSum[i] = gateSum[i]! + g));
      const attended = nC + nSel + nWin;
      coverage.push(cov);
      compressedTokens.push(nC);
      selectedTokens.push(nSel);
      tokensAttended.push(attended);
      densitySum += attended / (t + 1);
      lastSelected = selected;
    }

    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    return {
      constants: {
        heads: 1,
        causal: true,
        compression: 'mean pooling',
        compression_block: B,
        selection_block: B,
        stride: B,
        gate_weight_sd: 1 / Math.sqrt(d),
        score_scale: scale,
        max_queries: MAX_QUERIES,
      },
      result: {
        queries_evaluated: nq,
        query_indices: rows,
        mean_coverage: mean(coverage),
        coverage,
        selected_blocks_last_query: lastSelected,
        compressed_tokens: compressedTokens,
        selected_tokens: selectedTokens,
        tokens_attended: tokensAttended,
        tokens_attended_mean: mean(tokensAttended),
        density: densitySum / nq,
        gates_mean: { cmp: gateSum[0]! / nq, slc: gateSum[1]! / nq, win: gateSum[2]! / nq },
        queries_with_full_selection: fullSelQueries,
        max_abs_diff_full_selection: maxDiffFullSel,
        output_rel_error: errDen > 0 ? Math.sqrt(errNum / errDen) : null,
      },
      checks: {
        coverage_in_unit_interval: coverage.every((c) => c >= 0 && c <= 1 + 1e-12),
        tokens_within_bound: rows.every((t, k) => tokensAttended[k]! <= Math.floor((t + 1) / B) + Math.min(topN * B, t + 1) + Math.min(W, t + 1)),
      },
    };
  },
});
