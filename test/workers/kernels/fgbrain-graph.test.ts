import { expect } from 'chai';
import graph from '../../../workers/kernels/fgbrain-graph.js';
import { rejects, runBody, runRaw } from '../../helpers/kernels.js';

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
        deg[a]++;
        deg[b]++;
      }
      expect(r.spectrum.lambda2).to.be.at.most((n / (n - 1)) * Math.min(...deg) + 1e-9);
      const am = Math.max(...r.edges.map(([a, b]: number[]) => deg[a!]! + deg[b!]!));
      expect(r.spectrum.lambda_max).to.be.at.most(am + 1e-9);
      expect(r.hub.indeg).to.equal(Math.max(...r.nodes.map((x: { indeg: number }) => x.indeg)));
    }
  });

  it('is deterministic, seed-sensitive, and bounded', () => {
    expect(runBody(graph, { seed: '3' })).to.equal(runBody(graph, { seed: '3' }));
    expect(runBody(graph, { seed: '3' })).to.not.equal(runBody(graph, { seed: '4' }));
    expect(rejects(graph, { n: '7' })).to.deep.equal(['n:number.min']);
    expect(rejects(graph, { n: '97', m: '5' })).to.deep.equal(['n:number.max', 'm:number.max']);
    expect(rejects(graph, { m: 'x' })).to.deep.equal(['m:qint.parse']);
  });
});
