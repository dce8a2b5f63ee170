/**
 * LLaDA's reverse process for a masked diffusion language model (Nie et al. 2025, arXiv:2502.09992;
 * masked diffusion LMs: Sahoo et al. 2024, MDLM, arXiv:2406.07524). Generation starts fully masked;
 * each step predicts every masked token and, under low-confidence remasking, keeps the most
 * confident predictions so that the number of masks follows the linear schedule
 * L − round(L·s/steps). Design: kernels-c §18.
 *
 * The data distribution is a first-order Markov chain, so the mask predictor can be the exact
 * posterior p(x_i | unmasked tokens), computed by forward–backward: a perfect denoiser for this
 * data, which isolates the sampler (schedule and remasking rule) from model error.
 */
import { defineKernel } from '../kernel-def.js';
import { softmax } from '../lib/linalg.js';
import { int } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';

const V = 16;
const LOGIT_SCALE = 2;
const TRACE_STEPS = 64;

/**
 * Posterior marginals p(x_i = v | observed tokens) of a Markov chain with start distribution `pi0`
 * and row-stochastic `T` (V×V, row-major); obs[i] = token or −1 when masked. Returns L×V row-major.
 * alpha and beta are renormalised at every position (a 256-token chain underflows otherwise).
 */
export function chainMarginals(pi0: ArrayLike<number>, T: ArrayLike<number>, v: number, obs: ArrayLike<number>): Float64Array {
  const L = obs.length;
  const alpha = new Float64Array(L * v);
  const beta = new Float64Array(L * v);
  for (let x = 0; x < v; x++) alpha[x] = obs[0]! < 0 || obs[0] === x ? pi0[x]! : 0;
  normalise(alpha, 0, v);
  for (let i = 1; i < L; i++) {
    const o = i * v;
    const p = o - v;
    const c = obs[i]!;
    if (c >= 0) {
      // an observed token: only its own entry survives, and it is normalised to 1 anyway
      alpha[o + c] = 1;
      continue;
    }
    for (let a = 0; a < v; a++) {
      const w = alpha[p + a]!;
      if (w === 0) continue;
      const r = a * v;
      for (let b = 0; b < v; b++) alpha[o + b] = alpha[o + b]! + w * T[r + b]!;
    }
    normalise(alpha, o, v);
  }
  // beta_i = P(observed tokens after i | x_i) is exactly 1 while nothing after i is observed; set it so
  // rather than summing rows of T (whose float sums are 1 ± ulp and would break exact ties in the argmax)
  let seen = false;
  for (let x = 0; x < v; x++) beta[(L - 1) * v + x] = 1;
  for (let i = L - 2; i >= 0; i--) {
    const o = i * v;
    const n = o + v;
    const c = obs[i + 1]!;
    if (c >= 0) seen = true;
    if (!seen) {
      for (let a = 0; a < v; a++) beta[o + a] = 1;
      continue;
    }
    for (let a = 0; a < v; a++) {
      const r = a * v;
      if (c >= 0) beta[o + a] = T[r + c]! * beta[n + c]!;
      else {
        let s = 0;
        for (let b = 0; b < v; b++) s += T[r + b]! * beta[n + b]!;
        beta[o + a] = s;
      }
    }
    normalise(beta, o, v);
  }
  const out = new Float64Array(L * v);
  for (let i = 0; i < L; i++) {
    const o = i * v;
    for (let x = 0; x < v; x++) out[o + x] = alpha[o + x]! * beta[o + x]!;
    normalise(out, o, v);
  }
  return out;
}

function normalise(a: Float64Array, off: number, n: number): void {
  let s = 0;
  for (let i = 0; i < n; i++) s += a[off + i]!;
  for (let i = 0; i < n; i++) a[off + i] = a[off + i]! / s;
}

/** log p(tokens) under the chain. */
export function chainLogLik(pi0: ArrayLike<number>, T: ArrayLike<number>, v: number, tokens: ArrayLike<number>): number {
  let ll = Math.log(pi0[tokens[0]!]!);
  for (let i = 1; i < tokens.length; i++) ll += Math.log(T[tokens[i - 1]! * v + tokens[i]!]!);
  return ll;
}

