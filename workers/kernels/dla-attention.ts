/**
 * Dynamic Linear Attention (Wang et al., arXiv:2606.10650): several linear-attention states
 * (φ = elu+1, Katharopoulos et al. arXiv:2006.16236) instead of one. A new state opens where the
 * key drifts from the open state's mean key (information-aware boundaries); when the
 * chronological cache exceeds its capacity, the lowest-information state merges into its
 * predecessor (merging is addition). The readout mixes per-state linear reads
 * r_s = S_sᵀφ(q)/(z_sᵀφ(q)) with weights softmax_s(q·k̄_s/√d + ln n_s): one state per token is
 * exact causal softmax attention, one state in total is exact causal linear attention.
 * Design: kernels-a §1.8.
 */
import { defineKernel } from '../kernel-def.js';
import { causalSoftmaxAttention, headRows, maxAbsDiff } from '../lib/attention.js';
import { int, num } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';

export const KEY_NOISE = 0.3;
export const OUTPUT_ROWS = 8;

/** elu(x) + 1: x + 1 for x > 0, eˣ otherwise. */
export const phi = (x: number): number => (x > 0 ? x + 1 : Math.exp(x));

export interface DlaTokens {
  T: number;
  d: number;
  /** q[t·d + i], k[t·d + i], v[t·d + i]. */
  q: Float64Array;
  k: Float64Array;
  v: Float64Array;
  /** Positions where the key regime switched (after t = 0). */
  switches: number[];
}

/**
 * Draw order on one stream: the initial base (d normals); then per token t: the switch uniform,
 * a new base (d normals) only if it switched, q (d normals), the key noise (d normals), v (d normals).
 */
export function drawTokens(rng: Rng, T: number, d: number, switchProb: number): DlaTokens {
  let base = rng.normals(d);
  const q = new Float64Array(T * d);
  const k = new Float64Array(T * d);
  const v = new Float64Array(T * d);
  const switches: number[] = [];
  for (let t = 0; t < T; t++) {
    if (rng.next() < switchProb) {
      base = rng.normals(d);
      switches.push(t);
    }
    q.set(rng.normals(d), t * d);
    const noise = rng.normals(d, KEY_NOISE);
    for (let i = 0; i < d; i++) k[t * d + i] = base[i]! + noise[i]!;
    v.set(rng.normals(d), t * d);
  }
  return { T, d, q, k, v, switches };
}

export interface LinearState {
  start: number;
  end: number;
  count: number;
  /** Drift at opening; null for the first state (no predecessor to compare with). */
  info: number | null;
  /** S[i·d + j] = Σ φ(k)_i v_j. */
  S: Float64Array;
  z: Float64Array;
  keySum: Float64Array;
}

export interface DlaRun {
  out: Float64Array;
  states: LinearState[];
  opened: number;
  merged: number;
  maxStates: number;
  /** Span partition held after every token (chronological, contiguous, covering 0…t). */
  partitionOk: boolean;
}

function newState(t: number, d: number, info: number | null): LinearState {
  return { start: t, end: t, count: 0, info, S: new Float64Array(d * d), z: new Float64Array(d), keySum: new Float64Array(d) };
}

function cosine(a: Float64Array, aOff: number, b: Float64Array, d: number): number {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < d; i++) {
    ab += a[aOff + i]! * b[i]!;
    aa += a[aOff + i]! ** 2;
    bb += b[i]! ** 2;
  }
  return aa > 0 && bb > 0 ? Math.max(-1, Math.min(1, ab / Math.sqrt(aa * bb))) : 0;
}

