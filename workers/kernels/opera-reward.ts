/**
 * OPERA (Jiang et al., arXiv:2606.25757): an intrinsic reward from perplexity dynamics, the drop of
 * uncertainty across "reflective states", with group-normalised GRPO advantages (Shao et al.,
 * arXiv:2402.03300) and a perplexity-prioritised pick of the most consistent rollout.
 * Toy policy: an i.i.d. categorical emitter over V tokens, p₀ = softmax(z); a reflective marker
 * switches the next w tokens to the sharpened p_γ = softmax((1+γ)z). The reward of a marker is
 * mean NLL of the w base tokens before it minus mean NLL of the w sharpened tokens after it
 * (= ln PPL_pre − ln PPL_post), whose expectation is exactly H(p₀) − H(p_γ). Design: kernels-a §1.6.
 */
import { defineKernel } from '../kernel-def.js';
import { entropy, softmax } from '../lib/linalg.js';
import { int, num } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';

export const LOGIT_SCALE = 1.5;
export const SIGMA_EPS = 1e-12;

export interface Rollout {
  tokens: Int32Array;
  /** −ln p(token) under the distribution that emitted it. */
  nll: Float64Array;
  /** 1 where the token was emitted from p_γ. */
  sharpened: Uint8Array;
  markers: number[];
  stateRewards: number[];
  reward: number;
  ppl: number;
}

/**
 * One rollout on its own stream. Draw order per position: the reflection uniform (only when the
 * position is eligible: no window open, base_run ≥ w and t + w ≤ T), then the token uniform.
 */
export function emitRollout(rng: Rng, p0: Float64Array, pg: Float64Array, T: number, rho: number, w: number): Rollout {
  const tokens = new Int32Array(T);
  const nll = new Float64Array(T);
  const sharpened = new Uint8Array(T);
  const markers: number[] = [];
  let postLeft = 0;
  let baseRun = 0;
  for (let t = 0; t < T; t++) {
    let sharp = false;
    if (postLeft > 0) {
      sharp = true;
    } else if (baseRun >= w && t + w <= T && rng.next() < rho) {
      markers.push(t);
      postLeft = w;
      sharp = true;
    }
    const p = sharp ? pg : p0;
    const tok = rng.categorical(p); // inverse CDF, one uniform
    tokens[t] = tok;
    nll[t] = -Math.log(p[tok]!);
    sharpened[t] = sharp ? 1 : 0;
    if (sharp) {
      postLeft--;
      baseRun = 0;
    } else {
      baseRun++;
    }
  }
  const stateRewards = markers.map((r) => {
    let pre = 0;
    let post = 0;
    for (let i = 0; i < w; i++) {
      pre += nll[r - w + i]!;
      post += nll[r + i]!;
    }
    return pre / w - post / w;
  });
  let total = 0;
  for (const v of nll) total += v;
  const reward = stateRewards.length ? stateRewards.reduce((a, b) => a + b, 0) / stateRewards.length : 0;
  return { tokens, nll, sharpened, markers, stateRewards, reward, ppl: Math.exp(total / T) };
}

/** GRPO: A_g = (R_g − mean)/std (population), or 0 when std ≤ 1e-12. */
export function grpoAdvantages(rewards: readonly number[]): { advantages: number[]; mean: number; std: number } {
  const G = rewards.length;
  const mean = rewards.reduce((a, b) => a + b, 0) / G;
  const std = Math.sqrt(rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / G);
  return { advantages: rewards.map((r) => (std > SIGMA_EPS ? (r - mean) / std : 0)), mean, std };
}

