/**
 * `/flower/graph`: a petal-clustered "flower" graph, k dense petals around a small fully connected
 * core (the receptacle), drawn as a stochastic block model (Holland, Laskey & Leinhardt 1983) and
 * analysed with the normalised Laplacian: spectrum, the Cheeger sandwich λ₂/2 ≤ φ ≤ √(2λ₂) with a
 * Fiedler sweep cut (Chung 1997), and Ng–Jordan–Weiss spectral clustering with k-means++ seeding,
 * scored by the adjusted Rand index against the planted petals. Design: kernels-a §3.
 */
import { defineKernel } from '../kernel-def.js';
import { int, num } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';
import { jacobiEigen, zeros } from '../lib/linalg.js';
import { adjustedRandIndex } from '../lib/semantic-entropy.js';

export const MAX_NODES = 96;
const MAX_EDGES_LISTED = 256;
const LLOYD_ITERATIONS = 30;
const ZERO_EIG = 1e-9;

export interface FlowerGraph {
  n: number;
  /** −1 for core nodes, else the petal index. */
  labels: number[];
  /** Row-major n×n 0/1 adjacency. */
  adj: Uint8Array;
  edges: [number, number][];
  degree: number[];
}

/** Edges drawn for i < j in row-major order, one uniform each: core–core 1, core–petal p_core, same petal p_in, else p_out. */
export function makeFlower(rng: Rng, k: number, s: number, c: number, pIn: number, pOut: number, pCore: number): FlowerGraph {
  const n = c + k * s;
  const labels = Array.from({ length: n }, (_, i) => (i < c ? -1 : Math.floor((i - c) / s)));
  const adj = new Uint8Array(n * n);
  const edges: [number, number][] = [];
  const degree = new Array<number>(n).fill(0);
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const li = labels[i]!;
      const lj = labels[j]!;
      const p = li < 0 && lj < 0 ? 1 : li < 0 || lj < 0 ? pCore : li === lj ? pIn : pOut;
      if (rng.next() < p) {
        adj[i * n + j] = adj[j * n + i] = 1;
        edges.push([i, j]);
        degree[i]!++;
        degree[j]!++;
      }
    }
  }
  return { n, labels, adj, edges, degree };
}

/** Conductance cut(S)/min(vol S, vol S̄) of a node set; null when either volume is 0. */
export function conductance(g: FlowerGraph, inSet: (i: number) => boolean): number | null {
  let cut = 0;
  let vol = 0;
  let total = 0;
  for (let i = 0; i < g.n; i++) {
    total += g.degree[i]!;
    if (!inSet(i)) continue;
    vol += g.degree[i]!;
    for (let j = 0; j < g.n; j++) if (g.adj[i * g.n + j] && !inSet(j)) cut++;
  }
  const denom = Math.min(vol, total - vol);
  return denom > 0 ? cut / denom : null;
}

export function componentCount(g: FlowerGraph): number {
  const seen = new Uint8Array(g.n);
  let count = 0;
  for (let s = 0; s < g.n; s++) {
    if (seen[s]) continue;
    count++;
    const stack = [s];
    seen[s] = 1;
    while (stack.length) {
      const u = stack.pop()!;
      for (let v = 0; v < g.n; v++) {
        if (g.adj[u * g.n + v] && !seen[v]) {
          seen[v] = 1;
          stack.push(v);
        }
      }
    }
  }
  return count;
}

/** ℒ = I − D^(−1/2) A D^(−1/2), with an all-zero row and column for an isolated node. */
export function normalizedLaplacian(g: FlowerGraph) {
  const { n } = g;
  const L = zeros(n, n);
  for (let i = 0; i < n; i++) {
    if (g.degree[i]! === 0) continue;
    L.data[i * n + i] = 1;
    for (let j = 0; j < n; j++) if (g.adj[i * n + j]) L.data[i * n + j] = -1 / Math.sqrt(g.degree[i]! * g.degree[j]!);
  }
  return L;
}

