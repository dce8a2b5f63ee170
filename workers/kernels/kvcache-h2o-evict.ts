/**
 * H2O, the Heavy-Hitter Oracle (Zhang et al. 2023, arXiv:2306.14048): a KV cache of fixed budget
 * keeps the most recent tokens plus the "heavy hitters" with the largest accumulated attention,
 * evicting greedily one token per decoding step. Compared with a local window of the same budget
 * on a synthetic sequence with planted heavy-hitter keys. Design: kernels-c §7.
 */
import { defineKernel } from '../kernel-def.js';
import { subsetWeights } from '../lib/attention.js';
import { evenlySpaced, sampleSeries } from '../../src/lib/numbers.js';
import { int } from '../../src/lib/params.js';

const D = 8;
const SCALE = 1 / Math.sqrt(D);
const QUERY_SHIFT = 2; // every query gets +2u
const HEAVY_SHIFT = 4; // planted keys get +4u, so they draw ~e^{8/√8} ≈ 17× the weight
const EVAL_MAX = 128;
const TRACE_MAX = 64;

/**
 * Scores s_j = scale·q_t·k_j for j ≤ t into `e` as exp(s_j − max) (max over all j ≤ t), and the
 * unnormalised sums Z and Σ e_j v_j over `members` (ascending positions). Full attention passes all
 * positions, a cache its own, in the same order: a cache holding every token then reproduces the
 * full result bit for bit (mass exactly 1, error exactly 0).
 */
function restrictedAttention(e: Float64Array, members: ArrayLike<number>, count: number, V: Float64Array, out: Float64Array): number {
  let z = 0;
  out.fill(0);
  for (let m = 0; m < count; m++) {
    const j = members[m]!;
    const w = e[j]!;
    z += w;
    for (let c = 0; c < D; c++) out[c] = out[c]! + w * V[j * D + c]!;
  }
  for (let c = 0; c < D; c++) out[c] = out[c]! / z;
  return z;
}

/** Attention of q_t over the cached keys (t itself included), added to their accumulated scores. */
function accumulate(Q: Float64Array, K: Float64Array, t: number, cache: Int32Array, size: number, sc: Float64Array, acc: Float64Array): void {
  subsetWeights(Q, t * D, K, cache, size, D, SCALE, sc);
  for (let m = 0; m < size; m++) acc[cache[m]!] = acc[cache[m]!]! + sc[m]!;
}

/** Slot of the lowest accumulated score among cached positions ≤ limit (first on ties: the oldest); −1 if none. */
function argminCandidate(cache: Int32Array, size: number, limit: number, acc: Float64Array): number {
  let best = -1;
  let bestScore = Infinity;
  for (let m = 0; m < size && cache[m]! <= limit; m++) {
    const a = acc[cache[m]!]!;
    if (best < 0 || a < bestScore) {
      best = m;
      bestScore = a;
    }
  }
  return best;
}

