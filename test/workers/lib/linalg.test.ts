import { expect } from 'chai';
import {
  cholesky,
  choleskySolve,
  cosine,
  dot,
  entropy,
  frobenius,
  get,
  gramSchmidt,
  identity,
  jacobiEigen,
  logChoose,
  logSumExp,
  matmul,
  norm,
  sigmoid,
  softmax,
  symmetricEigen,
  transpose,
  unit,
  zeros,
  type Matrix,
} from '../../../workers/lib/linalg.js';
import { Rng } from '../../../src/lib/prng.js';

const mat = (rows: number, cols: number, values: number[]): Matrix => ({ rows, cols, data: Float64Array.from(values) });
/** The textbook triple loop, written independently of `matmul`. */
const naiveProduct = (a: Matrix, b: Matrix): number[] =>
  Array.from({ length: a.rows * b.cols }, (_, t) => {
    const i = Math.floor(t / b.cols);
    const j = t % b.cols;
    let s = 0;
    for (let k = 0; k < a.cols; k++) s += a.data[i * a.cols + k]! * b.data[k * b.cols + j]!;
    return s;
  });
const randomMatrix = (rng: Rng, rows: number, cols: number): Matrix => ({ rows, cols, data: rng.normals(rows * cols) });
const symmetric = (rng: Rng, n: number): Matrix => {
  const a = rng.normals(n * n);
  return { rows: n, cols: n, data: Float64Array.from({ length: n * n }, (_, t) => a[t]! + a[(t % n) * n + Math.floor(t / n)]!) };
};
const column = (m: Matrix, j: number): number[] => Array.from({ length: m.rows }, (_, i) => m.data[i * m.cols + j]!);
/** The entry of largest magnitude (the first of equals), as the sign normalisation reads it. */
const largest = (v: number[]): number => v.reduce((big, x) => (Math.abs(x) > Math.abs(big) ? x : big), 0);

