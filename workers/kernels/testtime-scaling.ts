/**
 * Test-time compute scaling (kernels-b §5) on M = 128 simulated problems of heterogeneous
 * difficulty: parallel repeated sampling scored by coverage (pass@n, "Large Language Monkeys",
 * arXiv:2407.21787) with the unbiased pass@k estimator (arXiv:2107.03374), majority vote
 * (self-consistency, arXiv:2203.11171) and best-of-n under an imperfect verifier, against
 * sequential revision as a two-state Markov chain (Snell et al., arXiv:2408.03314), compared at
 * equal compute. Every empirical curve comes with its closed form; the exponentiated power law
 * −ln coverage ≈ a·n^(−b) of Brown et al. is fitted by least squares.
 */
import { defineKernel } from '../kernel-def.js';
import { sigmoid } from '../lib/linalg.js';
import { int, num } from '../../src/lib/params.js';
import type { RngStreams } from '../../src/lib/prng.js';

export const M = 128;
export const HETEROGENEITY = 0.8;
export const DISTRACTOR_WEIGHTS: readonly number[] = [0.4, 0.3, 0.2, 0.1];
export const VERIFIER_SD = 0.5;
export const R_FIX = 0.15;
export const R_BREAK = 0.03;
export const A_INF = R_FIX / (R_FIX + R_BREAK);

/** p_i = sigmoid(logit p + 0.8·z_i); exactly p when p ∈ {0, 1}. */
export function problemP(p: number, z: ArrayLike<number>): Float64Array {
  const out = new Float64Array(z.length);
  const logit = Math.log(p) - Math.log1p(-p);
  for (let i = 0; i < z.length; i++) out[i] = p === 0 || p === 1 ? p : sigmoid(logit + HETEROGENEITY * z[i]!);
  return out;
}

/** Powers of two below N, then N. */
export function budgetGrid(N: number): number[] {
  const out: number[] = [];
  for (let b = 1; b < N; b *= 2) out.push(b);
  out.push(N);
  return out;
}

/** Unbiased pass@n from c correct out of N samples: 1 − C(N−c, n)/C(N, n), as a product. */
export function passAtK(N: number, c: number, n: number): number {
  if (N - c < n) return 1;
  let prod = 1;
  for (let j = 0; j < n; j++) prod *= (N - c - j) / (N - j);
  return 1 - prod;
}

/** Least squares of ln(−ln c_n) = ln a − b ln n over budgets with 0 < c_n < 1. */
export function powerLawFit(budgets: readonly number[], coverage: readonly number[]): { a: number; b: number; points: number } | null {
  const xs: number[] = [];
  const ys: number[] = [];
  budgets.forEach((n, k) => {
    const c = coverage[k]!;
    if (c > 0 && c < 1) {
      xs.push(Math.log(n));
      ys.push(Math.log(-Math.log(c)));
    }
  });
  if (xs.length < 2) return null;
  const mx = xs.reduce((s, x) => s + x, 0) / xs.length;
  const my = ys.reduce((s, y) => s + y, 0) / ys.length;
  let sxy = 0;
  let sxx = 0;
  xs.forEach((x, i) => {
    sxy += (x - mx) * (ys[i]! - my);
    sxx += (x - mx) ** 2;
  });
  if (sxx === 0) return null;
  const slope = sxy / sxx;
  return { a: Math.exp(my - slope * mx), b: -slope, points: xs.length };
}

