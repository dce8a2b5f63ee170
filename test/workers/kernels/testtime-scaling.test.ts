import { expect } from 'chai';
import tts from '../../../workers/kernels/testtime-scaling.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { runRaw } from '../../helpers/kernels.js';

/**
 * Independent replay (kernels-b §5): z_i from stream problems, p_i = σ(logit p + 0.8 z_i); stream
 * parallel sample-major, per (sample, problem) a uniform (correct?), a uniform for the distractor
 * (weights 0.4, 0.3, 0.2, 0.1), a normal (verifier score 1[correct] + 0.5·ξ); stream revise
 * step-major, one uniform per problem (fix 0.15, break 0.03). Every sample is kept, and each budget's
 * statistics are recomputed from the first n samples of every problem.
 */
function replay(seed: number, p: number, N: number, steps: number) {
  const rng = new RngStreams(seed, 'testtime/scaling');
  const zs = rng.stream('problems');
  const z = Array.from({ length: M }, () => zs.normal());
  const pi = z.map((x) => (p === 0 || p === 1 ? p : 1 / (1 + Math.exp(-(Math.log(p / (1 - p)) + 0.8 * x)))));
  const par = rng.stream('parallel');
  const samples: { ok: boolean; ans: number; score: number }[][] = Array.from({ length: M }, () => []);
  for (let j = 0; j < N; j++) for (let i = 0; i < M; i++) {
    const ok = par.next() < pi[i]!;
    let u = par.next();
    let dis = [0.4, 0.3, 0.2].findIndex((w) => (u -= w) < 0);
    if (dis < 0) dis = 3;
    samples[i]!.push({ ok, ans: ok ? 0 : dis + 1, score: (ok ? 1 : 0) + 0.5 * par.normal() });
  }
  const budgets: number[] = [];
  for (let b = 1; b < N; b *= 2) budgets.push(b);
  budgets.push(N);
  const at = (n: number) => {
    let cov = 0;
    let maj = 0;
    let bon = 0;
    for (const list of samples) {
      const first = list.slice(0, n);
      cov += first.some((x) => x.ok) ? 1 : 0;
      // best-of-n: the first sample with the highest score
      let b = 0;
      first.forEach((x, k) => (x.score > first[b]!.score ? (b = k) : 0));
      bon += first[b]!.ok ? 1 : 0;
      // plurality, ties to the answer that appeared first
      const count = (a: number) => first.filter((x) => x.ans === a).length;
      const order = [...new Set(first.map((x) => x.ans))];
      const win = order.reduce((w, a) => (count(a) > count(w) ? a : w), order[0]!);
      maj += win === 0 ? 1 : 0;
    }
    return { cov: cov / M, maj: maj / M, bon: bon / M };
  };
  const rev = rng.stream('revise');
  let state = samples.map((l) => l[0]!.ok);
  const ever = [...state];
  const acc = [state.filter(Boolean).length / M];
  const cov = [ever.filter(Boolean).length / M];
  for (let k = 1; k <= steps; k++) {
    state = state.map((st) => {
      const u = rev.next();
      return st ? u >= 0.03 : u < 0.15;
    });
    state.forEach((st, i) => (ever[i] = ever[i] || st));
    acc.push(state.filter(Boolean).length / M);
    cov.push(ever.filter(Boolean).length / M);
  }
  return { pi, budgets, stats: budgets.map(at), counts: samples.map((l) => l.filter((x) => x.ok).length), acc, cov };
}

const M = 128;

/** ln C(n, k) by lgamma-free summation. */
function lnChoose(n: number, k: number): number {
  let s = 0;
  for (let i = 0; i < k; i++) s += Math.log(n - i) - Math.log(i + 1);
  return s;
}

