/**
 * MAGMA, multi-graph agentic memory (Jiang, Li, Li & Li 2026, arXiv:2601.03236): memory items are
 * nodes of four relation views (semantic kNN, temporal succession, causal effect→cause, shared
 * entity); retrieval is an intent-weighted beam traversal from semantic anchors, compared with
 * cosine-only top-k and checked against the exact max-product dynamic programme over ≤ H hops.
 * Design: kernels-b §13.
 */
import { defineKernel } from '../kernel-def.js';
import { int } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';
import { sampleSeries } from '../../src/lib/numbers.js';
import { unit } from '../lib/linalg.js';
import { topK } from '../lib/ranking.js';

export const STORY_LEN = 5;
export const KNN = 4;
export const VIEWS = ['semantic', 'temporal', 'causal', 'entity'] as const;
export type View = (typeof VIEWS)[number];
/** Intent "why". */
export const VIEW_WEIGHTS: Record<View, number> = { semantic: 0.5, temporal: 0.2, causal: 1.0, entity: 0.6 };
export const ENTITY_EDGE = 0.5;
export const HOPS = 4;
export const BEAM = 8;
export const GAMMA = 0.85;
export const ANCHORS = 2;
export const QUERY_NOISE = 0.3;
/** The memory is listed in the body when nodes·dim stays at or below this. */
const LIST_LIMIT = 4096;

export interface Memory {
  n: number;
  dim: number;
  /** emb[i*dim + j], unit vectors */
  emb: Float64Array;
  story: Int32Array;
  time: Float64Array;
  stories: number;
}


/** Draw order, stream `memory`: all embeddings in node order; then per story an offset U(0,100) and one gap 5 + 10u per later position. */
export function drawMemory(n: number, dim: number, rng: Rng): Memory {
  const emb = new Float64Array(n * dim);
  for (let i = 0; i < n; i++) emb.set(unit(rng.normals(dim)), i * dim);
  const stories = Math.ceil(n / STORY_LEN);
  const story = Int32Array.from({ length: n }, (_, i) => Math.floor(i / STORY_LEN));
  const time = new Float64Array(n);
  for (let s = 0; s < stories; s++) {
    let t = rng.uniform(0, 100);
    for (let i = s * STORY_LEN; i < Math.min(n, (s + 1) * STORY_LEN); i++) {
      if (i > s * STORY_LEN) t += 5 + 10 * rng.next();
      time[i] = t;
    }
  }
  return { n, dim, emb, story, time, stories };
}

export function cosineAt(mem: Memory, i: number, q: ArrayLike<number>): number {
  let s = 0;
  for (let j = 0; j < mem.dim; j++) s += mem.emb[i * mem.dim + j]! * q[j]!;
  return Math.max(-1, Math.min(1, s));
}

/** Raw per-view edge weights, directed: views[view].get(u) = Map(v → weight). */
export type ViewEdges = Record<View, Map<number, Map<number, number>>>;

export function buildViews(mem: Memory): ViewEdges {
  const { n, dim, emb } = mem;
  const views = Object.fromEntries(VIEWS.map((v) => [v, new Map<number, Map<number, number>>()])) as ViewEdges;
  const add = (view: View, u: number, v: number, w: number): void => {
    let row = views[view].get(u);
    if (!row) views[view].set(u, (row = new Map()));
    row.set(v, w);
  };
  // semantic: each node's KNN nearest by cosine (ties to the lower id), symmetrised, weight max(0, cos)
  const sims = new Float64Array(n * n);
  for (let u = 0; u < n; u++) {
    for (let v = u + 1; v < n; v++) {
      let s = 0;
      for (let j = 0; j < dim; j++) s += emb[u * dim + j]! * emb[v * dim + j]!;
      s = Math.max(-1, Math.min(1, s));
      sims[u * n + v] = s;
      sims[v * n + u] = s;
    }
  }
  const kk = Math.min(KNN, n - 1);
  const top = new Int32Array(kk);
  for (let u = 0; u < n; u++) {
    // insertion into a sorted top-kk list: higher similarity first, then lower id
    let len = 0;
    for (let v = 0; v < n; v++) {
      if (v === u) continue;
      const sv = sims[u * n + v]!;
      let pos = len;
      while (pos > 0 && sims[u * n + top[pos - 1]!]! < sv) pos--;
      if (pos >= kk) continue;
      for (let r = Math.min(len, kk - 1); r > pos; r--) top[r] = top[r - 1]!;
      top[pos] = v;
      if (len < kk) len++;
    }
    for (let r = 0; r < kk; r++) {
      const v = top[r]!;
      const w = Math.max(0, sims[u * n + v]!);
      add('semantic', u, v, w);
      add('semantic', v, u, w);
    }
  }
  // temporal: consecutive items in global time order, both directions
  const byTime = Array.from({ length: n }, (_, i) => i).sort((a, b) => mem.time[a]! - mem.time[b]! || a - b);
  for (let r = 0; r + 1 < n; r++) {
    add('temporal', byTime[r]!, byTime[r + 1]!, 1);
    add('temporal', byTime[r + 1]!, byTime[r]!, 1);
  }
  // causal: effect → cause within a story; entity: all pairs of one story
  for (let i = 0; i < n; i++) {
    if (i % STORY_LEN > 0) add('causal', i, i - 1, 1);
    const s0 = mem.story[i]! * STORY_LEN;
    for (let j = s0; j < Math.min(n, s0 + STORY_LEN); j++) if (j !== i) add('entity', i, j, ENTITY_EDGE);
  }
  return views;
}

