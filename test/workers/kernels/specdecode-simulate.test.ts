import { expect } from 'chai';
import spec from '../../../workers/kernels/specdecode-simulate.js';
import { RngStreams, type Rng } from '../../../src/lib/prng.js';
import { runRaw } from '../../helpers/kernels.js';
import { addAt } from '../../helpers/indexed.js';

/** Box–Muller (cosine branch) on two uniforms of the stream, written from the note. */
const gauss = (u: Rng): number => {
  const a = 1 - u.next();
  const b = u.next();
  return Math.sqrt(-2 * Math.log(a)) * Math.cos(2 * Math.PI * b);
};

/** Softmax through log-sum-exp (a different formulation from the kernel's max-shifted ratio). */
function softmaxLse(xs: number[]): number[] {
  const m = Math.max(...xs);
  const lse = m + Math.log(xs.reduce((s, x) => s + Math.exp(x - m), 0));
  return xs.map((x) => Math.exp(x - lse));
}

/** Inverse CDF by binary search over cumulative sums (the kernel subtracts weight by weight). */
function drawIndex(u: Rng, w: number[]): number {
  const cdf: number[] = [];
  w.reduce((s, x) => (cdf.push(s + x), s + x), 0);
  const target = u.next() * cdf.at(-1)!;
  let lo = 0;
  let hi = w.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (target < cdf[mid]!) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * The note's models redrawn from stream `model` (V target normals ×1.5, then V draft-noise normals
 * ×0.8) and the whole run replayed on stream `trials`: per draft a token ~ q and an accept uniform
 * against min(1, p/q); the first rejection emits a residual sample and ends the trial; γ accepts
 * emit a bonus token ~ p.
 */
function replay(seed: number, gamma: number, trials: number) {
  const rng = new RngStreams(seed, 'specdecode/simulate');
  const model = rng.stream('model');
  const target = Array.from({ length: 32 }, () => 1.5 * gauss(model));
  const noise = Array.from({ length: 32 }, () => 0.8 * gauss(model));
  const p = softmaxLse(target);
  const q = softmaxLse(target.map((t, i) => t + noise[i]!));
  const plus = p.map((x, i) => Math.max(0, x - q[i]!));
  const tr = rng.stream('trials');
  const hist = new Array<number>(gamma + 1).fill(0);
  const counts = new Array<number>(32).fill(0);
  for (let t = 0; t < trials; t++) {
    let a = 0;
    let rejected = false;
    while (a < gamma && !rejected) {
      const x = drawIndex(tr, q);
      if (tr.next() < Math.min(1, p[x]! / q[x]!)) {
        addAt(counts, x);
        a++;
      } else {
        addAt(counts, drawIndex(tr, plus));
        rejected = true;
      }
    }
    if (!rejected) addAt(counts, drawIndex(tr, p));
    addAt(hist, a);
  }
  return { p, q, hist, counts };
}