export default defineKernel({
  id: 'kvcache/h2o-evict',
  version: 1,
  input: 'query',
  summary: 'H2O heavy-hitter KV-cache eviction (recent window + greedy accumulated-attention heavy hitters) against a local window of the same budget',
  technique: 'Heavy-Hitter Oracle (H2O) greedy KV-cache eviction',
  references: ['arXiv:2306.14048'],
  honesty: 'The eviction policy, the attention and the retained-mass and output-error measurements are real; queries, keys, values and the planted heavy hitters are seeded synthetic draws, not a trained model.',
  params: {
    seq_len: int(16, 2048, 1024).description('tokens generated'),
    budget: int(2, 512, 256).description('KV-cache slots kept'),
    recent: int(0, 512, 64).description('slots reserved for the most recent tokens (at most budget)'),
    n_heavy: int(0, 256, 32).description('planted heavy-hitter tokens (at most seq_len)'),
  },
  rules: ['recent must not exceed budget', 'n_heavy must not exceed seq_len'],
  constraints: (p) => [
    ...(p.recent > p.budget ? [{ param: 'recent', msg: 'recent must not exceed budget' }] : []),
    ...(p.n_heavy > p.seq_len ? [{ param: 'n_heavy', msg: 'n_heavy must not exceed seq_len' }] : []),
  ],
  // recent = 0 makes every cached token but the newest a candidate: the longest argmin scans
  worstCase: { seq_len: 2048, budget: 512, recent: 0, n_heavy: 256 },
  run({ seq_len: L, budget, recent, n_heavy }, rng) {
    // draws: Q, K, V (L·d normals each, streams `q`, `k`, `v`, row-major, prefix-stable),
    // u (d normals, stream `u`, normalised), heavy positions (partial Fisher–Yates, stream `heavy`)
    const Q = rng.stream('q').normals(L * D);
    const K = rng.stream('k').normals(L * D);
    const V = rng.stream('v').normals(L * D);
    const uRaw = rng.stream('u').normals(D);
    const uNorm = Math.hypot(...uRaw);
    const u = uRaw.map((x) => x / uNorm);
    const heavy = rng.stream('heavy').sample(L, n_heavy).sort((a, b) => a - b);
    const isHeavy = new Uint8Array(L);
    for (const h of heavy) isHeavy[h] = 1;
    for (let t = 0; t < L; t++) {
      for (let c = 0; c < D; c++) {
        Q[t * D + c] = Q[t * D + c]! + QUERY_SHIFT * u[c]!;
        if (isHeavy[t]) K[t * D + c] = K[t * D + c]! + HEAVY_SHIFT * u[c]!;
      }
    }

    const E = Math.min(L, EVAL_MAX);
    const evalSteps = evenlySpaced(L, E);
    const isEval = new Int32Array(L).fill(-1);
    evalSteps.forEach((t, k) => (isEval[t] = k));

    // the H2O cache: positions in ascending order (insertion order is position order)
    const cache = new Int32Array(budget + 1);
    let size = 0;
    const acc = new Float64Array(L); // accumulated attention per position
    const sc = new Float64Array(budget + 1);
    const all = Int32Array.from({ length: L }, (_, i) => i);
    const e = new Float64Array(L);
    const oFull = new Float64Array(D);
    const oCache = new Float64Array(D);
    const diff = (o: Float64Array) => {
      let num = 0;
      let den = 0;
      for (let c = 0; c < D; c++) {
        num += (o[c]! - oFull[c]!) ** 2;
        den += oFull[c]! ** 2;
      }
      return den > 0 ? Math.sqrt(num / den) : 0;
    };

    let evictions = 0;
    let maxSize = 0;
    const trace: { step: number; evicted: number; evicted_score: number; min_candidate_score: number | null }[] = [];
    const massH2o = new Float64Array(E);
    const massLocal = new Float64Array(E);
    const errH2o = new Float64Array(E);
    const errLocal = new Float64Array(E);

    for (let t = 0; t < L; t++) {
      cache[size++] = t;
      accumulate(Q, K, t, cache, size, sc, acc);

      if (size > budget) {
        // candidates: j ≤ t − recent (outside the recent window); strict < keeps the oldest on ties
        const limit = t - recent;
        let best = argminCandidate(cache, size, limit, acc);
        let minCandidate = Infinity;
        for (let m = 0; m < size && cache[m]! <= limit; m++) minCandidate = Math.min(minCandidate, acc[cache[m]!]!);
        if (best < 0) best = 0; // no candidate: evict the oldest (unreachable while recent ≤ budget)
        const evicted = cache[best]!;
        if (trace.length < TRACE_MAX) {
          trace.push({ step: t, evicted, evicted_score: acc[evicted]!, min_candidate_score: Number.isFinite(minCandidate) ? minCandidate : null });
        }
        cache.copyWithin(best, best + 1, size);
        size--;
        evictions++;
      }
      maxSize = Math.max(maxSize, size);

      const k = isEval[t]!;
      if (k >= 0) {
        // full causal attention for q_t; both caches restricted to their members, same e_j
        let mx = -Infinity;
        for (let j = 0; j <= t; j++) {
          let s = 0;
          for (let c = 0; c < D; c++) s += Q[t * D + c]! * K[j * D + c]!;
          e[j] = s * SCALE;
          if (e[j]! > mx) mx = e[j]!;
        }
        for (let j = 0; j <= t; j++) e[j] = Math.exp(e[j]! - mx);
        const zFull = restrictedAttention(e, all, t + 1, V, oFull);
        const zH = restrictedAttention(e, cache, size, V, oCache);
        massH2o[k] = zH / zFull;
        errH2o[k] = diff(oCache);
        const localSize = Math.min(budget, t + 1);
        const zL = restrictedAttention(e, all.subarray(t + 1 - localSize), localSize, V, oCache);
        massLocal[k] = zL / zFull;
        errLocal[k] = diff(oCache);
      }
    }

    const finalCache = Array.from(cache.subarray(0, size));
    const localStart = L - Math.min(budget, L);
    const heldH2o = heavy.filter((h) => finalCache.includes(h)).length;
    const heldLocal = heavy.filter((h) => h >= localStart).length;
    const mean = (a: Float64Array) => a.reduce((s, x) => s + x, 0) / a.length;
    const fc = sampleSeries(finalCache);
    const recentTail = Math.min(recent, L);
    return {
      constants: { d: D, scale: SCALE, query_shift: QUERY_SHIFT, heavy_key_shift: HEAVY_SHIFT, eval_steps_max: EVAL_MAX, trace_max: TRACE_MAX },
      result: {
        mass_retained: { h2o: mean(massH2o), local: mean(massLocal) },
        rel_error: { h2o: mean(errH2o), local: mean(errLocal) },
        heavy_recall: n_heavy > 0 ? { h2o: heldH2o / n_heavy, local: heldLocal / n_heavy } : null,
        heavy_recall_reason: n_heavy > 0 ? null : 'n_heavy = 0: no planted heavy hitters',
        heavy_positions: heavy,
        evictions,
        max_cache_size: maxSize,
        eval_steps: E,
        mass_curve: { step: evalSteps, h2o: massH2o, local: massLocal },
        eviction_trace: trace,
        final_cache: fc.values,
        final_cache_index: fc.index,
        final_cache_size: size,
        final_cache_digest: fc.digest,
      },
      checks: {
        cache_size_is_min_budget_len: maxSize === Math.min(budget, L),
        evictions_closed_form: evictions === Math.max(0, L - budget),
        recent_window_cached: finalCache.slice(size - recentTail).every((p, i) => p === L - recentTail + i),
      },
    };
  },
});