export interface Edge {
  to: number;
  w: number;
  view: View;
}

/** The combined graph: per ordered pair the best view by w_view·weight (first view in VIEWS order on ties), zero-weight pairs dropped. */
export function combine(n: number, views: ViewEdges): Edge[][] {
  const best: Map<number, Edge>[] = Array.from({ length: n }, () => new Map());
  for (const view of VIEWS) {
    for (const [u, row] of views[view]) {
      for (const [v, w] of row) {
        const eff = VIEW_WEIGHTS[view] * w;
        const cur = best[u]!.get(v);
        if (!cur || eff > cur.w) best[u]!.set(v, { to: v, w: eff, view });
      }
    }
  }
  return best.map((m) => [...m.values()].filter((e) => e.w > 0).sort((a, b) => a.to - b.to));
}

export interface PathEdge {
  from: number;
  to: number;
  view: View;
}

/** Beam traversal over ≤ hops hops; synchronous hops from the scores at the start of each hop. */
export function beamSearch(graph: Edge[][], anchors: { id: number; score: number }[], hops: number, beam: number): { score: Float64Array; path: (PathEdge[] | null)[] } {
  const n = graph.length;
  const score = new Float64Array(n);
  const path: (PathEdge[] | null)[] = new Array(n).fill(null);
  // anchors are distinct nodes (top-2 by cosine)
  for (const a of anchors) {
    score[a.id] = a.score;
    path[a.id] = [];
  }
  let frontier = anchors.map((a) => a.id);
  for (let hop = 1; hop <= hops && frontier.length; hop++) {
    const snapScore = Float64Array.from(score);
    const snapPath = path.slice();
    const improved = new Set<number>();
    for (const u of frontier) {
      const su = snapScore[u]!;
      for (const e of graph[u]!) {
        const cand = su * (GAMMA * e.w);
        if (cand > score[e.to]!) {
          score[e.to] = cand;
          path[e.to] = [...snapPath[u]!, { from: u, to: e.to, view: e.view }];
          improved.add(e.to);
        }
      }
    }
    frontier = [...improved].sort((a, b) => score[b]! - score[a]! || a - b).slice(0, beam);
  }
  return { score, path };
}

/** Exact max-product scores over paths of ≤ hops edges: best_h(v) = max(best_{h−1}(v), max_u best_{h−1}(u)·γ·W(u,v)). */
export function dpScores(graph: Edge[][], anchors: { id: number; score: number }[], hops: number): Float64Array {
  const n = graph.length;
  let best = new Float64Array(n);
  for (const a of anchors) best[a.id] = Math.max(best[a.id]!, a.score);
  for (let h = 1; h <= hops; h++) {
    const next = Float64Array.from(best);
    for (let u = 0; u < n; u++) for (const e of graph[u]!) next[e.to] = Math.max(next[e.to]!, best[u]! * (GAMMA * e.w));
    best = next;
  }
  return best;
}

