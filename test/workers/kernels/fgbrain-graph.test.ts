import { expect } from 'chai';
import graph from '../../../workers/kernels/fgbrain-graph.js';
import { eigenvaluesBelow, eigenvaluesByBisection, priceDag } from '../../helpers/fgbrain-reference.js';
import { runRaw } from '../../helpers/kernels.js';
import { addAt, at } from '../../helpers/indexed.js';

const laplacian = (n: number, edges: number[][]): number[][] => {
  const L = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  for (const [a, b] of edges as [number, number][]) {
    addAt(at(L, a), a);
    addAt(at(L, b), b);
    addAt(at(L, a), b, -1);
    addAt(at(L, b), a, -1);
  }
  return L;
};

/** Independent Laplacian eigenvalue check: trace and trace of L² equal Σλ and Σλ². */
function laplacianMoments(n: number, edges: number[][]): { trace: number; trace2: number } {
  const deg = new Array<number>(n).fill(0);
  for (const [a, b] of edges) {
    deg[a!]!++;
    deg[b!]!++;
  }
  // tr(L) = Σ deg; tr(L²) = Σ deg² + Σ_{i≠j} A_ij² = Σ deg² + 2|E|
  return { trace: deg.reduce((s, d) => s + d, 0), trace2: deg.reduce((s, d) => s + d * d, 0) + 2 * edges.length };
}

