/**
 * Group Relative Policy Optimization (Shao et al. 2024, DeepSeekMath, arXiv:2402.03300; used in
 * DeepSeek-R1, arXiv:2501.12948) on a tabular softmax policy over P prompts × A answers with a
 * verifiable binary reward: group-relative advantages Â = (r − mean r)/(std r + ε), the policy
 * gradient plus the exact tabular KL gradient towards the initial (reference) policy, and the
 * zero-variance groups that carry no signal (DAPO, arXiv:2503.14476; Dr. GRPO, arXiv:2503.20783).
 * Design: kernels-b §20.
 */
import { defineKernel } from '../kernel-def.js';
import { evenlySpaced } from '../../src/lib/numbers.js';
import { int } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';
import { entropy, softmax } from '../lib/linalg.js';

export const PROMPTS = 8;
export const ANSWERS = 6;
export const LR = 0.5;
export const BETA_KL = 0.02;
export const EPS = 1e-6;
/** Population figures of one step's policies, averaged over the prompts. */
interface StepStats {
  expected_reward: number;
  kl: number;
  entropy: number;
  expected_zero_var_frac: number;
}

/** One step of the run, as listed in `rows`. */
type StepRow = { t: number } & StepStats & { sampled_reward: number; zero_var_frac: number; grad_norm: number };

/** One prompt's group at the first step: what was drawn, rewarded and how the logits move. */
interface GroupTrace {
  prompt: number;
  /** the G answers drawn from the policy */
  answers: number[];
  /** 1 where the answer is the correct one, else 0 */
  rewards: number[];
  /** group-relative advantages (r − mean r)/(std r + ε) */
  advantages: Float64Array;
  /** the gradient on the prompt's logits, KL term included */
  grad: Float64Array;
}

/** Per-step rows listed in the body (evenly spaced, always including the last). */
const ROW_CAP = 256;


/** KL(π‖π_ref) = Σ π (ln π − ln π_ref). */
export function kl(pi: Float64Array, ref: Float64Array): number {
  let s = 0;
  for (let a = 0; a < pi.length; a++) if (pi[a]! > 0) s += pi[a]! * (Math.log(pi[a]!) - Math.log(ref[a]!));
  return s;
}

/**
 * g = (1/G)·Σ_i Â_i(e_{a_i} − π) − β·π ⊙ (ln π − ln π_ref − KL), with the policy-gradient sum
 * gathered per answer: (1/G)·(Σ_{i: a_i = a} Â_i − π_a·Σ_i Â_i).
 */
export function grpoGradient(pi: Float64Array, ref: Float64Array, answers: ArrayLike<number>, adv: ArrayLike<number>, beta = BETA_KL): Float64Array {
  const A = pi.length;
  const G = answers.length;
  const g = new Float64Array(A);
  let total = 0;
  for (let i = 0; i < G; i++) {
    g[answers[i]!] = g[answers[i]!]! + adv[i]!;
    total += adv[i]!;
  }
  const k = kl(pi, ref);
  for (let a = 0; a < A; a++) g[a] = (g[a]! - pi[a]! * total) / G - beta * pi[a]! * (Math.log(pi[a]!) - Math.log(ref[a]!) - k);
  return g;
}

/** Inverse-CDF draw: the first answer whose cumulative probability exceeds u·total (the last absorbs rounding). */
export function drawAnswer(cum: Float64Array, rng: Rng): number {
  const u = rng.next() * cum[cum.length - 1]!;
  for (let a = 0; a < cum.length - 1; a++) if (u < cum[a]!) return a;
  return cum.length - 1;
}

