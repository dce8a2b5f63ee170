import { expect } from 'chai';
import { auroc, topK } from '../../../workers/lib/ranking.js';
import { Rng } from '../../../src/lib/prng.js';

/** Reference top-k: a full stable sort by value descending, index ascending. */
const slowTopK = (a: number[], k: number): number[] =>
  a
    .map((v, i) => [v, i] as const)
    .sort((x, y) => y[0] - x[0] || x[1] - y[1])
    .slice(0, Math.max(0, k))
    .map((x) => x[1]);

/** Reference AUROC: the Mann–Whitney count written over explicit positive/negative lists. */
function slowAuroc(scores: number[], labels: number[]): number | null {
  const pos = scores.filter((_, i) => labels[i] === 1);
  const neg = scores.filter((_, i) => labels[i] === 0);
  if (!pos.length || !neg.length) return null;
  let w = 0;
  for (const p of pos) for (const n of neg) w += p > n ? 1 : p === n ? 0.5 : 0;
  return w / (pos.length * neg.length);
}

describe('lib/ranking', () => {
  it('topK equals a full sort (descending, ties to the lower index) for random inputs with ties, every k', () => {
    const rng = new Rng(3);
    for (let trial = 0; trial < 200; trial++) {
      const m = rng.int(30);
      // few distinct values, so ties are common
      const a = Array.from({ length: m }, () => rng.int(6) - 2);
      for (const k of [0, 1, 2, 5, m, m + 3]) expect(topK(a, k), `${a} k=${k}`).to.deep.equal(slowTopK(a, k));
    }
    expect(topK([1, 2, 3], -1)).to.deep.equal([]);
    expect(topK(Float64Array.from([0.5, 0.9, 0.9, 0.1]), 2)).to.deep.equal([1, 2]);
  });

  it('auroc equals the Mann–Whitney count with ties as ½, and is null without both classes', () => {
    const rng = new Rng(4);
    for (let trial = 0; trial < 200; trial++) {
      const m = 1 + rng.int(25);
      const scores = Array.from({ length: m }, () => rng.int(5));
      const labels = Array.from({ length: m }, () => rng.int(3)); // 2 is neither class and is ignored
      const want = slowAuroc(scores, labels);
      const got = auroc(scores, labels);
      if (want === null) expect(got).to.equal(null);
      else expect(got).to.be.closeTo(want, 1e-15);
    }
    expect(auroc([0.9, 0.1], [1, 0])).to.equal(1);
    expect(auroc([0.1, 0.9], [1, 0])).to.equal(0);
    expect(auroc([0.5, 0.5], [1, 0])).to.equal(0.5);
    expect(auroc([1, 2], [1, 1])).to.equal(null);
  });
});
