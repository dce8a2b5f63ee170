import { expect } from 'chai';
import {
  adjustedRandIndex,
  answerDistribution,
  discreteSE,
  EMBED_DIM,
  entropyOfCounts,
  equivalent,
  greedyCluster,
  labelsOf,
  lexicalEntropy,
  likelihoodSE,
  millerMadow,
  purity,
  sampleAnswers,
} from '../../../workers/lib/semantic-entropy.js';
import { Rng } from '../../../src/lib/prng.js';

const ans = (string: string, e: number[], loglik = 0) => ({ string, embedding: Float64Array.from(e), loglik });

describe('lib/semantic-entropy', () => {
  it('ARI matches hand-computed values (Hubert & Arabie) and is label-permutation invariant', () => {
    expect(adjustedRandIndex([0, 0, 1, 1], [1, 1, 0, 0])).to.equal(1);
    // contingency [[2,0,0],[0,1,1]]: index 1, sums 2 and 1, expected 1/3, max 3/2 → (1 − 1/3)/(3/2 − 1/3) = 4/7
    expect(adjustedRandIndex([0, 0, 1, 1], [0, 0, 1, 2])).to.be.closeTo(4 / 7, 1e-15);
    expect(adjustedRandIndex([0, 0, 0, 0], [0, 1, 2, 3])).to.equal(0);
    expect(adjustedRandIndex([0, 0, 0], [5, 5, 5])).to.equal(1);
    // 6 items, a = [0,0,0,1,1,1], b = [0,0,1,1,2,2]: index 2, sums 6 and 3, total 15
    expect(adjustedRandIndex([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2])).to.be.closeTo((2 - 18 / 15) / (4.5 - 18 / 15), 1e-15);
    expect(adjustedRandIndex([0, 1, 0, 1, 0, 1], [0, 0, 1, 1, 2, 2])).to.be.below(0);
  });

  it('edge cases: ARI of one item or none is 1, unequal lengths are refused; empty counts add nothing; unclustered items are labelled -1', () => {
    expect(adjustedRandIndex([0], [3])).to.equal(1);
    expect(adjustedRandIndex([], [])).to.equal(1);
    expect(() => adjustedRandIndex([0, 1], [0])).to.throw(/differ in length/);
    expect(entropyOfCounts([2, 0, 2])).to.be.closeTo(Math.log(2), 1e-15);
    expect(entropyOfCounts([0, 3])).to.equal(0);
    expect(labelsOf([[2], [0]], 4)).to.deep.equal([1, -1, 0, -1]);
    // the same string matches whatever the embeddings say; different strings need the cosine
    expect(equivalent(ans('x', [1, 0]), ans('x', [0, 1]), 0.9)).to.equal(true);
    expect(equivalent(ans('x', [1, 0]), ans('y', [0, 1]), 0.9)).to.equal(false);
    expect(equivalent(ans('x', [1, 0]), ans('y', [2, 0]), 1)).to.equal(true);
  });

  it('clusters greedily against the first member only, in creation order; same strings always match', () => {
    const a = ans('a', [1, 0]);
    const b = ans('b', [Math.cos(0.5), Math.sin(0.5)]); // cos(a, b) ≈ 0.878
    const c = ans('c', [Math.cos(1.0), Math.sin(1.0)]); // cos(a, c) ≈ 0.540, cos(b, c) ≈ 0.878
    expect(greedyCluster([a, b, c], 0.6)).to.deep.equal([[0, 1], [2]]);
    expect(greedyCluster([b, a, c], 0.6)).to.deep.equal([[0, 1, 2]]);
    expect(greedyCluster([a, b, c], -1)).to.deep.equal([[0, 1, 2]]);
    expect(greedyCluster([a, b, a, c], 1)).to.deep.equal([[0, 2], [1], [3]]);
    // identical strings match at threshold 1 even when the embedding's self-cosine rounds below 1
    const odd = ans('x', [0.1, 0.7, 0.3]);
    expect(equivalent(odd, { ...odd }, 1)).to.equal(true);
    expect(equivalent(a, c, 0.55)).to.equal(false);
    expect(equivalent(a, c, 0.54)).to.equal(true);
  });

  it('computes the estimators from counts and unique-string likelihoods', () => {
    expect(entropyOfCounts([2, 2])).to.be.closeTo(Math.LN2, 1e-15);
    expect(entropyOfCounts([5])).to.equal(0);
    expect(discreteSE([[0, 1, 2], [3]])).to.be.closeTo(-(0.75 * Math.log(0.75) + 0.25 * Math.log(0.25)), 1e-15);
    expect(millerMadow([[0, 1, 2], [3]], 4)).to.be.closeTo(discreteSE([[0, 1, 2], [3]]) + 1 / 8, 1e-15);
    // cluster 0 holds strings s (twice) and t; cluster 1 holds u: P ∝ (q_s + q_t, q_u)
    const xs = [ans('s', [1], Math.log(0.2)), ans('s', [1], Math.log(0.2)), ans('t', [1], Math.log(0.1)), ans('u', [1], Math.log(0.1))];
    const p = 0.3 / 0.4;
    expect(likelihoodSE(xs, [[0, 1, 2], [3]])).to.be.closeTo(-(p * Math.log(p) + (1 - p) * Math.log(1 - p)), 1e-15);
    expect(lexicalEntropy(xs)).to.be.closeTo(entropyOfCounts([2, 1, 1]), 1e-15);
    expect(purity([0, 0, 1, 1], [0, 1, 1, 1])).to.equal(0.75);
  });

  it('simulates a normalised answer distribution whose identical strings share one unit embedding', () => {
    const rng = new Rng(5);
    const d = answerDistribution(rng, 7);
    expect(d.pi.reduce((s, v) => s + v, 0)).to.be.closeTo(1, 1e-15);
    expect(d.q.reduce((s, v) => s + v, 0)).to.be.closeTo(1, 1e-15);
    for (const e of d.embeddings) {
      expect(e.length).to.equal(EMBED_DIM);
      expect(Math.hypot(...e)).to.be.closeTo(1, 1e-15);
    }
    const xs = sampleAnswers(new Rng(6), d, 300);
    const byString = new Map<string, Float64Array>();
    for (const a of xs) {
      expect(a.string).to.equal(`c${a.meaning}-v${a.paraphrase}`);
      expect(a.loglik).to.be.closeTo(Math.log(d.q[a.meaning * 3 + a.paraphrase]!), 1e-15);
      if (byString.has(a.string)) expect(byString.get(a.string)).to.equal(a.embedding);
      byString.set(a.string, a.embedding);
    }
    // empirical frequency of paraphrase 0 is about 1/2 (4σ)
    const f0 = xs.filter((a) => a.paraphrase === 0).length / 300;
    expect(Math.abs(f0 - 0.5)).to.be.below(4 * Math.sqrt(0.25 / 300));
  });
});