export function runDla(tok: DlaTokens, capacity: number, tau: number): DlaRun {
  const { T, d } = tok;
  const states: LinearState[] = [];
  const out = new Float64Array(T * d);
  let opened = 0;
  let merged = 0;
  let maxStates = 0;
  let partitionOk = true;
  const fk = new Float64Array(d);
  const fq = new Float64Array(d);
  const read = new Float64Array(d);
  const scale = 1 / Math.sqrt(d);
  for (let t = 0; t < T; t++) {
    // 1–2. boundary: drift of k_t from the newest state's mean key
    const open = states[states.length - 1];
    let drift: number | null = null;
    if (open) {
      const mean = open.keySum.map((s) => s / open.count);
      drift = 1 - cosine(tok.k, t * d, mean, d);
    }
    if (!open || drift! > tau) {
      states.push(newState(t, d, drift));
      opened++;
    }
    // 3. add the token to the newest state
    const s = states[states.length - 1]!;
    for (let i = 0; i < d; i++) fk[i] = phi(tok.k[t * d + i]!);
    for (let i = 0; i < d; i++) {
      for (let j = 0; j < d; j++) s.S[i * d + j] = s.S[i * d + j]! + fk[i]! * tok.v[t * d + j]!;
      s.z[i] = s.z[i]! + fk[i]!;
      s.keySum[i] = s.keySum[i]! + tok.k[t * d + i]!;
    }
    s.count++;
    s.end = t;
    // 4. capacity: merge the lowest-information state (s ≥ 1, earliest on ties) into its predecessor
    while (states.length > capacity) {
      let best = 1;
      for (let c = 2; c < states.length; c++) if (states[c]!.info! < states[best]!.info!) best = c;
      const into = states[best - 1]!;
      const gone = states[best]!;
      for (let i = 0; i < d * d; i++) into.S[i] = into.S[i]! + gone.S[i]!;
      for (let i = 0; i < d; i++) {
        into.z[i] = into.z[i]! + gone.z[i]!;
        into.keySum[i] = into.keySum[i]! + gone.keySum[i]!;
      }
      into.count += gone.count;
      into.end = gone.end;
      states.splice(best, 1);
      merged++;
    }
    maxStates = Math.max(maxStates, states.length);
    let next = 0;
    for (const st of states) {
      if (st.start !== next || st.end < st.start) partitionOk = false;
      next = st.end + 1;
    }
    if (next !== t + 1) partitionOk = false;
    // 5. readout: mix of per-state linear reads, weights softmax(q·k̄_s/√d + ln n_s)
    for (let i = 0; i < d; i++) fq[i] = phi(tok.q[t * d + i]!);
    const logits = states.map((st) => {
      let qk = 0;
      for (let i = 0; i < d; i++) qk += tok.q[t * d + i]! * (st.keySum[i]! / st.count);
      return qk * scale + Math.log(st.count);
    });
    const max = Math.max(...logits);
    const w = logits.map((l) => Math.exp(l - max));
    const wSum = w.reduce((a, b) => a + b, 0);
    states.forEach((st, si) => {
      let den = 0;
      for (let i = 0; i < d; i++) den += st.z[i]! * fq[i]!;
      read.fill(0);
      for (let i = 0; i < d; i++) {
        const f = fq[i]!;
        for (let j = 0; j < d; j++) read[j] = read[j]! + st.S[i * d + j]! * f;
      }
      const a = w[si]! / wSum;
      for (let j = 0; j < d; j++) out[t * d + j] = out[t * d + j]! + (a * read[j]!) / den;
    });
  }
  return { out, states, opened, merged, maxStates, partitionOk };
}

/** Causal linear attention with φ: o_t = (Σ_{j≤t} φ(k_j)v_jᵀ)ᵀφ(q_t) / (Σ_{j≤t} φ(k_j))ᵀφ(q_t). */
export function causalLinearAttention(tok: DlaTokens): { out: Float64Array; S: Float64Array; z: Float64Array } {
  const { T, d } = tok;
  const S = new Float64Array(d * d);
  const z = new Float64Array(d);
  const out = new Float64Array(T * d);
  for (let t = 0; t < T; t++) {
    for (let i = 0; i < d; i++) {
      const f = phi(tok.k[t * d + i]!);
      for (let j = 0; j < d; j++) S[i * d + j] = S[i * d + j]! + f * tok.v[t * d + j]!;
      z[i] = z[i]! + f;
    }
    let den = 0;
    for (let i = 0; i < d; i++) den += z[i]! * phi(tok.q[t * d + i]!);
    for (let j = 0; j < d; j++) {
      let num = 0;
      for (let i = 0; i < d; i++) num += S[i * d + j]! * phi(tok.q[t * d + i]!);
      out[t * d + j] = num / den;
    }
  }
  return { out, S, z };
}