export default defineKernel({
  id: 'grpo/reward-dynamics',
  version: 1,
  input: 'query',
  summary: 'GRPO on a tabular policy: group-relative advantages, KL-regularised policy gradient, reward rise and zero-variance groups',
  technique: 'Group Relative Policy Optimization with verifiable binary rewards on a tabular softmax policy',
  references: ['arXiv:2402.03300', 'arXiv:2501.12948', 'arXiv:2503.14476', 'arXiv:2503.20783'],
  honesty: 'The GRPO update, advantages and KL gradient are computed exactly; the prompts, answers, initial logits and sampled groups are seeded synthetic draws, not a language model.',
  params: {
    group_size: int(2, 256, 8).description('rollouts per GRPO group'),
    steps: int(1, 500, 24).description('policy-gradient steps'),
  },
  worstCase: { group_size: 256, steps: 500 },
  run({ group_size: G, steps }, rng) {
    // draw order: stream `init`: P·A initial logits (row-major), then the correct answer int(A) per prompt;
    // stream `sample`: per step, per prompt, G inverse-CDF draws from π (one uniform each, see drawAnswer)
    const init = rng.stream('init');
    const theta = Array.from({ length: PROMPTS }, () => init.normals(ANSWERS));
    const correct = Array.from({ length: PROMPTS }, () => init.int(ANSWERS));
    const initialLogits = theta.map((row) => Float64Array.from(row));
    const ref = theta.map((row) => softmax(row));
    const sampler = rng.stream('sample');
    const rows: StepRow[] = [];
    const trace: GroupTrace[] = [];
    const stats = (pis: Float64Array[]): StepStats => {
      let q = 0;
      let k = 0;
      let h = 0;
      let ezv = 0;
      pis.forEach((pi, p) => {
        const qp = pi[correct[p]!]!;
        q += qp;
        k += kl(pi, ref[p]!);
        h += entropy(pi);
        ezv += qp ** G + (1 - qp) ** G;
      });
      return { expected_reward: q / PROMPTS, kl: k / PROMPTS, entropy: h / PROMPTS, expected_zero_var_frac: ezv / PROMPTS };
    };
    const cum = new Float64Array(ANSWERS);
    const answers = new Int32Array(G);
    const rewards = new Int32Array(G);
    const adv = new Float64Array(G);
    let minKl = Infinity;
    for (let t = 0; t < steps; t++) {
      const pis = theta.map((row) => softmax(row));
      const st = stats(pis);
      minKl = Math.min(minKl, st.kl);
      let sampled = 0;
      let zeroVar = 0;
      let gradNorm = 0;
      for (let p = 0; p < PROMPTS; p++) {
        const pi = pis[p]!;
        let acc = 0;
        for (let a = 0; a < ANSWERS; a++) cum[a] = acc += pi[a]!;
        let hitsP = 0;
        for (let i = 0; i < G; i++) {
          answers[i] = drawAnswer(cum, sampler);
          rewards[i] = answers[i] === correct[p] ? 1 : 0;
          hitsP += rewards[i]!;
        }
        // group-relative advantages with the population std (binary rewards: mean = hits/G)
        const mean = hitsP / G;
        let v = 0;
        for (let i = 0; i < G; i++) v += (rewards[i]! - mean) ** 2;
        const std = Math.sqrt(v / G);
        for (let i = 0; i < G; i++) adv[i] = (rewards[i]! - mean) / (std + EPS);
        if (std === 0) zeroVar++;
        sampled += mean;
        const g = grpoGradient(pi, ref[p]!, answers, adv);
        let gn = 0;
        for (let a = 0; a < ANSWERS; a++) {
          gn += g[a]! ** 2;
          theta[p]![a] = theta[p]![a]! + LR * g[a]!;
        }
        gradNorm += Math.sqrt(gn);
        if (t === 0) trace.push({ prompt: p, answers: Array.from(answers), rewards: Array.from(rewards), advantages: Float64Array.from(adv), grad: g });
      }
      rows.push({ t, ...st, sampled_reward: sampled / PROMPTS, zero_var_frac: zeroVar / PROMPTS, grad_norm: gradNorm / PROMPTS });
    }
    const finalPis = theta.map((row) => softmax(row));
    const fin = stats(finalPis);
    const shown = rows.length <= ROW_CAP ? rows : evenlySpaced(rows.length, ROW_CAP).map((i) => rows[i]!);
    return {
      constants: { prompts: PROMPTS, answers: ANSWERS, reward: 'binary, one correct answer per prompt', rows_listed: shown.length, row_stats: 'policy before the update of step t; sampled statistics of the batch drawn at step t' },
      result: {
        correct_answer: correct,
        initial_logits: initialLogits,
        final_policy: finalPis,
        steps: shown,
        final: { expected_reward: fin.expected_reward, kl: fin.kl, entropy: fin.entropy },
        trace_step0: trace,
        hyper: { lr: LR, beta_kl: BETA_KL, eps: EPS, clip_active: false },
      },
      checks: {
        kl_step0_zero: rows[0]!.kl === 0,
        kl_non_negative: minKl >= -1e-15 && fin.kl >= -1e-15,
        reward_rose: fin.expected_reward > rows[0]!.expected_reward,
      },
    };
  },
});