describe('kernel testtime/scaling', () => {
  it('every empirical series replayed independently from streams problems, parallel and revise', () => {
    for (const [seed, p, N, steps] of [[42, 0.2, 64, 8], [3, 0.05, 100, 20], [9, 0.6, 7, 3], [1, 0.35, 33, 1]] as const) {
      const r = runRaw(tts, { seed: String(seed), p: String(p), N: String(N), steps: String(steps) }).result as any;
      const ref = replay(seed, p, N, steps);
      Array.from(r.problem_p as Float64Array).forEach((x, i) => expect(x).to.be.closeTo(ref.pi[i]!, 1e-12));
      expect(r.mean_problem_p).to.be.closeTo(ref.pi.reduce((a, b) => a + b, 0) / M, 1e-12);
      expect(r.budgets).to.deep.equal(ref.budgets);
      expect(Array.from(r.correct_counts)).to.deep.equal(ref.counts);
      expect(Array.from(r.coverage)).to.deep.equal(ref.stats.map((x) => x.cov));
      expect(Array.from(r.majority)).to.deep.equal(ref.stats.map((x) => x.maj));
      expect(Array.from(r.best_of_n)).to.deep.equal(ref.stats.map((x) => x.bon));
      expect(r.sequential.accuracy).to.deep.equal(ref.acc);
      expect(r.sequential.coverage).to.deep.equal(ref.cov);
      // the closed forms from the redrawn p_i
      const pBar = ref.pi.reduce((a, b) => a + b, 0) / M;
      expect([r.sequential.accuracy_closed_form.length, r.sequential.coverage_closed_form.length, r.closed_form_heterogeneous.length, r.closed_form_homogeneous.length]).to.deep.equal([ref.acc.length, ref.cov.length, ref.budgets.length, ref.budgets.length]);
      r.sequential.accuracy_closed_form.forEach((x: number, k: number) => expect(x).to.be.closeTo(0.15 / 0.18 + (pBar - 0.15 / 0.18) * 0.82 ** k, 1e-12));
      r.sequential.coverage_closed_form.forEach((x: number, k: number) => expect(x).to.be.closeTo(ref.pi.reduce((a, q) => a + 1 - (1 - q) * 0.85 ** k, 0) / M, 1e-12));
      Array.from(r.closed_form_heterogeneous as number[]).forEach((x, k) => expect(x).to.be.closeTo(ref.pi.reduce((a, q) => a + 1 - (1 - q) ** ref.budgets[k]!, 0) / M, 1e-12));
      Array.from(r.closed_form_homogeneous as number[]).forEach((x, k) => expect(x).to.be.closeTo(1 - (1 - p) ** ref.budgets[k]!, 1e-12));
      expect(r.sequential.accuracy_limit).to.be.closeTo(0.15 / 0.18, 1e-15);
    }
  });

  it('pathwise orderings: coverage is non-decreasing and dominates majority vote and best-of-n', () => {
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(tts, { seed, p: 0.1 + 0.05 * seed, N: 200 }).result as any;
      expect(r.budgets).to.deep.equal([1, 2, 4, 8, 16, 32, 64, 128, 200]);
      for (let k = 0; k < r.budgets.length; k++) {
        if (k > 0) expect(r.coverage[k]).to.be.at.least(r.coverage[k - 1]);
        expect(r.majority[k]).to.be.at.most(r.coverage[k]);
        expect(r.best_of_n[k]).to.be.at.most(r.coverage[k]);
      }
      // at n = 1 every method picks the only sample
      expect(r.majority[0]).to.equal(r.coverage[0]);
      expect(r.best_of_n[0]).to.equal(r.coverage[0]);
    }
  });

  it('unbiased pass@n: recomputed from correct_counts by binomial coefficients, pass@N = coverage_N, pass@1 = mean c/N', () => {
    for (const N of [1, 7, 64, 300]) {
      const r = runRaw(tts, { seed: N, p: 0.15, N }).result as any;
      r.budgets.forEach((n: number, k: number) => {
        let s = 0;
        for (const c of r.correct_counts) s += N - c < n ? 1 : 1 - Math.exp(lnChoose(N - c, n) - lnChoose(N, n));
        expect(r.pass_at_n[k]).to.be.closeTo(s / M, 1e-9);
      });
      const last = r.budgets.length - 1;
      expect(r.pass_at_n[last]).to.be.closeTo(r.coverage[last], 1e-12);
      expect(r.pass_at_n[0]).to.be.closeTo(r.correct_counts.reduce((a: number, c: number) => a + c, 0) / (M * N), 1e-12);
      expect(r.coverage[last]).to.equal(r.correct_counts.filter((c: number) => c > 0).length / M);
    }
  });

  it('coverage follows the heterogeneous closed form within 4σ; Jensen puts it below the homogeneous-at-mean form', () => {
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(tts, { seed, p: 0.05, N: 256 }).result as any;
      const pbar = r.problem_p.reduce((s: number, x: number) => s + x, 0) / M;
      r.budgets.forEach((n: number, k: number) => {
        const f = r.problem_p.map((p: number) => 1 - (1 - p) ** n);
        const het = f.reduce((s: number, x: number) => s + x, 0) / M;
        expect(r.closed_form_heterogeneous[k]).to.be.closeTo(het, 1e-12);
        expect(r.closed_form_homogeneous[k]).to.be.closeTo(1 - 0.95 ** n, 1e-12);
        const sd = Math.sqrt(f.reduce((s: number, x: number) => s + x * (1 - x), 0)) / M;
        expect(Math.abs(r.coverage[k] - het)).to.be.at.most(4 * sd + 1e-12);
        expect(het).to.be.at.most(1 - (1 - pbar) ** n + 1e-12);
      });
    }
  });

  it('edges: p = 0 gives all-zero parallel series, p = 1 all ones', () => {
    const zero = runRaw(tts, { p: 0, N: 50 }).result as any;
    const one = runRaw(tts, { p: 1, N: 50 }).result as any;
    for (const key of ['coverage', 'majority', 'best_of_n', 'pass_at_n', 'closed_form_heterogeneous']) {
      expect(Array.from(zero[key])).to.deep.equal(new Array(zero.budgets.length).fill(0));
      expect(Array.from(one[key])).to.deep.equal(new Array(one.budgets.length).fill(1));
    }
    expect(zero.power_law_fit).to.equal(null);
    expect(one.power_law_fit).to.equal(null);
    expect(zero.sequential.accuracy[0]).to.equal(0);
  });

  it('sequential revision: the closed form moves monotonically toward 0.8333 and the chain stays within 4σ of it', () => {
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(tts, { seed, p: 0.3, steps: 40 }).result as any;
      const s = r.sequential;
      expect(s.accuracy_limit).to.be.closeTo(0.15 / 0.18, 1e-15);
      const lam = 1 - 0.18;
      for (let k = 0; k <= 40; k++) {
        if (k > 0) {
          expect(Math.abs(s.accuracy_closed_form[k] - 0.15 / 0.18)).to.be.below(Math.abs(s.accuracy_closed_form[k - 1] - 0.15 / 0.18));
          expect(s.coverage[k]).to.be.at.least(s.coverage[k - 1]);
        }
        const a = r.problem_p.map((p: number) => 0.15 / 0.18 + (p - 0.15 / 0.18) * lam ** k);
        const sd = Math.sqrt(a.reduce((acc: number, x: number) => acc + x * (1 - x), 0)) / M;
        expect(s.accuracy_closed_form[k]).to.be.closeTo(a.reduce((acc: number, x: number) => acc + x, 0) / M, 1e-12);
        expect(Math.abs(s.accuracy[k] - s.accuracy_closed_form[k])).to.be.at.most(4 * sd);
        const cov = r.problem_p.map((p: number) => 1 - (1 - p) * 0.85 ** k);
        expect(s.coverage_closed_form[k]).to.be.closeTo(cov.reduce((acc: number, x: number) => acc + x, 0) / M, 1e-12);
      }
      // the chain starts from parallel sample 0
      expect(s.accuracy[0]).to.equal(r.coverage[0]);
    }
  });

  it('compute-matched comparison and power-law fit are recomputed from the replayed problems and coverage', () => {
    const r = runRaw(tts, { seed: 3, p: 0.1, N: 512, steps: 5 }).result as any;
    const ref = replay(3, 0.1, 512, 5);
    const par = ref.pi.reduce((s: number, p: number) => s + 1 - (1 - p) ** 6, 0) / M;
    const seq = ref.pi.reduce((s: number, p: number) => s + 1 - (1 - p) * 0.85 ** 5, 0) / M;
    expect(r.compute_matched.budget).to.equal(6);
    expect(r.compute_matched.parallel).to.be.closeTo(par, 1e-12);
    expect(r.compute_matched.sequential).to.be.closeTo(seq, 1e-12);
    expect(r.compute_matched.recommended).to.equal(par >= seq ? 'parallel' : 'sequential');
    expect(r.compute_matched.margin).to.be.closeTo(par - seq, 1e-12);
    expect(Array.from(r.coverage)).to.deep.equal(ref.stats.map((x) => x.cov));
    const pts = ref.budgets.map((n: number, k: number) => [Math.log(n), ref.stats[k]!.cov]).filter(([, c]) => c! > 0 && c! < 1);
    const xs = pts.map((q: number[]) => q[0]!);
    const ys = pts.map((q: number[]) => Math.log(-Math.log(q[1]!)));
    const n = xs.length;
    const sx = xs.reduce((a: number, b: number) => a + b, 0);
    const sy = ys.reduce((a: number, b: number) => a + b, 0);
    const sxy = xs.reduce((a: number, x: number, i: number) => a + x * ys[i]!, 0);
    const sxx = xs.reduce((a: number, x: number) => a + x * x, 0);
    const slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    expect(r.power_law_fit.b).to.be.closeTo(-slope, 1e-9);
    expect(r.power_law_fit.a).to.be.closeTo(Math.exp((sy - slope * sx) / n), 1e-9);
    expect(r.power_law_fit.points).to.equal(n);
    expect(r.power_law_fit.b).to.be.greaterThan(0);
  });

  it('samples are nested prefixes across N', () => {
    const small = runRaw(tts, { seed: 6, N: 32 }).result as any;
    const big = runRaw(tts, { seed: 6, N: 64 }).result as any;
    expect(Array.from(big.coverage).slice(0, 5)).to.deep.equal(Array.from(small.coverage).slice(0, 5));
  });
});