export default defineKernel({
  id: 'opera/reward',
  version: 1,
  input: 'query',
  summary: 'OPERA perplexity-reduction reward at reflective states, GRPO group advantages and perplexity-prioritised selection, against the closed form H(p0) − H(p_gamma)',
  technique: 'perplexity-reduction intrinsic reward at reflective states with GRPO group normalisation',
  references: ['arXiv:2606.25757', 'arXiv:2402.03300'],
  honesty: 'The reward, advantages, selection and closed form are computed exactly; the policy is a seeded i.i.d. categorical emitter with synthetic reflective markers, not a language model.',
  params: {
    group: int(1, 32, 8).description('rollouts per GRPO group'),
    length: int(16, 512, 128).description('tokens per rollout'),
    vocab: int(4, 64, 32).description('vocabulary size'),
    reflect_rate: num(0, 0.5, 0.05).description('probability that a position is a reflective state'),
    window: int(1, 32, 8).description('tokens after a reflective state over which the perplexity reduction is measured'),
    gain: num(0, 8, 1).description('strength of the perplexity reduction a reflection brings'),
  },
  worstCase: { group: 32, length: 512, vocab: 64, reflect_rate: 0.5, window: 1, gain: 8 },
  run({ group: G, length: T, vocab: V, reflect_rate: rho, window: w, gain }, rng) {
    // draws: stream `logits` (V normals, ×1.5); stream `rollout/<g>` per rollout (see emitRollout)
    const z = rng.stream('logits').normals(V, LOGIT_SCALE);
    const p0 = softmax(z);
    const pg = softmax(z.map((v) => (1 + gain) * v));
    const rollouts = Array.from({ length: G }, (_, g) => emitRollout(rng.stream(`rollout/${g}`), p0, pg, T, rho, w));
    const { advantages, mean, std } = grpoAdvantages(rollouts.map((r) => r.reward));
    let selected = 0;
    rollouts.forEach((r, g) => {
      if (r.ppl < rollouts[selected]!.ppl) selected = g;
    });
    const all = rollouts.flatMap((r) => r.stateRewards);
    const n = all.length;
    const mcMean = n ? all.reduce((a, b) => a + b, 0) / n : null;
    const mcStderr = n >= 2 ? Math.sqrt(all.reduce((a, r) => a + (r - mcMean!) ** 2, 0) / (n - 1) / n) : null;
    const H0 = entropy(p0);
    const Hg = entropy(pg);
    const expected = H0 - Hg;
    const advMean = advantages.reduce((a, b) => a + b, 0) / G;
    const advStd = Math.sqrt(advantages.reduce((a, x) => a + (x - advMean) ** 2, 0) / G);
    // identity check: r_i = ln PPL_pre − ln PPL_post, with each perplexity computed on its own
    let identityGap = 0;
    for (const r of rollouts) {
      r.markers.forEach((m, i) => {
        let pre = 0;
        let post = 0;
        for (let k = 0; k < w; k++) {
          pre += r.nll[m - w + k]!;
          post += r.nll[m + k]!;
        }
        identityGap = Math.max(identityGap, Math.abs(Math.log(Math.exp(pre / w)) - Math.log(Math.exp(post / w)) - r.stateRewards[i]!));
      });
    }
    return {
      constants: { logit_scale: LOGIT_SCALE, sigma_eps: SIGMA_EPS, stderr: 'sample sd / sqrt(states)' },
      result: {
        logits: z,
        rollouts: rollouts.map((r, g) => ({
          g,
          reflective_positions: r.markers,
          state_rewards: r.stateRewards,
          reward: r.reward,
          ppl: r.ppl,
          advantage: advantages[g]!,
        })),
        selected,
        entropy: { base: H0, sharpened: Hg },
        expected_reward_per_state: expected,
        mc: { mean_state_reward: mcMean, stderr: mcStderr, states: n },
        mc_z_score: mcStderr !== null && mcStderr > 0 ? (mcMean! - expected) / mcStderr : null,
        reward_stats: { mean, std },
        advantage_stats: { mean: advMean, std: advStd },
      },
      checks: {
        advantage_sum: advantages.reduce((a, b) => a + b, 0),
        identity_gap: identityGap,
        ppl_at_least_one: rollouts.every((r) => r.ppl >= 1),
        selected_is_min_ppl: rollouts.every((r) => rollouts[selected]!.ppl <= r.ppl),
      },
    };
  },
});