describe('lib/linalg basics', () => {
  it('zeros, identity, get and transpose', () => {
    expect(zeros(2, 3)).to.deep.equal({ rows: 2, cols: 3, data: new Float64Array(6) });
    expect(Array.from(identity(3).data)).to.deep.equal([1, 0, 0, 0, 1, 0, 0, 0, 1]);
    const m = mat(2, 3, [1, 2, 3, 4, 5, 6]);
    expect(get(m, 1, 0)).to.equal(4);
    expect(get(m, 0, 2)).to.equal(3);
    const t = transpose(m);
    expect(t.rows).to.equal(3);
    expect(t.cols).to.equal(2);
    expect(Array.from(t.data)).to.deep.equal([1, 4, 2, 5, 3, 6]);
  });

  it('matmul equals the textbook product for rectangular shapes and zero entries, and refuses mismatched shapes', () => {
    const rng = new Rng(3);
    for (const [m, k, n] of [[1, 1, 1], [2, 3, 4], [5, 2, 3], [4, 4, 1]] as const) {
      const a = randomMatrix(rng, m, k);
      a.data[0] = 0; // the skipped zero must not change the answer
      const b = randomMatrix(rng, k, n);
      const out = matmul(a, b);
      expect([out.rows, out.cols]).to.deep.equal([m, n]);
      Array.from(out.data).forEach((v, t) => expect(v).to.be.closeTo(naiveProduct(a, b)[t]!, 1e-12));
    }
    expect(Array.from(matmul(mat(2, 2, [1, 2, 3, 4]), mat(2, 2, [5, 6, 7, 8])).data)).to.deep.equal([19, 22, 43, 50]);
    expect(() => matmul(zeros(2, 3), zeros(2, 3))).to.throw('matmul shape mismatch 2x3 · 2x3');
  });

  it('dot, norm, frobenius, unit and cosine', () => {
    expect(dot([1, 2, 3], [4, -5, 6])).to.equal(12);
    expect(norm([3, 4])).to.equal(5);
    expect(frobenius(mat(2, 2, [1, 2, 2, 4]))).to.equal(5);
    expect(Array.from(unit(Float64Array.from([3, 0, 4])))).to.deep.equal([0.6, 0, 0.8]);
    const z = new Float64Array(3);
    expect(unit(z)).to.equal(z); // a zero vector comes back as it was
    expect(cosine([1, 0], [0, 2])).to.equal(0);
    expect(cosine([1, 2], [2, 4])).to.be.closeTo(1, 1e-15);
    expect(cosine([1, 2], [-2, -4])).to.be.closeTo(-1, 1e-15);
    expect(cosine([1, 1], [1, 0])).to.be.closeTo(Math.SQRT1_2, 1e-15);
    expect(cosine([3, 4], [4, 3])).to.be.closeTo(24 / 25, 1e-15); // neither norm is 1, nothing is clamped
    expect(cosine([0, 0], [1, 1])).to.equal(0);
    expect(cosine([1, 1], [0, 0])).to.equal(0);
    // rounding can push |a·b| / (|a||b|) past 1: the result is clamped
    for (let i = 1; i < 200; i++) {
      const v = [i * 0.1, i * 0.3, i * 0.7];
      expect(cosine(v, v)).to.be.at.most(1);
      expect(cosine(v, v.map((x) => -x))).to.be.at.least(-1);
    }
  });

  it('logSumExp, sigmoid and softmax agree with direct formulas and survive large inputs', () => {
    expect(logSumExp([0, Math.log(3)])).to.be.closeTo(Math.log(4), 1e-15);
    expect(logSumExp([1, 2, 3])).to.be.closeTo(Math.log(Math.E + Math.E ** 2 + Math.E ** 3), 1e-14);
    expect(logSumExp([1000, 1000])).to.be.closeTo(1000 + Math.LN2, 1e-12); // exp(1000) overflows
    expect(logSumExp([-Infinity, -Infinity])).to.equal(-Infinity);
    expect(logSumExp([])).to.equal(-Infinity);
    expect(sigmoid(0)).to.equal(0.5);
    expect(sigmoid(2)).to.be.closeTo(1 / (1 + Math.exp(-2)), 1e-16);
    expect(sigmoid(-2) + sigmoid(2)).to.be.closeTo(1, 1e-15);
    expect(sigmoid(-1000)).to.equal(0);
    expect(sigmoid(1000)).to.equal(1);
    const xs = [1, 2, 3, -1];
    const direct = xs.map((x) => Math.exp(x) / xs.reduce((s, y) => s + Math.exp(y), 0));
    Array.from(softmax(xs)).forEach((p, i) => expect(p).to.be.closeTo(direct[i]!, 1e-15));
    const big = softmax([1000, 1001]);
    expect(big[1]! / big[0]!).to.be.closeTo(Math.E, 1e-12);
    expect(big[0]! + big[1]!).to.be.closeTo(1, 1e-15);
    expect(Array.from(softmax([-5, -5, -5, -5]))).to.deep.equal([0.25, 0.25, 0.25, 0.25]);
  });

  it('entropy normalises its input and treats 0·ln 0 as 0; logChoose matches exact binomials', () => {
    expect(entropy([1, 1])).to.be.closeTo(Math.LN2, 1e-15);
    expect(entropy([2, 2, 0, 4])).to.be.closeTo(-(0.25 * Math.log(0.25) * 2 + 0.5 * Math.log(0.5)), 1e-15);
    expect(entropy([0, 5])).to.equal(0);
    expect(entropy([0, 0])).to.equal(0);
    expect(entropy([])).to.equal(0);
    expect(entropy([-1, 1])).to.equal(0); // total ≤ 0
    const choose = (n: number, k: number): number => {
      let c = 1;
      for (let i = 1; i <= k; i++) c = (c * (n - k + i)) / i;
      return c;
    };
    for (const [n, k] of [[5, 2], [10, 3], [10, 7], [20, 10], [7, 0], [7, 7], [1, 1]] as const) {
      expect(logChoose(n, k)).to.be.closeTo(Math.log(choose(n, k)), 1e-12);
      expect(logChoose(n, k)).to.be.closeTo(logChoose(n, n - k), 1e-12);
    }
    expect(logChoose(5, 0)).to.equal(0);
    expect(logChoose(5, 6)).to.equal(-Infinity);
    expect(logChoose(5, -1)).to.equal(-Infinity);
  });
});