/** k-means++ seeding (first centre int(n), then D²-weighted, one uniform each) and fixed Lloyd iterations. */
export function kMeans(points: Float64Array[], k: number, rng: Rng, iterations = LLOYD_ITERATIONS): number[] {
  const n = points.length;
  const dim = points[0]?.length ?? 0;
  const d2 = (a: Float64Array, b: Float64Array): number => {
    let s = 0;
    for (let t = 0; t < dim; t++) s += (a[t]! - b[t]!) ** 2;
    return s;
  };
  const centres: Float64Array[] = [Float64Array.from(points[rng.int(n)]!)];
  while (centres.length < k) {
    const w = points.map((p) => Math.min(...centres.map((c) => d2(p, c))));
    centres.push(Float64Array.from(points[rng.categorical(w)]!));
  }
  const assign = new Array<number>(n).fill(0);
  for (let it = 0; it < iterations; it++) {
    points.forEach((p, i) => {
      let best = 0;
      let bestD = Infinity;
      centres.forEach((c, ci) => {
        const d = d2(p, c);
        if (d < bestD) {
          bestD = d;
          best = ci;
        }
      });
      assign[i] = best;
    });
    for (let ci = 0; ci < k; ci++) {
      const sum = new Float64Array(dim);
      let cnt = 0;
      points.forEach((p, i) => {
        if (assign[i] !== ci) return;
        cnt++;
        for (let t = 0; t < dim; t++) sum[t] = sum[t]! + p[t]!;
      });
      if (cnt) centres[ci] = sum.map((v) => v / cnt); // an empty cluster keeps its centre
    }
  }
  return assign;
}