export default defineKernel({
  id: 'dla/attention',
  version: 1,
  input: 'query',
  summary: 'Dynamic Linear Attention: drift-triggered linear-attention states under a capacity bound, between causal softmax and linear attention',
  technique: 'dynamic linear attention (multi-state elu+1 linear attention, information-aware merging, capacity-bounded cache)',
  references: ['arXiv:2606.10650', 'arXiv:2006.16236', 'arXiv:1706.03762'],
  honesty: 'The state construction, merging, readout and both reference attentions are computed exactly; queries, keys and values are seeded Gaussian draws with synthetic regime switches.',
  params: {
    seq_len: int(8, 256, 64).description('sequence length (tokens)'),
    d: int(2, 16, 8).description('head width'),
    capacity: int(1, 64, 8).description('most linear-attention states kept at once'),
    tau: num(-1, 2, 0.3).description('drift threshold that opens a new state'),
    switch_prob: num(0, 1, 0.08).description('probability per token that the synthetic source switches regime'),
  },
  // costliest: every token its own state (tau = −1) with the largest cache, so every readout mixes 64 states
  worstCase: { seq_len: 256, d: 16, capacity: 64, tau: -1, switch_prob: 1 },
  run({ seq_len: T, d, capacity: C, tau, switch_prob: switchProb }, rng) {
    // draws: stream `tokens`, see drawTokens (base; per token: switch uniform, [base], q, key noise, v)
    const tok = drawTokens(rng.stream('tokens'), T, d, switchProb);
    const dla = runDla(tok, C, tau);
    const soft = causalSoftmaxAttention(tok.q, tok.k, tok.v, T, d, d).out;
    const lin = causalLinearAttention(tok);
    // conservation: Σ_s S_s and Σ_s z_s equal the single full linear-attention state
    const sumS = new Float64Array(d * d);
    const sumZ = new Float64Array(d);
    for (const st of dla.states) {
      for (let i = 0; i < d * d; i++) sumS[i] = sumS[i]! + st.S[i]!;
      for (let i = 0; i < d; i++) sumZ[i] = sumZ[i]! + st.z[i]!;
    }
    const consS = maxAbsDiff(sumS, lin.S);
    const consZ = maxAbsDiff(sumZ, lin.z);
    const errSoft = maxAbsDiff(dla.out, soft);
    const errLin = maxAbsDiff(dla.out, lin.out);
    return {
      constants: { feature_map: 'elu+1', key_noise: KEY_NOISE, output_rows: OUTPUT_ROWS, drift: '1 - cos(k_t, mean key of the newest state)' },
      result: {
        states: dla.states.map((s) => ({ start: s.start, end: s.end, tokens: s.count, info: s.info })),
        events: { opened: dla.opened, merged: dla.merged },
        regime_switches: tok.switches.length,
        error_vs_softmax: errSoft,
        error_vs_linear: errLin,
        memory_floats: { dla: C * (d * d + 2 * d + 1), softmax_kv: 2 * T * d, held_at_end: dla.states.length * (d * d + 2 * d + 1) },
        output_head: headRows(dla.out, d, OUTPUT_ROWS),
      },
      checks: {
        conservation_S: consS,
        conservation_z: consZ,
        partition_ok: dla.partitionOk,
        max_states: dla.maxStates,
        within_capacity: dla.maxStates <= C,
        opened_minus_merged_eq_states: dla.opened - dla.merged === dla.states.length,
      },
    };
  },
});
