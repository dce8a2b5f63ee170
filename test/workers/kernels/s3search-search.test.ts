import { expect } from 'chai';
import s3, { decode } from '../../../workers/kernels/s3search-search.js';
import { rejects, runBody, runRaw } from '../../helpers/kernels.js';

/** The objective written out from the returned landscape. */
function f(land: { heights: number[]; widths: number[]; centres: number[][] }, x: number[]): number {
  return land.heights.reduce((acc, h, b) => acc + h * Math.exp(-x.reduce((s, v, k) => s + (v - land.centres[b]![k]!) ** 2, 0) / (2 * land.widths[b]! ** 2)), 0);
}

describe('kernel s3search/search', () => {
  it('never beats the brute-force optimum recomputed in the test; best-so-far is monotone (10 seeds)', () => {
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(s3, { seed: String(seed), dim: '3' }).result as any;
      let max = -Infinity;
      for (let i = 0; i < 512; i++) max = Math.max(max, f(r.landscape, decode(i, 3)));
      expect(r.global_max).to.be.closeTo(max, 1e-12);
      expect(r.best_value).to.be.at.most(max + 1e-12);
      expect(r.best_value).to.be.closeTo(f(r.landscape, r.best_point), 1e-12);
      expect(r.regret).to.be.at.least(0);
      expect(r.evaluations).to.be.at.most(64);
      for (let i = 1; i < r.best_so_far.length; i++) expect(r.best_so_far[i]).to.be.at.least(r.best_so_far[i - 1]);
      expect(r.best_so_far.at(-1)).to.be.closeTo(r.best_value, 1e-11);
    }
  });

  it('budget 1 evaluates only the start; a full-width, full-budget search is a BFS that finds the optimum', () => {
    const one = runRaw(s3, { budget: '1' }).result as any;
    expect(one.evaluations).to.equal(1);
    expect(one.best_point).to.deep.equal(one.start_point);
    for (let seed = 0; seed < 5; seed++) {
      const all = runRaw(s3, { seed: String(seed), dim: '2', budget: '64', frontier: '64' }).result as any;
      expect(all.evaluations).to.equal(64);
      expect(all.found_global).to.equal(true);
    }
  });

  it('mean regret falls with budget over 10 seeds', () => {
    const mean = (budget: number) => {
      let s = 0;
      for (let seed = 0; seed < 10; seed++) s += (runRaw(s3, { seed: String(seed), budget: String(budget) }).result as any).regret;
      return s / 10;
    };
    expect(mean(1024)).to.be.below(mean(16));
  });

  it('is deterministic, seed-sensitive and bounded', () => {
    expect(runBody(s3, { seed: '2' })).to.equal(runBody(s3, { seed: '2' }));
    expect(runBody(s3, { seed: '2' })).to.not.equal(runBody(s3, { seed: '3' }));
    expect(rejects(s3, { dim: '6' })).to.deep.equal(['dim:number.max']);
    expect(rejects(s3, { beta: '-1', frontier: '0' })).to.deep.equal(['frontier:number.min', 'beta:number.min']);
  });
});
