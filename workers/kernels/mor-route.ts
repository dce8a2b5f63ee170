/**
 * Mixture-of-Recursions with expert-choice routing (Bae et al. 2025, arXiv:2507.10524): one shared
 * block h ← h + s·tanh(W h) is applied up to R times; at step r a router s = σ(w_r·h) keeps the k_r
 * highest-scoring tokens among the survivors of step r−1 (hierarchical filtering), so depths are
 * token-specific and recursion-wise KV caching stores KV only for the active tokens.
 * Attention inside the block is not simulated; its cost is accounted analytically. Design: kernels-c §1.
 */
import { defineKernel } from '../kernel-def.js';
import { sigmoid } from '../lib/linalg.js';
import { canonicalJson, sha256Hex, roundNumber } from '../../src/lib/numbers.js';
import { int } from '../../src/lib/params.js';
import type { RngStreams } from '../../src/lib/prng.js';

export const HIDDEN = 16;

export interface MorInputs {
  N: number;
  R: number;
  /** initial token states h[t*d + i] */
  h: Float64Array;
  /** shared block W[i*d + j] (one matrix for every step: parameter sharing) */
  W: Float64Array;
  /** router vectors wr[(r−1)*d + i] */
  wr: Float64Array;
}

/** k_r = ceil(N·(R − r + 1)/R), r = 1..R: every token gets step 1, linearly fewer afterwards. */
export function capacitySchedule(N: number, R: number): number[] {
  return Array.from({ length: R }, (_, i) => Math.ceil((N * (R - i)) / R));
}

/**
 * Expert-choice recursion. Scores use each token's current state; selected tokens get the block
 * output scaled by their router score. Returns final states, depths and per-step score margins.
 */
export function routeExpertChoice(inp: MorInputs): { states: Float64Array; depths: Int32Array; margins: (number | null)[] } {
  const { N, R, W, wr } = inp;
  const d = HIDDEN;
  const h = Float64Array.from(inp.h);
  const depths = new Int32Array(N);
  const caps = capacitySchedule(N, R);
  const margins: (number | null)[] = [];
  let active = Array.from({ length: N }, (_, t) => t);
  const score = new Float64Array(N);
  const tmp = new Float64Array(d);
  for (let r = 0; r < R; r++) {
    for (const t of active) {
      let z = 0;
      for (let i = 0; i < d; i++) z += wr[r * d + i]! * h[t * d + i]!;
      score[t] = sigmoid(z);
    }
    // top-k_r with ties to the lower index
    active.sort((a, b) => score[b]! - score[a]! || a - b);
    const k = caps[r]!;
    margins.push(k < active.length ? score[active[k - 1]!]! - score[active[k]!]! : null);
    active = active.slice(0, k);
    for (const t of active) {
      const s = score[t]!;
      const o = t * d;
      for (let i = 0; i < d; i++) {
        let acc = 0;
        for (let j = 0; j < d; j++) acc += W[i * d + j]! * h[o + j]!;
        tmp[i] = Math.tanh(acc);
      }
      for (let i = 0; i < d; i++) h[o + i] = h[o + i]! + s * tmp[i]!;
      depths[t] = depths[t]! + 1;
    }
    active.sort((a, b) => a - b);
  }
  return { states: h, depths, margins };
}

/** Draw order: h (N×d, row-major) from `h`; W (d×d) from `block`; w_1..w_R from `router`; U (R×d) from `tc`. */
export function drawInputs(N: number, R: number, rng: RngStreams): MorInputs & { U: Float64Array } {
  const sd = 1 / Math.sqrt(HIDDEN);
  return {
    N,
    R,
    h: rng.stream('h').normals(N * HIDDEN),
    W: rng.stream('block').normals(HIDDEN * HIDDEN, sd),
    wr: rng.stream('router').normals(R * HIDDEN, sd),
    U: rng.stream('tc').normals(R * HIDDEN, sd),
  };
}

export default defineKernel({
  id: 'mor/route',
  version: 1,
  input: 'query',
  summary: 'Mixture-of-Recursions expert-choice routing: per-token recursion depths, capacity schedule and recursion-wise KV/attention savings',
  technique: 'Mixture-of-Recursions (shared recursive block, expert-choice router, recursion-wise KV caching)',
  references: ['arXiv:2507.10524'],
  honesty: 'The hierarchical top-k routing through a shared recursive block and its cost accounting are real; token states and weights are seeded Gaussian draws, not a trained model.',
  params: {
    num_tokens: int(1, 2048, 128).description('tokens routed'),
    max_recursion: int(1, 16, 4).description('most recursion steps a token can take'),
  },
  worstCase: { num_tokens: 2048, max_recursion: 16 },
  run({ num_tokens: N, max_recursion: R }, rng) {
    const inp = drawInputs(N, R, rng);
    const caps = capacitySchedule(N, R);
    const { states, depths, margins } = routeExpertChoice(inp);

    const activeCounts = new Array<number>(R).fill(0);
    const hist = new Array<number>(R).fill(0);
    let depthSum = 0;
    for (let t = 0; t < N; t++) {
      const dt = depths[t]!;
      depthSum += dt;
      for (let r = 0; r < dt; r++) activeCounts[r]!++;
      hist[dt - 1]!++;
    }
    const sumK = caps.reduce((a, b) => a + b, 0);
    const sumK2 = caps.reduce((a, b) => a + b * b, 0);

    // token-choice comparison: depth = argmax(U h_t) + 1 on the initial state, no capacity limit
    const tcHist = new Array<number>(R).fill(0);
    for (let t = 0; t < N; t++) {
      let best = 0;
      let bestV = -Infinity;
      for (let r = 0; r < R; r++) {
        let z = 0;
        for (let i = 0; i < HIDDEN; i++) z += inp.U[r * HIDDEN + i]! * inp.h[t * HIDDEN + i]!;
        if (z > bestV) {
          bestV = z;
          best = r;
        }
      }
      tcHist[best]!++;
    }
    const imbalance = Math.max(...tcHist) / (N / R);

    const stateDigest = sha256Hex(canonicalJson(Array.from(states, (v, i) => roundNumber(v, `states[${i}]`))));
    let nested = true;
    for (let r = 0; r < R; r++) if (activeCounts[r] !== caps[r]) nested = false;
    return {
      constants: {
        hidden: HIDDEN,
        block: 'h <- h + s*tanh(W h), W ~ N(0, 1/d), shared by all steps',
        router: 's = sigmoid(w_r . h), w_r ~ N(0, 1/d), one per step',
        capacity: 'k_r = ceil(N (R - r + 1) / R)',
        token_choice: 'depth = argmax(U h_0) + 1, U ~ N(0, 1/d)',
      },
      result: {
        capacities: caps,
        active_counts: activeCounts,
        depth_histogram: hist,
        mean_depth: depthSum / N,
        depths: Array.from(depths.subarray(0, 256)),
        compute_ratio: sumK / (N * R),
        kv_cache_ratio: sumK / (N * R),
        attention_pair_ratio: sumK2 / (N * N * R),
        block_applications: { mor: sumK, vanilla: N * R },
        attention_pairs: { mor: sumK2, vanilla: N * N * R },
        score_margin: margins,
        token_choice: { depth_histogram: tcHist, imbalance },
        state_digest: stateDigest,
      },
      checks: {
        active_counts_match_capacities: nested,
        depth_sum_equals_capacity_sum: depthSum === sumK,
        min_score_margin: margins.reduce<number | null>((m, x) => (x === null ? m : m === null ? x : Math.min(m, x)), null),
      },
    };
  },
});
