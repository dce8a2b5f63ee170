import { expect } from 'chai';
import { Rng } from '../../../src/lib/prng.js';
import { UnionFind } from '../../../workers/lib/union-find.js';

/** Reference: connected components by repeated relabelling (quadratic, obviously correct). */
function naiveLabels(n: number, edges: [number, number][]): number[] {
  const label = Array.from({ length: n }, (_, i) => i);
  for (const [a, b] of edges) {
    const la = label[a]!;
    const lb = label[b]!;
    if (la === lb) continue;
    for (let i = 0; i < n; i++) if (label[i] === lb) label[i] = la;
  }
  return label;
}

describe('lib/union-find', () => {
  it('length is the number of elements', () => {
    expect(new UnionFind(7).length).to.equal(7);
    expect(new UnionFind(0).length).to.equal(0);
  });

  it('agrees with naive relabelling on random graphs (connectivity, set sizes, set count)', () => {
    const rng = new Rng(99);
    for (let trial = 0; trial < 40; trial++) {
      const n = 1 + rng.int(60);
      const edges: [number, number][] = Array.from({ length: rng.int(2 * n) }, () => [rng.int(n), rng.int(n)]);
      const uf = new UnionFind(n);
      for (const [a, b] of edges) uf.union(a, b);
      const ref = naiveLabels(n, edges);
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) expect(uf.connected(i, j)).to.equal(ref[i] === ref[j]);
        expect(uf.setSize(i)).to.equal(ref.filter((l) => l === ref[i]).length);
      }
      expect(uf.countSets()).to.equal(new Set(ref).size);
    }
  });

  it('union reports the surviving and absorbed roots (larger set survives) and null when already joined', () => {
    const uf = new UnionFind(5);
    expect(uf.union(0, 1)).to.deep.equal({ root: 0, absorbed: 1 });
    const r = uf.union(2, 1)!; // {2} joins the larger {0, 1}
    expect(r).to.deep.equal({ root: 0, absorbed: 2 });
    expect(uf.union(1, 2)).to.equal(null);
    expect(uf.setSize(2)).to.equal(3);
    uf.reset();
    expect(uf.countSets()).to.equal(5);
  });

  it('keeps paths short: a 100 000-element chain stays near-constant per find', () => {
    const n = 100000;
    const uf = new UnionFind(n);
    for (let i = 1; i < n; i++) uf.union(i, i - 1);
    for (let i = 0; i < n; i++) expect(uf.find(i)).to.equal(uf.find(0));
    expect(uf.setSize(n - 1)).to.equal(n);
  });
});
