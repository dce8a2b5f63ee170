import { expect } from 'chai';
import { cpuMsOf } from '../../helpers/cpu-time.js';
import { InfeasibleAssignmentError, solveAssignment, solveAssignmentRows } from '../../../workers/lib/assignment.js';
import { Rng } from '../../../src/lib/prng.js';

/** Brute force: minimum over all injective maps of the smaller side into the larger. */
function bruteForce(c: number[][]): number {
  const n = c.length;
  const m = c[0]!.length;
  const rows = n <= m;
  const small = rows ? n : m;
  const large = rows ? m : n;
  const cost = (i: number, j: number): number => (rows ? c[i]![j]! : c[j]![i]!);
  let best = Infinity;
  const used = new Array<boolean>(large).fill(false);
  const rec = (i: number, acc: number): void => {
    if (i === small) {
      best = Math.min(best, acc);
      return;
    }
    for (let j = 0; j < large; j++) {
      if (used[j] || !Number.isFinite(cost(i, j))) continue;
      used[j] = true;
      rec(i + 1, acc + cost(i, j));
      used[j] = false;
    }
  };
  rec(0, 0);
  return best;
}

function randomMatrix(rng: Rng, n: number, m: number, forbidden = 0): number[][] {
  return Array.from({ length: n }, () => Array.from({ length: m }, () => (rng.next() < forbidden ? Infinity : Math.round(rng.uniform(-5, 20) * 1000) / 1000)));
}

describe('lib/assignment (Hungarian, shortest augmenting paths)', () => {
  it('matches brute force on square, wide and tall matrices, with forbidden pairs', () => {
    const rng = new Rng(123);
    let checked = 0;
    for (let trial = 0; trial < 300; trial++) {
      const n = 1 + rng.int(6);
      const m = 1 + rng.int(7);
      const c = randomMatrix(rng, n, m, trial % 3 === 0 ? 0.3 : 0);
      const best = bruteForce(c);
      if (!Number.isFinite(best)) {
        expect(() => solveAssignmentRows(c)).to.throw(InfeasibleAssignmentError);
        continue;
      }
      const a = solveAssignmentRows(c);
      expect(a.cost).to.be.closeTo(best, 1e-9);
      // a consistent, injective matching of size min(n, m) over allowed pairs
      const matched = Array.from(a.rowToCol).filter((j) => j >= 0);
      expect(matched.length).to.equal(Math.min(n, m));
      expect(new Set(matched).size).to.equal(matched.length);
      let sum = 0;
      a.rowToCol.forEach((j, i) => {
        if (j < 0) return;
        expect(a.colToRow[j]).to.equal(i);
        expect(Number.isFinite(c[i]![j]!)).to.equal(true);
        sum += c[i]![j]!;
      });
      expect(sum).to.be.closeTo(a.cost, 1e-9);
      checked++;
    }
    expect(checked).to.be.greaterThan(200);
  });

  it('returns dual potentials that certify optimality (feasible, tight on matches, strong duality)', () => {
    const rng = new Rng(7);
    for (let trial = 0; trial < 50; trial++) {
      const n = 1 + rng.int(12);
      const m = n + rng.int(10);
      const c = randomMatrix(rng, n, m);
      const a = solveAssignmentRows(c);
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < m; j++) expect(a.u[i]! + a.v[j]!).to.be.at.most(c[i]![j]! + 1e-9);
        expect(a.u[i]! + a.v[a.rowToCol[i]!]!).to.be.closeTo(c[i]![a.rowToCol[i]!]!, 1e-9);
      }
      const dual = a.u.reduce((s, x) => s + x, 0) + a.v.reduce((s, x) => s + x, 0);
      expect(dual).to.be.closeTo(a.cost, 1e-8);
    }
  });

  it('solves a known 3×3 instance and rejects a wrongly sized cost array', () => {
    const a = solveAssignmentRows([
      [4, 1, 3],
      [2, 0, 5],
      [3, 2, 2],
    ]);
    expect(Array.from(a.rowToCol)).to.deep.equal([1, 0, 2]);
    expect(a.cost).to.equal(5);
    expect(() => solveAssignment(new Float64Array(5), 2, 3)).to.throw(RangeError);
    expect(solveAssignment(new Float64Array(0), 0, 0).cost).to.equal(0);
  });

  it('names the row left without an allowed column, and refuses a ragged matrix', () => {
    // row 1 has only column 0, which row 0 needs too: the second row cannot be placed
    const blocked = () => solveAssignmentRows([
      [1, Infinity],
      [2, Infinity],
    ]);
    expect(blocked).to.throw(InfeasibleAssignmentError);
    try {
      blocked();
    } catch (err) {
      expect((err as InfeasibleAssignmentError).row).to.equal(1);
    }
    // a row with no allowed column at all is the first one named
    expect(() => solveAssignmentRows([[Infinity, NaN]])).to.throw(InfeasibleAssignmentError, 'row 0');
    expect(() => solveAssignmentRows([[1, 2], [3]])).to.throw(RangeError, 'ragged');
  });

  it('solves 40 × 180 (the track-association worst case) in a few milliseconds', () => {
    const rng = new Rng(1);
    const c = new Float64Array(40 * 180).map(() => rng.uniform(0, 100));
    // CPU time of this thread, so a loaded machine (waiting for a CPU) does not count
    const { ms } = cpuMsOf(() => {
      for (let k = 0; k < 10; k++) solveAssignment(c, 40, 180);
    });
    expect(ms / 10, 'ms of CPU per solve').to.be.below(20);
  });
});