export default defineKernel({
  id: 'flower/graph',
  version: 2,
  informative: {
    'clustering.assignment': 'k-means++ labels on the spectral embedding: eigenvectors are not unique under repeated eigenvalues, so no reference reproduces the labels; cluster sizes and ARI are recomputed from them',
  },
  input: 'query',
  summary: 'Petal-clustered flower graph (stochastic block model): normalised-Laplacian spectrum, Cheeger sandwich, Fiedler sweep cut and spectral clustering of the petals',
  technique: 'stochastic block model + normalised spectral clustering (NJW, k-means++) + Cheeger inequality',
  references: ['doi:10.1016/0378-8733(83)90021-7', 'arXiv:0711.0189', 'Chung 1997, Spectral Graph Theory', 'doi:10.1007/BF01908075'],
  honesty: 'The spectral analysis and clustering are real; the graph is a seeded synthetic stochastic block model, not a measured network.',
  params: {
    petals: int(2, 12, 6).description('petals (clusters) of the flower graph'),
    petal_size: int(3, 16, 8).description('nodes per petal'),
    core: int(1, 8, 4).description('nodes of the core'),
    p_in: num(0, 1, 0.6).description('edge probability inside a petal'),
    p_out: num(0, 1, 0.02).description('edge probability between petals'),
    p_core: num(0, 1, 0.15).description('edge probability between the core and a petal'),
  },
  rules: [`core + petals·petal_size must be <= ${MAX_NODES}`],
  constraints: (p) => (p.core + p.petals * p.petal_size > MAX_NODES ? [{ param: 'petal_size', msg: `core + petals·petal_size must be <= ${MAX_NODES}` }] : []),
  worstCase: { petals: 12, petal_size: 7, core: 8 }, // measured costliest: most eigen-clusters at n = 92
  run({ petals: k, petal_size: s, core: c, p_in, p_out, p_core }, rng) {
    // draws: stream `edges` (one uniform per pair i < j, row-major); stream `kmeans` (seeding)
    const g = makeFlower(rng.stream('edges'), k, s, c, p_in, p_out, p_core);
    const { n } = g;
    const isolated = g.degree.filter((d) => d === 0).length;
    const components = componentCount(g);

    const eig = jacobiEigen(normalizedLaplacian(g));
    const lambda = eig.values;
    const V = eig.vectors;
    const comb = zeros(n, n);
    for (let i = 0; i < n; i++) {
      comb.data[i * n + i] = g.degree[i]!;
      for (let j = 0; j < n; j++) if (g.adj[i * n + j]) comb.data[i * n + j] = -1;
    }
    const lambda2Lap = jacobiEigen(comb).values[1]!;
    const lambda2 = lambda[1]!;

    // Fiedler sweep: order by v2_i/√d_i (isolated nodes last, ties by id), best prefix conductance
    const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => {
      const da = g.degree[a]!;
      const db = g.degree[b]!;
      if (!da || !db) return da && !db ? -1 : !da && db ? 1 : a - b;
      return V.data[a * n + 1]! / Math.sqrt(da) - V.data[b * n + 1]! / Math.sqrt(db) || a - b;
    });
    const totalVol = g.degree.reduce((x, y) => x + y, 0);
    const inS = new Uint8Array(n);
    let vol = 0;
    let cut = 0;
    let best: number | null = null;
    let bestSize = 0;
    for (let t = 0; t < n - 1; t++) {
      const u = order[t]!;
      let toS = 0;
      for (let j = 0; j < n; j++) if (g.adj[u * n + j] && inS[j]) toS++;
      inS[u] = 1;
      vol += g.degree[u]!;
      cut += g.degree[u]! - 2 * toS;
      const denom = Math.min(vol, totalVol - vol);
      if (denom > 0 && (best === null || cut / denom < best)) {
        best = cut / denom;
        bestSize = t + 1;
      }
    }

    const petalStats = Array.from({ length: k }, (_, p) => {
      const nodes = Array.from({ length: s }, (_, i) => c + p * s + i);
      let internal = 0;
      for (const i of nodes) for (const j of nodes) if (i < j && g.adj[i * n + j]) internal++;
      return { petal: p, nodes, internal_edges: internal, density: internal / ((s * (s - 1)) / 2), conductance: conductance(g, (i) => g.labels[i] === p) };
    });
    const petalPhis = petalStats.map((p) => p.conductance).filter((x): x is number => x !== null);
    const minPetal = petalPhis.length ? Math.min(...petalPhis) : null;

    const bridges: { id: number; petals: number[] }[] = [];
    for (let i = 0; i < n; i++) {
      const ps = new Set<number>();
      for (let j = 0; j < n; j++) if (g.adj[i * n + j] && g.labels[j]! >= 0) ps.add(g.labels[j]!);
      if (ps.size >= 2) bridges.push({ id: i, petals: [...ps].sort((a, b) => a - b) });
    }

    // NJW embedding: rows of the k lowest eigenvectors, normalised to unit length
    const emb = Array.from({ length: n }, (_, i) => {
      const row = Float64Array.from({ length: k }, (_, j) => V.data[i * n + j]!);
      const len = Math.hypot(...row);
      return len > 0 ? row.map((v) => v / len) : row;
    });
    const assign = kMeans(emb, k, rng.stream('kmeans'));
    const petalNodes = Array.from({ length: n - c }, (_, i) => c + i);
    const ari = adjustedRandIndex(
      petalNodes.map((i) => assign[i]!),
      petalNodes.map((i) => g.labels[i]!),
    );
    const sizes = new Array<number>(k).fill(0);
    for (const a of assign) sizes[a]!++;

    let trace = 0;
    let zeroEigs = 0;
    let inRange = true;
    for (const l of lambda) {
      trace += l;
      if (l <= ZERO_EIG) zeroEigs++;
      if (l < -1e-9 || l > 2 + 1e-9) inRange = false;
    }
    const applies = components === 1;
    return {
      constants: { max_nodes: MAX_NODES, lloyd_iterations: LLOYD_ITERATIONS, zero_eigenvalue_tol: ZERO_EIG, max_edges_listed: MAX_EDGES_LISTED },
      result: {
        n,
        labels: g.labels,
        edges: g.edges.slice(0, MAX_EDGES_LISTED),
        edges_truncated: g.edges.length > MAX_EDGES_LISTED,
        neighbors: Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => j).filter((j) => g.adj[i * n + j])),
        counts: { edges: g.edges.length, components, isolated },
        spectrum: { lambda2_normalized: lambda2, lambda2_laplacian: lambda2Lap, head: lambda.subarray(0, 8), eigenvalues: lambda },
        cheeger: {
          lower: lambda2 / 2,
          upper: Math.sqrt(2 * Math.max(0, lambda2)),
          best_sweep_conductance: best,
          best_sweep_set: best === null ? null : order.slice(0, bestSize).sort((a, b) => a - b),
          min_petal_conductance: minPetal,
          applies,
        },
        petals: petalStats,
        bridges,
        clustering: { ari, sizes, assignment: assign },
      },
      checks: {
        eigenvalues_in_0_2: inRange,
        trace_equals_n_minus_isolated: Math.abs(trace - (n - isolated)) <= 1e-9 * n,
        zero_eigenvalues_equal_components: zeroEigs === components,
        cheeger_lower: applies && minPetal !== null ? minPetal >= lambda2 / 2 - 1e-12 : null,
        cheeger_upper: applies && best !== null ? best <= Math.sqrt(2 * lambda2) + 1e-12 : null,
      },
    };
  },
});
