import { expect } from 'chai';
import tts from '../../../workers/kernels/testtime-scaling.js';
import { rejects, runBody, runRaw } from '../../helpers/kernels.js';

const M = 128;

/** ln C(n, k) by lgamma-free summation. */
function lnChoose(n: number, k: number): number {
  let s = 0;
  for (let i = 0; i < k; i++) s += Math.log(n - i) - Math.log(i + 1);
  return s;
}

describe('kernel testtime/scaling', () => {
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

  it('compute-matched comparison and power-law fit are recomputed from the returned curves', () => {
    const r = runRaw(tts, { seed: 3, p: 0.1, N: 512, steps: 5 }).result as any;
    const par = r.problem_p.reduce((s: number, p: number) => s + 1 - (1 - p) ** 6, 0) / M;
    const seq = r.problem_p.reduce((s: number, p: number) => s + 1 - (1 - p) * 0.85 ** 5, 0) / M;
    expect(r.compute_matched.budget).to.equal(6);
    expect(r.compute_matched.parallel).to.be.closeTo(par, 1e-12);
    expect(r.compute_matched.sequential).to.be.closeTo(seq, 1e-12);
    expect(r.compute_matched.recommended).to.equal(par >= seq ? 'parallel' : 'sequential');
    const pts = r.budgets.map((n: number, k: number) => [Math.log(n), r.coverage[k]]).filter(([, c]: number[]) => c! > 0 && c! < 1);
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
    expect(r.power_law_fit.b).to.be.greaterThan(0);
  });

  it('is deterministic and seed-sensitive; samples are nested prefixes across N; refuses bad parameters', () => {
    expect(runBody(tts, { seed: 5 })).to.equal(runBody(tts, { seed: 5 }));
    expect(runBody(tts, { seed: 1 })).to.not.equal(runBody(tts, { seed: 2 }));
    const small = runRaw(tts, { seed: 6, N: 32 }).result as any;
    const big = runRaw(tts, { seed: 6, N: 64 }).result as any;
    expect(Array.from(big.coverage).slice(0, 5)).to.deep.equal(Array.from(small.coverage).slice(0, 5));
    expect(rejects(tts, { p: '-0.1', N: '0', steps: '0' })).to.deep.equal(['p:number.min', 'N:number.min', 'steps:number.min']);
    expect(rejects(tts, { p: '1.01', N: '2049', steps: '65' })).to.deep.equal(['p:number.max', 'N:number.max', 'steps:number.max']);
    expect(rejects(tts, { p: 'NaN', N: '1e3' })).to.deep.equal(['p:qnum.parse', 'N:qint.parse']);
    expect(rejects(tts, { p: '1', N: '2048', steps: '64' })).to.deep.equal([]);
  });
});