describe('lib/linalg factorisations', () => {
  it('cholesky: L is lower-triangular with L·Lᵀ = A; a matrix that is not positive definite is refused', () => {
    const rng = new Rng(5);
    for (const n of [1, 2, 5, 9]) {
      const b = randomMatrix(rng, n, n);
      const a = matmul(b, transpose(b));
      for (let i = 0; i < n; i++) a.data[i * n + i] = a.data[i * n + i]! + 0.5;
      const l = cholesky(a);
      for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) expect(get(l, i, j), `L[${i}][${j}]`).to.equal(0);
      for (let i = 0; i < n; i++) expect(get(l, i, i)).to.be.above(0);
      Array.from(matmul(l, transpose(l)).data).forEach((v, t) => expect(v).to.be.closeTo(a.data[t]!, 1e-10));
      // and the solve: A x = b
      const rhs = rng.normals(n);
      const x = choleskySolve(l, rhs);
      const ax = matmul(a, { rows: n, cols: 1, data: x });
      Array.from(ax.data).forEach((v, i) => expect(v).to.be.closeTo(rhs[i]!, 1e-9));
    }
    expect(Array.from(cholesky(mat(2, 2, [4, 2, 2, 5])).data)).to.deep.equal([2, 0, 1, 2]);
    // L = [[2, 0], [1, 2]] is the factor of [[4, 2], [2, 5]]: 4x + 2y = 8 and 2x + 5y = 9 give (1.375, 1.25)
    expect(Array.from(choleskySolve(mat(2, 2, [2, 0, 1, 2]), [8, 9]))).to.deep.equal([1.375, 1.25]);
    expect(() => cholesky(mat(2, 2, [1, 2, 2, 1]))).to.throw('cholesky: matrix is not positive definite');
    expect(() => cholesky(mat(2, 2, [1, 1, 1, 1]))).to.throw('not positive definite'); // a zero pivot (semi-definite)
    expect(() => cholesky(mat(1, 1, [-1]))).to.throw('not positive definite');
  });

  it('gramSchmidt: Q has orthonormal columns, R is upper-triangular with a positive diagonal, and Q·R = A', () => {
    const rng = new Rng(9);
    for (const [m, n] of [[3, 3], [6, 4], [8, 1]] as const) {
      const a = randomMatrix(rng, m, n);
      const { q, r } = gramSchmidt(a);
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) {
          expect(dot(column(q, i), column(q, j))).to.be.closeTo(i === j ? 1 : 0, 1e-12);
          if (i > j) expect(get(r, i, j)).to.equal(0);
        }
        expect(get(r, i, i)).to.be.above(0);
      }
      Array.from(matmul(q, r).data).forEach((v, t) => expect(v).to.be.closeTo(a.data[t]!, 1e-12));
    }
    // a dependent column: its R diagonal is (numerically) zero and nothing is divided by it
    const dep = gramSchmidt(mat(2, 2, [1, 2, 0, 0]));
    expect(get(dep.r, 0, 0)).to.equal(1);
    expect(get(dep.r, 0, 1)).to.equal(2);
    expect(get(dep.r, 1, 1)).to.equal(0);
    expect(Array.from(dep.q.data)).to.deep.equal([1, 0, 0, 0]);
  });
});

