import { expect } from 'chai';
import { jacobiEigen, symmetricEigen } from '../../../workers/lib/linalg.js';
import { Rng } from '../../../src/lib/prng.js';

describe('lib/linalg symmetricEigen (Householder + implicit QL)', () => {
  it('symmetricEigen agrees with the Jacobi solver and satisfies Av = λv with orthonormal vectors', () => {
    const rng = new Rng(11);
    for (const n of [1, 2, 3, 7, 24, 64]) {
      const a = rng.normals(n * n);
      const s = new Float64Array(n * n);
      for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) s[i * n + j] = a[i * n + j]! + a[j * n + i]!;
      const { values, vectors } = symmetricEigen(s, n);
      const ref = Array.from(jacobiEigen({ rows: n, cols: n, data: s }).values).reverse();
      values.forEach((v, i) => expect(v).to.be.closeTo(ref[i]!, 1e-10 * n));
      for (let k = 0; k < n; k++) {
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
  });
});