describe('kernel fgbrain/graph', () => {
  it('the graph is Price’s model redrawn from fgbrain/graph; clustering, hub, histogram and depth recomputed from it', () => {
    for (const [seed, n, m] of [[42, 48, 2], [7, 8, 1], [3, 30, 4], [11, 96, 3]] as const) {
      const r = runRaw(graph, { seed: String(seed), n: String(n), m: String(m) }).result as any;
      const dag = priceDag(seed, n, m);
      expect(r.edges).to.deep.equal(dag.deps.flatMap((list, t) => list.map((j) => [t, j])));
      expect(r.nodes.map((x: any) => [x.id, x.indeg, x.outdeg])).to.deep.equal(dag.indeg.map((d, i) => [i, d, dag.deps[i]!.length]));
      const maxIn = Math.max(...dag.indeg);
      expect(r.hub).to.deep.equal({ id: dag.indeg.indexOf(maxIn), indeg: maxIn });
      expect(r.indeg_histogram).to.deep.equal(Array.from({ length: maxIn + 1 }, (_, d) => dag.indeg.filter((x) => x === d).length));
      const depth: number[] = [0];
      for (let t = 1; t < n; t++) depth.push(1 + Math.max(...dag.deps[t]!.map((j) => depth[j]!)));
      expect(r.counts).to.deep.equal({ nodes: n, edges: r.edges.length, components: 1, max_depth: Math.max(...depth) });
      // Watts–Strogatz local clustering over the undirected graph, averaged over all n (degree < 2 counts 0)
      const nb = Array.from({ length: n }, () => new Set<number>());
      for (const [a, b] of r.edges) {
        nb[a]!.add(b);
        nb[b]!.add(a);
      }
      let c = 0;
      for (let i = 0; i < n; i++) {
        const ns = [...nb[i]!];
        if (ns.length < 2) continue;
        let links = 0;
        for (const x of ns) for (const y of ns) if (x < y && nb[x]!.has(y)) links++;
        c += links / ((ns.length * (ns.length - 1)) / 2);
      }
      expect(r.clustering).to.be.closeTo(c / n, 1e-12);
    }
  });

  it('the reported eigenvalues are eigenvalues: counted by the inertia of L − xI (no eigensolver), all of them for n = 8', () => {
    for (const [seed, n, m] of [[42, 48, 2], [5, 20, 3]] as const) {
      const r = runRaw(graph, { seed: String(seed), n: String(n), m: String(m) }).result as any;
      const L = laplacian(n, r.edges);
      const eps = 1e-7;
      const head = r.spectrum.head as number[];
      expect(head.length).to.equal(8);
      head.forEach((lam, k) => {
        // exactly k eigenvalues lie below the k-th (counting the copies of a repeated value before it)
        const first = head.findIndex((x) => Math.abs(x - lam) < eps);
        expect(eigenvaluesBelow(L, lam - eps), `head ${k}`).to.equal(first);
        expect(eigenvaluesBelow(L, lam + eps), `head ${k}`).to.be.above(k);
      });
      expect(r.spectrum.lambda2).to.equal(head[1]);
      expect(eigenvaluesBelow(L, r.spectrum.lambda_max - eps)).to.equal(n - 1);
      expect(eigenvaluesBelow(L, r.spectrum.lambda_max + eps)).to.equal(n);
    }
    const out = runRaw(graph, { seed: '9', n: '8', m: '2' });
    expect(out.checks).to.deep.equal({ sum_equals_twice_edges: true, lambda1_zero: true });
    const r = out.result as any;
    const all = eigenvaluesByBisection(laplacian(8, r.edges));
    r.spectrum.head.forEach((x: number, k: number) => expect(x).to.be.closeTo(all[k]!, 1e-9));
    expect(r.spectrum.lambda_max).to.be.closeTo(all[7]!, 1e-9);
    expect(r.spectrum.sum).to.be.closeTo(all.reduce((a, b) => a + b, 0), 1e-8);
  });

  it('is a DAG (dst < src) with the handshake count Σ min(m, t) for every seed', () => {
    for (let seed = 0; seed < 10; seed++) {
      for (const [n, m] of [[8, 1], [48, 2], [96, 4]] as const) {
        const r = runRaw(graph, { seed: String(seed), n: String(n), m: String(m) }).result as any;
        for (const [src, dst] of r.edges) expect(dst).to.be.lessThan(src);
        let expected = 0;
        for (let t = 1; t < n; t++) expected += Math.min(m, t);
        expect(r.counts.edges).to.equal(expected);
        const inSum = r.nodes.reduce((s: number, x: { indeg: number }) => s + x.indeg, 0);
        const outSum = r.nodes.reduce((s: number, x: { outdeg: number }) => s + x.outdeg, 0);
        expect([inSum, outSum]).to.deep.equal([expected, expected]);
        // depth recomputed from the edges
        const depth = new Array<number>(n).fill(0);
        const deps = new Map<number, number[]>();
        for (const [src, dst] of r.edges) deps.set(src, [...(deps.get(src) ?? []), dst]);
        for (let t = 1; t < n; t++) depth[t] = 1 + Math.max(...deps.get(t)!.map((j) => depth[j]!));
        expect(r.nodes.map((x: { depth: number }) => x.depth)).to.deep.equal(depth);
      }
    }
  });

  it('spectrum: λ1 = 0, Σλ = 2|E|, connected (λ2 > 0), Fiedler and Anderson–Morley bounds hold', () => {
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(graph, { seed: String(seed) }).result as any;
      const n = r.counts.nodes;
      expect(Math.abs(r.spectrum.head[0])).to.be.at.most(1e-9);
      const { trace } = laplacianMoments(n, r.edges);
      expect(r.spectrum.sum).to.be.closeTo(trace, 1e-9 * trace);
      expect(r.spectrum.sum).to.be.closeTo(2 * r.counts.edges, 1e-9 * trace);
      expect(r.counts.components).to.equal(1);
      expect(r.spectrum.lambda2).to.be.greaterThan(0);
      const deg = new Array<number>(n).fill(0);
      for (const [a, b] of r.edges) {
        addAt(deg, a);
        addAt(deg, b);
      }
      expect(r.spectrum.lambda2).to.be.at.most((n / (n - 1)) * Math.min(...deg) + 1e-9);
      const am = Math.max(...r.edges.map(([a, b]: number[]) => deg[a!]! + deg[b!]!));
      expect(r.spectrum.lambda_max).to.be.at.most(am + 1e-9);
      expect(r.hub.indeg).to.equal(Math.max(...r.nodes.map((x: { indeg: number }) => x.indeg)));
    }
  });
});
