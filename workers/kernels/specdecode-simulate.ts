/**
 * Speculative sampling (Leviathan, Kalman & Matias 2023, arXiv:2211.17192; Chen et al. 2023,
 * arXiv:2302.01318) with a context-free target p and draft q over V = 32 tokens: the draft
 * proposes γ tokens, each accepted with probability min(1, p/q); the first rejection is replaced
 * by a sample of the residual norm((p − q)₊); when all γ pass a bonus token comes from p. The
 * emitted tokens are exactly p-distributed; acceptance α = Σ min(p, q) gives the truncated
 * geometric law of accepted drafts and E[tokens/iteration] = (1 − α^{γ+1})/(1 − α).
 * Design: kernels-b §6.
 */
import { defineKernel } from '../kernel-def.js';
import { softmax } from '../lib/linalg.js';
import { int } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';

export const VOCAB = 32;
export const TARGET_SCALE = 1.5;
export const DRAFT_NOISE = 0.8;
export const COST_RATIO = 0.1;
export const GAMMA_MAX = 32;

/** Draw order on `model`: V target normals, then V draft-noise normals. */
export function drawModels(rng: Rng): { p: Float64Array; q: Float64Array } {
  const target = rng.normals(VOCAB, TARGET_SCALE);
  const noise = rng.normals(VOCAB, DRAFT_NOISE);
  return { p: softmax(target), q: softmax(target.map((t, i) => t + noise[i]!)) };
}

export function acceptance(p: ArrayLike<number>, q: ArrayLike<number>): number {
  let a = 0;
  for (let i = 0; i < p.length; i++) a += Math.min(p[i]!, q[i]!);
  return a;
}

/** norm((p − q)₊); undefined (all zero) only when p = q. */
export function residual(p: ArrayLike<number>, q: ArrayLike<number>): Float64Array {
  const r = new Float64Array(p.length);
  let s = 0;
  for (let i = 0; i < p.length; i++) {
    r[i] = Math.max(0, p[i]! - q[i]!);
    s += r[i]!;
  }
  if (s > 0) for (let i = 0; i < p.length; i++) r[i] = r[i]! / s;
  return r;
}

/** E[A + 1] = (1 − α^{γ+1})/(1 − α), = γ + 1 at α = 1. */
export function expectedTokens(alpha: number, gamma: number): number {
  return alpha === 1 ? gamma + 1 : (1 - alpha ** (gamma + 1)) / (1 - alpha);
}

/** P(A = a) = α^a (1 − α) for a < γ, α^γ for a = γ. */
export function acceptedLaw(alpha: number, gamma: number): number[] {
  return Array.from({ length: gamma + 1 }, (_, a) => (a < gamma ? alpha ** a * (1 - alpha) : alpha ** gamma));
}

export interface Trial {
  accepted: number;
  tokens: number[];
}

/**
 * One speculative iteration. Draw order: per draft position one uniform for x ~ q and one for the
 * accept test; at the first rejection one uniform for the residual sample; after γ acceptances one
 * uniform for the bonus token ~ p.
 */
export function speculate(rng: Rng, p: Float64Array, q: Float64Array, r: Float64Array, gamma: number): Trial {
  const tokens: number[] = [];
  for (let k = 0; k < gamma; k++) {
    const x = rng.categorical(q);
    if (rng.next() < Math.min(1, p[x]! / q[x]!)) {
      tokens.push(x);
    } else {
      tokens.push(rng.categorical(r));
      return { accepted: k, tokens };
    }
  }
  tokens.push(rng.categorical(p));
  return { accepted: gamma, tokens };
}

export default defineKernel({
  id: 'specdecode/simulate',
  version: 1,
  input: 'query',
  summary: 'Speculative sampling with a draft model: acceptance law, tokens per target call and exact losslessness of the emitted tokens',
  technique: 'speculative sampling (draft-and-verify with residual resampling), truncated-geometric acceptance, chi-square losslessness test',
  references: ['arXiv:2211.17192', 'arXiv:2302.01318'],
  honesty: 'The accept/resample algorithm and the statistics are real; the target and draft distributions are seeded synthetic softmaxes, not language models.',
  params: {
    draft_len: int(1, GAMMA_MAX, 6).description('tokens the draft model proposes per target call'),
    trials: int(1, 20000, 256).description('simulated target calls'),
  },
  worstCase: { draft_len: 32, trials: 20000 },
  run({ draft_len: gamma, trials }, rng) {
    // draws: `model` (2V normals), `trials` (see speculate)
    const { p, q } = drawModels(rng.stream('model'));
    const alpha = acceptance(p, q);
    const r = residual(p, q);
    const tr = rng.stream('trials');
    const hist = new Array<number>(gamma + 1).fill(0);
    const emitted = new Array<number>(VOCAB).fill(0);
    let accepted = 0;
    let rejections = 0;
    let tokens = 0;
    for (let t = 0; t < trials; t++) {
      const res = speculate(tr, p, q, r, gamma);
      hist[res.accepted] = hist[res.accepted]! + 1;
      accepted += res.accepted;
      if (res.accepted < gamma) rejections++;
      tokens += res.tokens.length;
      for (const x of res.tokens) emitted[x] = emitted[x]! + 1;
    }
    let chi2 = 0;
    let tv = 0;
    for (let x = 0; x < VOCAB; x++) {
      const e = tokens * p[x]!;
      chi2 += (emitted[x]! - e) ** 2 / e;
      tv += Math.abs(emitted[x]! / tokens - p[x]!) / 2;
    }
    const expected = expectedTokens(alpha, gamma);
    const speedups = Array.from({ length: GAMMA_MAX }, (_, g) => expectedTokens(alpha, g + 1) / ((g + 1) * COST_RATIO + 1));
    let best = 0;
    for (let g = 1; g < GAMMA_MAX; g++) if (speedups[g]! > speedups[best]!) best = g;
    // losslessness algebra: q·min(1, p/q) + (1 − α)·r = p
    let lossless = 0;
    for (let x = 0; x < VOCAB; x++) lossless = Math.max(lossless, Math.abs(q[x]! * Math.min(1, p[x]! / q[x]!) + (1 - alpha) * r[x]! - p[x]!));
    return {
      constants: { target_logit_scale: TARGET_SCALE, draft_logit_noise: DRAFT_NOISE, cost_ratio: COST_RATIO },
      result: {
        vocab_size: VOCAB,
        p,
        q,
        residual: r,
        alpha,
        expected_tokens_per_iter: expected,
        empirical_tokens_per_iter: tokens / trials,
        draft_acceptance_rate: accepted / (trials * gamma),
        per_token_acceptance: accepted / (accepted + rejections),
        accepted_hist: hist,
        expected_hist: acceptedLaw(alpha, gamma),
        emitted_tokens: tokens,
        emitted_counts: emitted,
        chi2,
        dof: VOCAB - 1,
        tv_emitted_vs_target: tv,
        tv_draft_vs_target: 1 - alpha,
        speedup_model: {
          c: COST_RATIO,
          expected_speedup: expected / (gamma * COST_RATIO + 1),
          optimal_gamma: best + 1,
          optimal_speedup: speedups[best]!,
          limit_tokens_per_iter: alpha < 1 ? 1 / (1 - alpha) : null,
        },
      },
      checks: {
        lossless_identity_max_error: lossless,
        alpha_in_unit_interval: alpha > 0 && alpha <= 1,
        hist_sums_to_trials: hist.reduce((s, x) => s + x, 0) === trials,
      },
    };
  },
});