describe('kernel specdecode/simulate', () => {
  it('p and q redrawn from stream model; the whole run replayed from stream trials: every count and statistic', () => {
    for (const [seed, gamma, trials] of [[42, 6, 256], [7, 1, 3000], [11, 12, 2000], [3, 32, 500]] as const) {
      const r = runRaw(spec, { seed, draft_len: gamma, trials }).result as any;
      const ref = replay(seed, gamma, trials);
      ref.p.forEach((v, i) => expect(r.p[i]).to.be.closeTo(v, 1e-15));
      ref.q.forEach((v, i) => expect(r.q[i]).to.be.closeTo(v, 1e-15));
      const alpha = ref.p.reduce((s, v, i) => s + Math.min(v, ref.q[i]!), 0);
      expect(r.alpha).to.be.closeTo(alpha, 1e-14);
      expect([r.vocab_size, r.dof]).to.deep.equal([32, 31]);
      expect(r.accepted_hist).to.deep.equal(ref.hist);
      expect(r.emitted_counts).to.deep.equal(ref.counts);
      const n = ref.counts.reduce((s, c) => s + c, 0);
      const accepted = ref.hist.reduce((s, c, k) => s + c * k, 0);
      const rejections = trials - ref.hist[gamma]!;
      expect(r.emitted_tokens).to.equal(n);
      expect(r.empirical_tokens_per_iter).to.equal(n / trials);
      expect(r.draft_acceptance_rate).to.be.closeTo(accepted / (trials * gamma), 1e-15);
      expect(r.per_token_acceptance).to.be.closeTo(accepted / (accepted + rejections), 1e-15);
      const chi2 = ref.p.reduce((s, v, x) => s + (ref.counts[x]! - n * v) ** 2 / (n * v), 0);
      expect(r.chi2).to.be.closeTo(chi2, 1e-9 * chi2);
      expect(r.tv_emitted_vs_target).to.be.closeTo(ref.p.reduce((s, v, x) => s + Math.abs(ref.counts[x]! / n - v), 0) / 2, 1e-12);
    }
  });

  it('α = Σ min(p, q) recomputed from the returned distributions, in (0, 1]; naive baseline TV = 1 − α', () => {
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(spec, { seed }).result as any;
      const p: number[] = Array.from(r.p);
      const q: number[] = Array.from(r.q);
      expect(p.reduce((s, x) => s + x, 0)).to.be.closeTo(1, 1e-12);
      expect(q.reduce((s, x) => s + x, 0)).to.be.closeTo(1, 1e-12);
      const alpha = p.reduce((s, x, i) => s + Math.min(x, q[i]!), 0);
      expect(r.alpha).to.be.closeTo(alpha, 1e-12);
      expect(alpha).to.be.greaterThan(0).and.at.most(1);
      const tv = p.reduce((s, x, i) => s + Math.abs(x - q[i]!), 0) / 2;
      expect(r.tv_draft_vs_target).to.be.closeTo(tv, 1e-12);
    }
  });

  it('exact losslessness algebra: q·min(1, p/q) + (1 − α)·norm((p − q)₊) = p for every token', () => {
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(spec, { seed }).result as any;
      const p: number[] = Array.from(r.p);
      const q: number[] = Array.from(r.q);
      const plus = p.map((x, i) => Math.max(0, x - q[i]!));
      const z = plus.reduce((s, x) => s + x, 0);
      expect(r.vocab_size).to.equal(p.length);
      Array.from(r.residual as ArrayLike<number>).forEach((v, x) => expect(v).to.be.closeTo(plus[x]! / z, 1e-12));
      const alpha = 1 - z;
      p.forEach((px, x) => expect(q[x]! * Math.min(1, px / q[x]!) + (1 - alpha) * (plus[x]! / z)).to.be.closeTo(px, 1e-12));
    }
  });

  it('tokens per iteration within 4σ of (1 − α^{γ+1})/(1 − α); accepted counts pass a χ² test against the truncated geometric law', () => {
    for (let seed = 0; seed < 10; seed++) {
      const gamma = 1 + (seed % 8);
      const trials = 5000;
      const r = runRaw(spec, { seed, draft_len: gamma, trials }).result as any;
      const a = r.alpha;
      const law = Array.from({ length: gamma + 1 }, (_, k) => (k < gamma ? a ** k * (1 - a) : a ** gamma));
      law.forEach((v, k) => expect(r.expected_hist[k]).to.be.closeTo(v, 1e-12));
      const mean = law.reduce((s, v, k) => s + v * (k + 1), 0);
      const second = law.reduce((s, v, k) => s + v * (k + 1) ** 2, 0);
      expect(r.expected_tokens_per_iter).to.be.closeTo(mean, 1e-12);
      expect(Math.abs(r.empirical_tokens_per_iter - mean)).to.be.at.most(4 * Math.sqrt((second - mean * mean) / trials));
      expect(r.accepted_hist.reduce((s: number, x: number) => s + x, 0)).to.equal(trials);
      // χ² over bins with expectation ≥ 5 (pooled tail)
      let chi2 = 0;
      let dof = -1;
      let pooledO = 0;
      let pooledE = 0;
      law.forEach((v, k) => {
        const e = v * trials;
        if (e >= 5) {
          chi2 += (r.accepted_hist[k] - e) ** 2 / e;
          dof++;
        } else {
          pooledO += r.accepted_hist[k];
          pooledE += e;
        }
      });
      if (pooledE > 0) {
        chi2 += (pooledO - pooledE) ** 2 / pooledE;
        dof++;
      }
      expect(dof, 'precondition: at least two χ² bins').to.be.above(0);
      expect(chi2).to.be.below(dof + 4 * Math.sqrt(2 * dof) + 3);
      expect(r.empirical_tokens_per_iter).to.be.closeTo(r.accepted_hist.reduce((s: number, c: number, k: number) => s + c * (k + 1), 0) / trials, 1e-12);
      // acceptance rates from the histogram: k drafts accepted per trial, a rejection unless k = γ
      const accepted = r.accepted_hist.reduce((s: number, c: number, k: number) => s + c * k, 0);
      const rejections = trials - r.accepted_hist[gamma];
      expect(r.draft_acceptance_rate).to.be.closeTo(accepted / (trials * gamma), 1e-15);
      expect(r.per_token_acceptance).to.be.closeTo(accepted / (accepted + rejections), 1e-15);
      expect(r.emitted_tokens).to.equal(r.accepted_hist.reduce((s: number, c: number, k: number) => s + c * (k + 1), 0));
    }
  });

  it('emitted tokens follow p, not q: χ² < dof + 4√(2·dof) against p and far above it against q', () => {
    let farFromQ = 0;
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(spec, { seed, draft_len: 4, trials: 20000 }).result as any;
      const n = r.emitted_counts.reduce((s: number, x: number) => s + x, 0);
      expect(n).to.equal(r.emitted_tokens);
      const chi = (dist: number[]): number => dist.reduce((s, v, x) => s + (r.emitted_counts[x] - n * v) ** 2 / (n * v), 0);
      const chiP = chi(Array.from(r.p));
      expect(r.chi2).to.be.closeTo(chiP, 1e-9 * Math.max(1, chiP));
      expect(r.dof).to.equal(r.p.length - 1);
      const tv = Array.from(r.p as ArrayLike<number>).reduce((acc, v, x) => acc + Math.abs(r.emitted_counts[x] / n - v), 0) / 2;
      expect(r.tv_emitted_vs_target).to.be.closeTo(tv, 1e-12);
      expect(chiP).to.be.below(31 + 4 * Math.sqrt(62));
      if (chi(Array.from(r.q)) > 31 + 4 * Math.sqrt(62)) farFromQ++;
    }
    expect(farFromQ).to.equal(10);
  });

  it('E[A+1] increases in γ toward 1/(1 − α); the reported optimal γ is the brute-force argmax of the speedup model', () => {
    const r = runRaw(spec, { seed: 3 }).result as any;
    const a = r.alpha;
    let prev = 0;
    let best = 0;
    let bestG = 0;
    for (let g = 1; g <= 32; g++) {
      const e = (1 - a ** (g + 1)) / (1 - a);
      expect(e).to.be.greaterThan(prev);
      expect(e).to.be.below(1 / (1 - a));
      prev = e;
      const s = e / (0.1 * g + 1);
      if (s > best) {
        best = s;
        bestG = g;
      }
    }
    expect(r.speedup_model.optimal_gamma).to.equal(bestG);
    expect(r.speedup_model.optimal_speedup).to.be.closeTo(best, 1e-12);
    expect(r.speedup_model.c).to.equal(0.1);
    expect(r.speedup_model.limit_tokens_per_iter).to.be.closeTo(1 / (1 - a), 1e-9);
    expect(r.speedup_model.expected_speedup).to.be.closeTo(r.expected_tokens_per_iter / 1.6, 1e-12);
  });
});