interface Decode {
  tokens: Int32Array;
  commitStep: Int32Array;
  maskedAfter: number[];
  committed: number[];
  meanConfidence: number[];
  minCommitted: number[];
  maxLeftMasked: (number | null)[];
}

/** The reverse process: `remask` null = low-confidence remasking, otherwise random remasking from that stream. */
function decode(pi0: Float64Array, T: Float64Array, L: number, steps: number, remask: Rng | null): Decode {
  const tokens = new Int32Array(L).fill(-1);
  const commitStep = new Int32Array(L).fill(-1);
  const d: Decode = { tokens, commitStep, maskedAfter: [], committed: [], meanConfidence: [], minCommitted: [], maxLeftMasked: [] };
  let prevTarget = 0;
  for (let s = 1; s <= steps; s++) {
    const target = Math.round((L * s) / steps);
    const k = target - prevTarget;
    prevTarget = target;
    const marg = chainMarginals(pi0, T, V, tokens);
    const masked: number[] = [];
    const pred = new Int32Array(L);
    const conf = new Float64Array(L);
    for (let i = 0; i < L; i++) {
      if (tokens[i]! >= 0) continue;
      masked.push(i);
      let best = 0;
      for (let x = 1; x < V; x++) if (marg[i * V + x]! > marg[i * V + best]!) best = x; // ties → lower token
      pred[i] = best;
      conf[i] = marg[i * V + best]!;
    }
    let chosen: number[];
    if (remask === null) {
      // most confident first, ties → lower position
      masked.sort((a, b) => conf[b]! - conf[a]! || a - b);
      chosen = masked.slice(0, k);
    } else {
      // draws: one partial Fisher–Yates of the masked list per step, k uniforms (stream `remask`)
      chosen = remask.sample(masked.length, k).map((j) => masked[j]!);
    }
    let sum = 0;
    let minC = Infinity;
    for (const i of chosen) {
      tokens[i] = pred[i]!;
      commitStep[i] = s;
      sum += conf[i]!;
      minC = Math.min(minC, conf[i]!);
    }
    let maxLeft = -Infinity;
    for (const i of masked) if (commitStep[i] !== s) maxLeft = Math.max(maxLeft, conf[i]!);
    d.maskedAfter.push(L - target);
    d.committed.push(k);
    d.meanConfidence.push(sum / k);
    if (s <= TRACE_STEPS) {
      d.minCommitted.push(minC);
      d.maxLeftMasked.push(maxLeft === -Infinity ? null : maxLeft);
    }
  }
  return d;
}

function adjacentSameStep(commitStep: Int32Array): number {
  let n = 0;
  for (let i = 1; i < commitStep.length; i++) if (commitStep[i] === commitStep[i - 1]) n++;
  return n;
}