export function testtimeScaling(rng: RngStreams, p: number, N: number, steps: number) {
  // stream `problems`: M normals z_i
  const z = rng.stream('problems').normals(M);
  const pi = problemP(p, z);
  const budgets = budgetGrid(N);
  const G = budgets.length;
  const coverage = new Float64Array(G);
  const majority = new Float64Array(G);
  const bestOfN = new Float64Array(G);
  const passAtN = new Float64Array(G);
  const homogeneous = budgets.map((n) => 1 - (1 - p) ** n);
  const heterogeneous = budgets.map((n) => {
    let s = 0;
    for (let i = 0; i < M; i++) s += 1 - (1 - pi[i]!) ** n;
    return s / M;
  });

  // stream `parallel`, sample-major (j outer, i inner) so budgets are nested prefixes:
  // per sample one uniform (correct?), one uniform (distractor id 1…4, used when wrong), one normal (verifier)
  const par = rng.stream('parallel');
  const counts = new Int32Array(M * 5); // answer counts per problem
  const firstSeen = new Int32Array(M * 5).fill(-1);
  const anyCorrect = new Uint8Array(M);
  const bestScore = new Float64Array(M).fill(-Infinity);
  const bestCorrect = new Uint8Array(M);
  const firstCorrect = new Uint8Array(M); // sample 0, the start of the revision chain
  const c = new Int32Array(M);
  let g = 0;
  for (let j = 0; j < N; j++) {
    for (let i = 0; i < M; i++) {
      const ok = par.next() < pi[i]!;
      const distractor = 1 + par.categorical(DISTRACTOR_WEIGHTS);
      const score = (ok ? 1 : 0) + VERIFIER_SD * par.normal();
      const ans = ok ? 0 : distractor;
      if (j === 0) firstCorrect[i] = ok ? 1 : 0;
      if (ok) {
        anyCorrect[i] = 1;
        c[i] = c[i]! + 1;
      }
      counts[i * 5 + ans] = counts[i * 5 + ans]! + 1;
      if (firstSeen[i * 5 + ans]! < 0) firstSeen[i * 5 + ans] = j;
      if (score > bestScore[i]!) {
        bestScore[i] = score;
        bestCorrect[i] = ok ? 1 : 0;
      }
    }
    if (j + 1 === budgets[g]) {
      let cov = 0;
      let maj = 0;
      let bon = 0;
      for (let i = 0; i < M; i++) {
        cov += anyCorrect[i]!;
        bon += bestCorrect[i]!;
        // plurality answer, ties to the answer seen first
        let best = -1;
        for (let a = 0; a < 5; a++) {
          if (counts[i * 5 + a] === 0) continue;
          if (best < 0 || counts[i * 5 + a]! > counts[i * 5 + best]! || (counts[i * 5 + a] === counts[i * 5 + best] && firstSeen[i * 5 + a]! < firstSeen[i * 5 + best]!)) best = a;
        }
        if (best === 0) maj++;
      }
      coverage[g] = cov / M;
      majority[g] = maj / M;
      bestOfN[g] = bon / M;
      g++;
    }
  }
  budgets.forEach((n, k) => {
    let s = 0;
    for (let i = 0; i < M; i++) s += passAtK(N, c[i]!, n);
    passAtN[k] = s / M;
  });

  // stream `revise`: step-major, one uniform per problem per step
  const rev = rng.stream('revise');
  const state = Uint8Array.from(firstCorrect);
  const everCorrect = Uint8Array.from(firstCorrect);
  const lambda = 1 - R_FIX - R_BREAK;
  const seqAcc: number[] = [];
  const seqAccCf: number[] = [];
  const seqCov: number[] = [];
  const seqCovCf: number[] = [];
  const pBar = pi.reduce((s, x) => s + x, 0) / M;
  for (let k = 0; k <= steps; k++) {
    if (k > 0) {
      for (let i = 0; i < M; i++) {
        const u = rev.next();
        state[i] = state[i] ? (u < R_BREAK ? 0 : 1) : u < R_FIX ? 1 : 0;
        if (state[i]) everCorrect[i] = 1;
      }
    }
    seqAcc.push(state.reduce((s, x) => s + x, 0) / M);
    seqAccCf.push(A_INF + (pBar - A_INF) * lambda ** k);
    seqCov.push(everCorrect.reduce((s, x) => s + x, 0) / M);
    let cf = 0;
    for (let i = 0; i < M; i++) cf += 1 - (1 - pi[i]!) * (1 - R_FIX) ** k;
    seqCovCf.push(cf / M);
  }

  const B = steps + 1;
  let parB = 0;
  for (let i = 0; i < M; i++) parB += 1 - (1 - pi[i]!) ** B;
  parB /= M;
  const seqB = seqCovCf[steps]!;
  return {
    budgets,
    coverage,
    majority,
    best_of_n: bestOfN,
    pass_at_n: passAtN,
    closed_form_homogeneous: homogeneous,
    closed_form_heterogeneous: heterogeneous,
    problem_p: pi,
    mean_problem_p: pBar,
    correct_counts: c,
    sequential: { accuracy: seqAcc, accuracy_closed_form: seqAccCf, accuracy_limit: A_INF, coverage: seqCov, coverage_closed_form: seqCovCf },
    compute_matched: { budget: B, parallel: parB, sequential: seqB, recommended: parB >= seqB ? 'parallel' : 'sequential', margin: parB - seqB },
    power_law_fit: powerLawFit(budgets, Array.from(coverage)),
  };
}

export default defineKernel({
  id: 'testtime/scaling',
  version: 1,
  input: 'query',
  summary: 'Test-time compute: coverage, majority vote and best-of-n against sequential revision at equal compute, with closed forms',
  technique: 'repeated sampling with unbiased pass@k, self-consistency, verifier best-of-n, Markov sequential revision, exponentiated power-law fit',
  references: ['arXiv:2407.21787', 'arXiv:2107.03374', 'arXiv:2203.11171', 'arXiv:2408.03314'],
  honesty: 'The estimators, closed forms and fit are real; problems, samples, verifier scores and revisions are seeded simulations, not a language model.',
  params: {
    p: num(0, 1, 0.2).description('probability that one sample is correct'),
    N: int(1, 2048, 64).description('samples (compute budget)'),
    steps: int(1, 64, 8).description('sequential revision steps compared at equal compute'),
  },
  worstCase: { p: 0.5, N: 2048, steps: 64 },
  run({ p, N, steps }, rng) {
    // draws: `problems` (M normals), `parallel` (sample-major, see testtimeScaling), `revise` (step-major uniforms)
    const r = testtimeScaling(rng, p, N, steps);
    let ordered = true;
    for (let k = 0; k < r.budgets.length; k++) {
      if (k > 0 && r.coverage[k]! < r.coverage[k - 1]!) ordered = false;
      if (r.majority[k]! > r.coverage[k]! || r.best_of_n[k]! > r.coverage[k]!) ordered = false;
    }
    return {
      constants: {
        problems: M,
        heterogeneity: HETEROGENEITY,
        distractor_weights: DISTRACTOR_WEIGHTS,
        verifier: { correct_mean: 1, wrong_mean: 0, sd: VERIFIER_SD },
        revision: { r_fix: R_FIX, r_break: R_BREAK },
      },
      result: r,
      checks: {
        coverage_dominates: ordered,
        pass_at_N_equals_coverage: Math.abs(r.pass_at_n[r.budgets.length - 1]! - r.coverage[r.budgets.length - 1]!) <= 1e-12,
      },
    };
  },
});
