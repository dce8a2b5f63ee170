/**
 * The fgbrain substrate and its spectrum (kernels-a 1.4): a Price cumulative-advantage dependency
 * DAG (de Solla Price 1976) and the Laplacian spectrum of its undirected graph (Fiedler 1973).
 */
import { defineKernel } from '../kernel-def.js';
import { buildSubstrate, undirected } from '../lib/fgbrain.js';
import { jacobiEigen, zeros } from '../lib/linalg.js';
import { int } from '../../src/lib/params.js';

/** What `n` and `m` mean on every fgbrain route that grows the graph. */
export const GRAPH_DOC = {
  n: 'nodes of the dependency DAG (Price cumulative-advantage growth)',
  m: 'edges each new node attaches to earlier nodes (Price model out-degree)',
};

export const graphParams = { n: int(8, 96, 48).description(GRAPH_DOC.n), m: int(1, 4, 2).description(GRAPH_DOC.m) };

export function components(adj: number[][]): number {
  const seen = new Uint8Array(adj.length);
  let count = 0;
  for (let s = 0; s < adj.length; s++) {
    if (seen[s]) continue;
    count++;
    const queue = [s];
    seen[s] = 1;
    while (queue.length) for (const q of adj[queue.pop()!]!) if (!seen[q]) { seen[q] = 1; queue.push(q); }
  }
  return count;
}

export default defineKernel({
  id: 'fgbrain/graph',
  version: 1,
  input: 'query',
  summary: 'Dependency DAG grown by Price’s cumulative-advantage model, with depth, clustering and its Laplacian spectrum',
  technique: 'Price model (cumulative advantage) dependency DAG; Laplacian spectrum by cyclic Jacobi',
  references: ['doi:10.1002/asi.4630270505', 'doi:10.21136/CMJ.1973.101168', 'doi:10.1038/30918'],
  honesty: 'The growth model and the spectral analysis are real; the graph is a seeded synthetic draw, not a real formula library.',
  params: graphParams,
  worstCase: { n: 96, m: 4 },
  run({ n, m }, rng) {
    // draws: the shared stream fgbrain/graph (one uniform per dependency choice, node by node)
    const s = buildSubstrate(n, m, rng.shared('fgbrain/graph'));
    const depth = new Int32Array(n);
    for (let t = 1; t < n; t++) depth[t] = 1 + Math.max(...s.deps[t]!.map((j) => depth[j]!));
    const adj = undirected(s);
    const L = zeros(n, n);
    adj.forEach((list, i) => {
      L.data[i * n + i] = list.length;
      for (const j of list) L.data[i * n + j] = L.data[i * n + j]! - 1;
    });
    const { values } = jacobiEigen(L);
    let clustering = 0;
    for (let i = 0; i < n; i++) {
      const nb = adj[i]!;
      if (nb.length < 2) continue;
      let links = 0;
      for (let a = 0; a < nb.length; a++) for (let b = a + 1; b < nb.length; b++) if (adj[nb[a]!]!.includes(nb[b]!)) links++;
      clustering += (2 * links) / (nb.length * (nb.length - 1));
    }
    let hub = 0;
    for (let i = 1; i < n; i++) if (s.indeg[i]! > s.indeg[hub]!) hub = i;
    const edges = s.deps.flatMap((list, t) => list.map((j) => [t, j]));
    const maxIn = Math.max(...s.indeg);
    const hist = new Array<number>(maxIn + 1).fill(0);
    for (const d of s.indeg) hist[d]!++;
    const sum = values.reduce((a, b) => a + b, 0);
    return {
      constants: { attachment_offset: 1, eigen_solver: 'cyclic Jacobi, off-diagonal tolerance 1e-22' },
      result: {
        nodes: Array.from({ length: n }, (_, i) => ({ id: i, indeg: s.indeg[i]!, outdeg: s.outdeg[i]!, depth: depth[i]! })),
        edges,
        counts: { nodes: n, edges: edges.length, components: components(adj), max_depth: Math.max(...depth) },
        hub: { id: hub, indeg: s.indeg[hub]! },
        spectrum: { lambda2: values[1] ?? 0, lambda_max: values[n - 1]!, head: Array.from(values.slice(0, 8)), sum },
        clustering: clustering / n,
        indeg_histogram: hist,
      },
      checks: { sum_equals_twice_edges: Math.abs(sum - 2 * edges.length) <= 1e-9 * Math.max(1, sum), lambda1_zero: Math.abs(values[0]!) <= 1e-9 },
    };
  },
});
