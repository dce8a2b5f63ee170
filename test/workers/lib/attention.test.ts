import { expect } from 'chai';
import { attendRow, causalSoftmaxAttention, headRows, maxAbsDiff, project, subsetWeights } from '../../../workers/lib/attention.js';
import { Rng } from '../../../src/lib/prng.js';

describe('lib/attention', () => {
  it('causal softmax attention matches a naive per-row reference, with causal row-stochastic weights', () => {
    const rng = new Rng(3);
    const [T, dk, dv] = [9, 4, 3];
    const Q = rng.normals(T * dk);
    const K = rng.normals(T * dk);
    const V = rng.normals(T * dv);
    const { out, weights } = causalSoftmaxAttention(Q, K, V, T, dk, dv, { keepWeights: true });
    for (let t = 0; t < T; t++) {
      const s = Array.from({ length: t + 1 }, (_, j) => Array.from({ length: dk }, (_, i) => Q[t * dk + i]! * K[j * dk + i]!).reduce((a, b) => a + b, 0) / 2);
      const e = s.map(Math.exp);
      const z = e.reduce((a, b) => a + b, 0);
      for (let c = 0; c < dv; c++) expect(out[t * dv + c]).to.be.closeTo(e.reduce((a, w, j) => a + (w / z) * V[j * dv + c]!, 0), 1e-13);
      let sum = 0;
      for (let j = 0; j < T; j++) {
        const a = weights![t * T + j]!;
        if (j > t) expect(a).to.equal(0);
        sum += a;
      }
      expect(sum).to.be.closeTo(1, 1e-14);
    }
  });

  it('attendRow is invariant to a constant shift of the scores and handles large logits', () => {
    const K = Float64Array.from([1000, 0, 1001, 0]);
    const V = Float64Array.from([1, 2]);
    const out = new Float64Array(1);
    attendRow(Float64Array.from([1, 0]), 0, K, V, 1, 2, 1, 1, out, 0);
    const e = Math.exp(1);
    expect(out[0]).to.be.closeTo((1 + 2 * e) / (1 + e), 1e-14);
  });

  it('attendRow overwrites a dirty output, needs no scratch or a long enough one, and subtracts the true maximum', () => {
    // scores 1000 and 0 (the largest first): shifting by anything but the maximum overflows exp
    const K = Float64Array.from([1000, 0, 0, 0]);
    const V = Float64Array.from([3, 5, 7, 11]);
    // weights [1, e^-1000] = [1, 0] in doubles: the output is the first value row
    const expected = [3, 5];
    for (const scratch of [undefined, new Float64Array(1), new Float64Array(2), new Float64Array(8).fill(9)]) {
      const out = new Float64Array(4).fill(-7);
      attendRow(Float64Array.from([1, 0]), 0, K, V, 1, 2, 2, 1, out, 2, undefined, 0, scratch);
      expect(Array.from(out)).to.deep.equal([-7, -7, ...expected]);
    }
    const w = new Float64Array(2).fill(5);
    subsetWeights(Float64Array.from([1, 0]), 0, K, [0, 1], 2, 2, 1, w);
    expect(Array.from(w)).to.deep.equal([1, 0]);
  });

  it('project, maxAbsDiff and headRows', () => {
    const Y = project(Float64Array.from([1, 2, 3, 4]), 2, 2, Float64Array.from([1, 0, 1, 0, 1, 1]), 3);
    expect(Array.from(Y)).to.deep.equal([1, 2, 3, 3, 4, 7]);
    expect(maxAbsDiff([1, 2], [1.5, 0])).to.equal(2);
    expect(() => maxAbsDiff([1], [1, 2])).to.throw(RangeError);
    expect(headRows(Y, 3, 8)).to.deep.equal([[1, 2, 3], [3, 4, 7]]);
  });
});