export default defineKernel({
  id: 'dllm/denoise',
  version: 1,
  input: 'query',
  summary: 'LLaDA masked-diffusion sampling with a linear unmasking schedule: low-confidence vs random remasking, exact forward–backward denoiser on a Markov chain',
  technique: 'masked diffusion LM reverse process with low-confidence remasking (LLaDA)',
  references: ['arXiv:2502.09992', 'arXiv:2406.07524'],
  honesty:
    'The sampler, the forward–backward denoiser, Viterbi and the entropy reference are exact computations; the "language" is a seeded random 16-token Markov chain, not a trained model.',
  params: {
    seq_len: int(1, 256, 64).description('sequence length (tokens)'),
    steps: int(1, 128, 16).description('unmasking steps (at most seq_len)'),
  },
  worstCase: { seq_len: 256, steps: 128 },
  rules: ['steps must be ≤ seq_len'],
  constraints: (p) => (p.steps <= p.seq_len ? [] : [{ param: 'steps', msg: 'steps must be ≤ seq_len' }]),
  run({ seq_len: L, steps }, rng) {
    // draws: transition logits, V rows of V normals (stream `chain`); random-remasking positions (stream `remask`)
    const chain = rng.stream('chain');
    const T = new Float64Array(V * V);
    for (let a = 0; a < V; a++) T.set(softmax(chain.normals(V, LOGIT_SCALE)), a * V);
    const pi0 = new Float64Array(V).fill(1 / V);

    const lc = decode(pi0, T, L, steps, null);
    const rnd = decode(pi0, T, L, steps, rng.stream('remask'));

    // Viterbi (MAP) in the log domain, ties → lower state
    const logT = T.map(Math.log);
    let delta = Float64Array.from(pi0, Math.log);
    const back = new Int32Array(L * V);
    for (let i = 1; i < L; i++) {
      const next = new Float64Array(V);
      for (let b = 0; b < V; b++) {
        let best = -Infinity;
        let arg = 0;
        for (let a = 0; a < V; a++) {
          const val = delta[a]! + logT[a * V + b]!;
          if (val > best) {
            best = val;
            arg = a;
          }
        }
        next[b] = best;
        back[i * V + b] = arg;
      }
      delta = next;
    }
    const viterbi = new Int32Array(L);
    for (let x = 1; x < V; x++) if (delta[x]! > delta[viterbi[L - 1]!]!) viterbi[L - 1] = x;
    for (let i = L - 1; i > 0; i--) viterbi[i - 1] = back[i * V + viterbi[i]!]!;
    const viterbiLl = delta[viterbi[L - 1]!]!;

    // E[log p(X)] for ancestral samples: Σ_i Σ_a p_{i−1}(a)·Σ_b T_ab log T_ab, with p_i the state law at i
    const rowNegEnt = new Float64Array(V);
    for (let a = 0; a < V; a++) for (let b = 0; b < V; b++) rowNegEnt[a] = rowNegEnt[a]! + T[a * V + b]! * logT[a * V + b]!;
    let expected = Math.log(1 / V);
    let p = Float64Array.from(pi0);
    for (let i = 1; i < L; i++) {
      const q = new Float64Array(V);
      for (let a = 0; a < V; a++) {
        expected += p[a]! * rowNegEnt[a]!;
        for (let b = 0; b < V; b++) q[b] = q[b]! + p[a]! * T[a * V + b]!;
      }
      p = q;
    }

    const llLc = chainLogLik(pi0, T, V, lc.tokens) / L;
    const llRnd = chainLogLik(pi0, T, V, rnd.tokens) / L;
    const vpt = viterbiLl / L;
    let monotone = true;
    lc.minCommitted.forEach((m, s) => {
      const left = lc.maxLeftMasked[s];
      if (left !== null && left !== undefined && m < left) monotone = false;
    });
    return {
      constants: { vocab: V, start: 'uniform', transition_logit_scale: LOGIT_SCALE, decoding: 'argmax', trace_steps: Math.min(steps, TRACE_STEPS) },
      result: {
        transition: Array.from({ length: V }, (_, a) => Array.from(T.subarray(a * V, (a + 1) * V))),
        masked_after_step: lc.maskedAfter,
        committed_per_step: lc.committed,
        mean_confidence_per_step: lc.meanConfidence,
        confidence_trace: { min_committed: lc.minCommitted, max_left_masked: lc.maxLeftMasked },
        final_tokens: Array.from(lc.tokens),
        commit_step: Array.from(lc.commitStep),
        random_final_tokens: Array.from(rnd.tokens),
        viterbi_tokens: Array.from(viterbi),
        loglik_per_token: { low_confidence: llLc, random: llRnd },
        viterbi_loglik_per_token: vpt,
        expected_loglik_per_token: expected / L,
        parallel_conflicts: { low_confidence: adjacentSameStep(lc.commitStep), random: adjacentSameStep(rnd.commitStep) },
      },
      checks: {
        every_token_committed: lc.tokens.every((t) => t >= 0) && rnd.tokens.every((t) => t >= 0),
        committed_never_less_confident_than_masked: monotone,
        viterbi_dominates: llLc <= vpt + 1e-12 && llRnd <= vpt + 1e-12,
      },
    };
  },
});