describe('lib/linalg eigensolvers', () => {
  it('jacobiEigen: ascending values, A·v = λ·v, orthonormal vectors, each with its largest entry positive', () => {
    const rng = new Rng(13);
    for (const n of [1, 2, 4, 9]) {
      const a = symmetric(rng, n);
      const { values, vectors } = jacobiEigen(a);
      for (let k = 1; k < n; k++) expect(values[k]!).to.be.at.least(values[k - 1]!);
      let trace = 0;
      for (let i = 0; i < n; i++) trace += a.data[i * n + i]!;
      expect(values.reduce((s, v) => s + v, 0)).to.be.closeTo(trace, 1e-10);
      for (let k = 0; k < n; k++) {
        const v = column(vectors, k);
        expect(largest(v)).to.be.above(0);
        expect(norm(v)).to.be.closeTo(1, 1e-12);
        const av = naiveProduct(a, { rows: n, cols: 1, data: Float64Array.from(v) });
        av.forEach((x, i) => expect(x).to.be.closeTo(values[k]! * v[i]!, 1e-9));
        for (let l = k + 1; l < n; l++) expect(dot(v, column(vectors, l))).to.be.closeTo(0, 1e-12);
      }
    }
    // [[2, 1], [1, 2]]: 1 with (1, −1)/√2 (its largest entry, the first of equals, made positive), 3 with (1, 1)/√2
    const two = jacobiEigen(mat(2, 2, [2, 1, 1, 2]));
    expect(Array.from(two.values).map((v) => Math.round(v * 1e12) / 1e12)).to.deep.equal([1, 3]);
    expect(column(two.vectors, 0).map((x) => Math.round(x * 1e12) / 1e12)).to.deep.equal([0.707106781187, -0.707106781187]);
    expect(column(two.vectors, 1).map((x) => Math.round(x * 1e12) / 1e12)).to.deep.equal([0.707106781187, 0.707106781187]);
    // already diagonal (no rotation), and the zero matrix (no sweep): values sorted, vectors the unit axes
    const diag = jacobiEigen(mat(3, 3, [3, 0, 0, 0, -1, 0, 0, 0, 2]));
    expect(Array.from(diag.values)).to.deep.equal([-1, 2, 3]);
    expect(Array.from(diag.vectors.data)).to.deep.equal([0, 0, 1, 1, 0, 0, 0, 1, 0]);
    expect(Array.from(jacobiEigen(zeros(2, 2)).values)).to.deep.equal([0, 0]);
    expect(() => jacobiEigen(zeros(2, 3))).to.throw('jacobiEigen needs a square matrix');
  });

  it('symmetricEigen agrees with the Jacobi solver and satisfies Av = λv with orthonormal vectors', () => {
    const rng = new Rng(11);
    for (const n of [1, 2, 3, 7, 24, 64]) {
      const { data: s } = symmetric(rng, n);
      const { values, vectors } = symmetricEigen(s, n);
      const ref = jacobiEigen({ rows: n, cols: n, data: s });
      const refDesc = Array.from(ref.values).reverse();
      values.forEach((v, i) => expect(v).to.be.closeTo(refDesc[i]!, 1e-10 * n));
      for (let k = 0; k < n; k++) {
        const vk = Array.from({ length: n }, (_, i) => vectors[i * n + k]!);
        expect(largest(vk), `vector ${k} sign`).to.be.above(0);
        // distinct eigenvalues (random matrices): the same vector as Jacobi's, sign included
        const jv = column(ref.vectors, n - 1 - k);
        vk.forEach((x, i) => expect(x).to.be.closeTo(jv[i]!, 1e-7));
        for (let i = 0; i < n; i++) {
          let av = 0;
          for (let j = 0; j < n; j++) av += s[i * n + j]! * vectors[j * n + k]!;
          expect(av).to.be.closeTo(values[k]! * vectors[i * n + k]!, 1e-11 * n);
        }
        for (let l = 0; l < n; l++) {
          let ip = 0;
          for (let i = 0; i < n; i++) ip += vectors[i * n + k]! * vectors[i * n + l]!;
          expect(ip).to.be.closeTo(k === l ? 1 : 0, 1e-12 * n);
        }
      }
    }
    // degenerate spectra: identity and an already-diagonal matrix
    const id = symmetricEigen(Float64Array.from({ length: 25 }, (_, t) => (t % 6 === 0 ? 1 : 0)), 5);
    expect(Array.from(id.values)).to.deep.equal([1, 1, 1, 1, 1]);
    const diag = symmetricEigen(Float64Array.from([1, 0, 0, 0, 3, 0, 0, 0, 2]), 3);
    expect(Array.from(diag.values)).to.deep.equal([3, 2, 1]);
    expect(Array.from(diag.vectors)).to.deep.equal([0, 0, 1, 1, 0, 0, 0, 1, 0]);
  });

  it('symmetricEigen on structured matrices: a known spectrum, a split tridiagonal, and a block whose Householder column is already zero', () => {
    // [[2, 1], [1, 2]]: the vector of 1 is ±(1, −1)/√2, two entries of equal magnitude; the first is made positive
    const two = symmetricEigen(Float64Array.from([2, 1, 1, 2]), 2);
    expect(two.values[0]).to.equal(3);
    expect(two.values[1]).to.be.closeTo(1, 1e-15);
    const r = 0.7071067811865475; // the computed 1/√2, one ulp below Math.SQRT1_2
    expect(Array.from(two.vectors)).to.deep.equal([r, r, r, -r]);
    // the path graph's Laplacian-like tridiagonal 2, −1: eigenvalues 2 − 2cos(kπ/(n+1))
    const n = 8;
    const t = new Float64Array(n * n);
    for (let i = 0; i < n; i++) {
      t[i * n + i] = 2;
      if (i + 1 < n) t[i * n + i + 1] = t[(i + 1) * n + i] = -1;
    }
    const want = Array.from({ length: n }, (_, k) => 2 - 2 * Math.cos(((k + 1) * Math.PI) / (n + 1))).sort((a, b) => b - a);
    Array.from(symmetricEigen(t, n).values).forEach((v, i) => expect(v).to.be.closeTo(want[i]!, 1e-12));
    // two decoupled 2×2 blocks (a zero off-diagonal splits the QL problem): spectra {3, 1} and {5, −1}
    const split = Float64Array.from([2, 1, 0, 0, 1, 2, 0, 0, 0, 0, 2, 3, 0, 0, 3, 2]);
    expect(Array.from(symmetricEigen(split, 4).values).map((v) => Math.round(v * 1e12) / 1e12)).to.deep.equal([5, 3, 1, -1]);
    // a full 3×3 with a known spectrum: [[4,1,2],[1,3,0],[2,0,5]] has trace 12 and determinant 43
    const full = Float64Array.from([4, 1, 2, 1, 3, 0, 2, 0, 5]);
    const fv = symmetricEigen(full, 3).values;
    expect(fv[0]! + fv[1]! + fv[2]!).to.be.closeTo(12, 1e-12);
    expect(fv[0]! * fv[1]! * fv[2]!).to.be.closeTo(43, 1e-10);
    expect(fv[0]).to.be.above(fv[1]!);
    expect(fv[1]).to.be.above(fv[2]!);
  });
});