export default defineKernel({
  id: 'graphmem/traverse',
  version: 1,
  input: 'query',
  summary: 'MAGMA multi-graph agentic memory: intent-weighted beam traversal over semantic, temporal, causal and entity views against cosine-only retrieval',
  technique: 'multi-view memory graph with policy-weighted beam traversal (MAGMA), exact max-product DP reference',
  references: ['arXiv:2601.03236', 'arXiv:2405.14831'],
  honesty: 'The graph construction, beam traversal and exact reference are real; the memory items, their stories and the query are seeded synthetic draws.',
  params: {
    nodes: int(4, 400, 40).description('memory nodes'),
    dim: int(2, 64, 12).description('embedding dimension'),
    k: int(1, 32, 5).description('memories retrieved (at most nodes)'),
  },
  rules: ['k must not exceed nodes'],
  constraints: (p) => (p.k > p.nodes ? [{ param: 'k', msg: 'k must not exceed nodes' }] : []),
  worstCase: { nodes: 400, dim: 64, k: 32 },
  run({ nodes: n, dim, k }, rng) {
    // draw order: memory (stream `memory`, see drawMemory); query (stream `query`: story, then dim normals)
    const mem = drawMemory(n, dim, rng.stream('memory'));
    const qs = rng.stream('query');
    const target = qs.int(mem.stories);
    const lastOf = Math.min(n, (target + 1) * STORY_LEN) - 1;
    const noise = qs.normals(dim);
    const q = unit(Float64Array.from({ length: dim }, (_, j) => mem.emb[lastOf * dim + j]! + QUERY_NOISE * noise[j]!));
    const relevant: number[] = [];
    for (let i = 0; i < n; i++) if (mem.story[i] === target) relevant.push(i);

    const views = buildViews(mem);
    const graph = combine(n, views);
    const cos = Float64Array.from({ length: n }, (_, i) => cosineAt(mem, i, q));
    const anchorIds = topK(cos, ANCHORS);
    const anchors = anchorIds.map((id) => ({ id, score: Math.max(0, cos[id]!) }));
    const beam = beamSearch(graph, anchors, HOPS, BEAM);
    const dp = dpScores(graph, anchors, HOPS);
    const retrievedIds = topK(beam.score, k);
    const baseline = topK(cos, k);
    const rel = new Set(relevant);
    const hitsOf = (ids: number[]): number => ids.filter((i) => rel.has(i)).length;

    const contrib: Record<View, number> = { semantic: 0, temporal: 0, causal: 0, entity: 0 };
    let pathEdges = 0;
    for (const id of retrievedIds) {
      for (const e of beam.path[id] ?? []) {
        contrib[e.view]++;
        pathEdges++;
      }
    }
    const edgesPerView = Object.fromEntries(VIEWS.map((v) => [v, [...views[v].values()].reduce((s, row) => s + row.size, 0)]));
    const bestViewEdges = Object.fromEntries(VIEWS.map((v) => [v, graph.reduce((s, row) => s + row.filter((e) => e.view === v).length, 0)]));
    let maxOverDp = 0;
    let maxBelowDp = 0;
    for (let i = 0; i < n; i++) {
      maxOverDp = Math.max(maxOverDp, beam.score[i]! - dp[i]!);
      maxBelowDp = Math.max(maxBelowDp, dp[i]! - beam.score[i]!);
    }
    const listed = n * dim <= LIST_LIMIT;
    const dpSeries = sampleSeries(dp);
    return {
      constants: { story_len: STORY_LEN, knn: KNN, intent: 'why', entity_edge_weight: ENTITY_EDGE, hops: HOPS, beam: BEAM, gamma: GAMMA, anchors: ANCHORS, query_noise: QUERY_NOISE },
      result: {
        nodes: listed ? Array.from({ length: n }, (_, i) => ({ id: i, story: mem.story[i], t: mem.time[i], embedding: mem.emb.subarray(i * dim, (i + 1) * dim) })) : null,
        nodes_omitted: !listed,
        query: { story: target, embedding: q },
        relevant,
        anchors: anchorIds,
        anchor_scores: anchors.map((a) => a.score),
        retrieved: retrievedIds.map((id) => ({ id, score: beam.score[id], path: beam.path[id] })),
        baseline_retrieved: baseline,
        precision_at_k: hitsOf(retrievedIds) / k,
        recall_at_k: hitsOf(retrievedIds) / relevant.length,
        baseline_precision_at_k: hitsOf(baseline) / k,
        baseline_recall_at_k: hitsOf(baseline) / relevant.length,
        view_weights: VIEW_WEIGHTS,
        view_contributions: Object.fromEntries(VIEWS.map((v) => [v, pathEdges ? contrib[v] / pathEdges : 0])),
        edges_per_view: edgesPerView,
        best_view_edges: bestViewEdges,
      },
      checks: {
        dp_scores: dpSeries.values,
        dp_scores_index: dpSeries.index,
        beam_never_above_dp: maxOverDp <= 1e-12,
        max_beam_gap_to_dp: maxBelowDp,
      },
    };
  },
});
