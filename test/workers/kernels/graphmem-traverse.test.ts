import { expect } from 'chai';
import graphmem, { beamSearch, buildViews, combine, drawMemory, dpScores } from '../../../workers/kernels/graphmem-traverse.js';
import { Rng, RngStreams } from '../../../src/lib/prng.js';
import { rejects, runRaw } from '../../helpers/kernels.js';

const WEIGHTS: Record<string, number> = { semantic: 0.5, temporal: 0.2, causal: 1.0, entity: 0.6 };
const GAMMA = 0.85;

interface Node {
  id: number;
  story: number;
  t: number;
  embedding: number[];
}

/** Independent views from the listed memory: key `${u}>${v}` → raw weight, per view. */
function referenceViews(nodes: Node[]): Record<string, Map<string, number>> {
  const n = nodes.length;
  const views: Record<string, Map<string, number>> = { semantic: new Map(), temporal: new Map(), causal: new Map(), entity: new Map() };
  const cos = (a: number[], b: number[]): number => Math.max(-1, Math.min(1, a.reduce((s, x, i) => s + x * b[i]!, 0)));
  for (const u of nodes) {
    const others = nodes.filter((v) => v.id !== u.id).map((v) => ({ id: v.id, c: cos(u.embedding, v.embedding) }));
    others.sort((a, b) => b.c - a.c || a.id - b.id);
    for (const { id, c } of others.slice(0, 4)) {
      views.semantic!.set(`${u.id}>${id}`, Math.max(0, c));
      views.semantic!.set(`${id}>${u.id}`, Math.max(0, c));
    }
  }
  const byTime = nodes.slice().sort((a, b) => a.t - b.t || a.id - b.id);
  for (let r = 0; r + 1 < n; r++) {
    views.temporal!.set(`${byTime[r]!.id}>${byTime[r + 1]!.id}`, 1);
    views.temporal!.set(`${byTime[r + 1]!.id}>${byTime[r]!.id}`, 1);
  }
  for (const u of nodes) {
    for (const v of nodes) {
      if (u.id !== v.id && u.story === v.story) {
        views.entity!.set(`${u.id}>${v.id}`, 0.5);
        if (u.id === v.id + 1) views.causal!.set(`${u.id}>${v.id}`, 1);
      }
    }
  }
  return views;
}

function referenceDp(n: number, views: Record<string, Map<string, number>>, anchors: number[], anchorScores: number[]): number[] {
  const W = new Map<string, number>();
  for (const [view, m] of Object.entries(views)) for (const [key, w] of m) W.set(key, Math.max(W.get(key) ?? 0, WEIGHTS[view]! * w));
  let best = new Array<number>(n).fill(0);
  anchors.forEach((a, i) => (best[a] = anchorScores[i]!));
  for (let h = 0; h < 4; h++) {
    const next = best.slice();
    for (const [key, w] of W) {
      const [u, v] = key.split('>').map(Number) as [number, number];
      next[v] = Math.max(next[v]!, best[u]! * GAMMA * w);
    }
    best = next;
  }
  return best;
}

/** The memory and query redrawn (kernels-b §13): stream memory gives unit embeddings, then per story an offset U(0, 100) and gaps 5 + 10u; stream query gives the story int(stories), then dim normals. */
function redraw(seed: number, n: number, dim: number) {
  const rng = new RngStreams(seed, 'graphmem/traverse');
  const m = rng.stream('memory');
  const unitv = (v: number[]) => v.map((x) => x / Math.hypot(...v));
  const nodes: Node[] = Array.from({ length: n }, (_, id) => ({ id, story: Math.floor(id / 5), t: 0, embedding: unitv(Array.from({ length: dim }, () => m.normal())) }));
  for (let st = 0; st < Math.ceil(n / 5); st++) {
    let t = 100 * m.next();
    for (let i = st * 5; i < Math.min(n, st * 5 + 5); i++) {
      if (i > st * 5) t += 5 + 10 * m.next();
      nodes[i]!.t = t;
    }
  }
  const qs = rng.stream('query');
  const target = Math.floor(qs.next() * Math.ceil(n / 5));
  const last = Math.min(n, target * 5 + 5) - 1;
  const q = unitv(nodes[last]!.embedding.map((x) => x + 0.3 * qs.normal()));
  return { nodes, target, q };
}

const REF_VIEWS = ['semantic', 'temporal', 'causal', 'entity'] as const;
type RefView = (typeof REF_VIEWS)[number];

/** Beam traversal with synchronous hops (scores read at the start of each hop), frontier = 8 most improved (ties to the lower id). */
function referenceBeam(n: number, views: Record<string, Map<string, number>>, anchors: number[], anchorScores: number[]) {
  const W = new Map<string, { w: number; view: RefView }>();
  for (const view of REF_VIEWS) for (const [key, w] of views[view]!) if (WEIGHTS[view]! * w > (W.get(key)?.w ?? 0)) W.set(key, { w: WEIGHTS[view]! * w, view });
  const score = new Array<number>(n).fill(0);
  const path: ({ from: number; to: number; view: RefView }[] | null)[] = new Array(n).fill(null);
  anchors.forEach((a, i) => ((score[a] = anchorScores[i]!), (path[a] = [])));
  let frontier = [...anchors];
  for (let hop = 0; hop < 4 && frontier.length; hop++) {
    const s0 = [...score];
    const p0 = [...path];
    const improved = new Set<number>();
    for (const u of frontier) {
      for (let v = 0; v < n; v++) {
        const e = W.get(`${u}>${v}`);
        if (!e) continue;
        const cand = s0[u]! * (GAMMA * e.w);
        if (cand > score[v]!) {
          score[v] = cand;
          path[v] = [...p0[u]!, { from: u, to: v, view: e.view }];
          improved.add(v);
        }
      }
    }
    frontier = [...improved].sort((a, b) => score[b]! - score[a]! || a - b).slice(0, 8);
  }
  return { score, path, W };
}

describe('kernel graphmem/traverse', () => {
  it('memory and query redrawn; retrieval, precision/recall, view counts and contributions recomputed by an independent beam', () => {
    // seed 6 at 23 nodes queries the last, partial story (3 items)
    for (const [seed, n, dim, k] of [[42, 40, 12, 5], [5, 23, 4, 8], [8, 60, 16, 12], [2, 11, 2, 11], [6, 23, 5, 6]] as const) {
      const res = runRaw(graphmem, { seed, nodes: n, dim, k }).result as any;
      const { nodes, target, q } = redraw(seed, n, dim);
      expect(res.nodes).to.have.length(n);
      expect(res.query.embedding).to.have.length(dim);
      res.nodes.forEach((nd: any, i: number) => {
        expect(nd.embedding).to.have.length(dim);
        expect([nd.id, nd.story]).to.deep.equal([i, nodes[i]!.story]);
        expect(nd.t).to.be.closeTo(nodes[i]!.t, 1e-12);
        Array.from(nd.embedding as ArrayLike<number>).forEach((x, j) => expect(x).to.be.closeTo(nodes[i]!.embedding[j]!, 1e-12));
      });
      expect(res.query.story).to.equal(target);
      Array.from(res.query.embedding as ArrayLike<number>).forEach((x, j) => expect(x).to.be.closeTo(q[j]!, 1e-12));
      const relevant = nodes.filter((nd) => nd.story === target).map((nd) => nd.id);
      expect(res.relevant).to.deep.equal(relevant);
      const views = referenceViews(nodes);
      const cos = nodes.map((nd) => Math.max(-1, Math.min(1, nd.embedding.reduce((a, x, j) => a + x * q[j]!, 0))));
      const order = cos.map((_, i) => i).sort((a, b) => cos[b]! - cos[a]! || a - b);
      const anchors = order.slice(0, 2);
      expect(res.anchors).to.deep.equal(anchors);
      expect(res.anchor_scores).to.have.length(2);
      res.anchor_scores.forEach((x: number, i: number) => expect(x).to.be.closeTo(Math.max(0, cos[anchors[i]!]!), 1e-12));
      expect(res.view_weights).to.deep.equal(WEIGHTS);
      expect(res.nodes_omitted).to.equal(false);
      const beam = referenceBeam(n, views, anchors, anchors.map((a) => Math.max(0, cos[a]!)));
      const retrieved = beam.score.map((_, i) => i).sort((a, b) => beam.score[b]! - beam.score[a]! || a - b).slice(0, k);
      expect(res.retrieved.map((x: any) => x.id)).to.deep.equal(retrieved);
      res.retrieved.forEach((x: any) => {
        expect(x.score).to.be.closeTo(beam.score[x.id]!, 1e-12);
        expect(x.path).to.deep.equal(beam.path[x.id]);
      });
      const hits = (ids: number[]) => ids.filter((i) => relevant.includes(i)).length;
      expect([res.precision_at_k, res.recall_at_k]).to.deep.equal([hits(retrieved) / k, hits(retrieved) / relevant.length]);
      const base = order.slice(0, k);
      expect([res.baseline_precision_at_k, res.baseline_recall_at_k]).to.deep.equal([hits(base) / k, hits(base) / relevant.length]);
      expect(res.edges_per_view).to.deep.equal(Object.fromEntries(Object.entries(views).map(([v, m]) => [v, m.size])));
      const best: Record<RefView, number> = { semantic: 0, temporal: 0, causal: 0, entity: 0 };
      for (const e of beam.W.values()) best[e.view]++;
      expect(res.best_view_edges).to.deep.equal(best);
      const used: Record<RefView, number> = { semantic: 0, temporal: 0, causal: 0, entity: 0 };
      let total = 0;
      for (const id of retrieved) {
        for (const e of beam.path[id] ?? []) {
          used[e.view]++;
          total++;
        }
      }
      expect(res.view_contributions).to.deep.equal(Object.fromEntries(Object.entries(used).map(([v, c]) => [v, total ? c / total : 0])));
    }
    // precondition of the last case: it queries the partial story 4 (nodes 20–22)
    expect(redraw(6, 23, 5).target).to.equal(4);
  });

  it('beam scores never exceed an independent max-product DP; paths use real edges of their view and recompute to the score', () => {
    for (const [seed, nodes, dim, k] of [[42, 40, 12, 5], [5, 23, 4, 8], [8, 60, 16, 12]] as const) {
      const r = runRaw(graphmem, { seed, nodes, dim, k });
      const res = r.result as any;
      const views = referenceViews(res.nodes);
      // anchors are the top-2 by cosine to the query
      const cos = res.nodes.map((nd: Node) => nd.embedding.reduce((s, x, i) => s + x * res.query.embedding[i], 0));
      const order = cos.map((_: number, i: number) => i).sort((a: number, b: number) => cos[b] - cos[a] || a - b);
      expect(res.anchors).to.deep.equal(order.slice(0, 2));
      expect(res.baseline_retrieved).to.deep.equal(order.slice(0, k));
      const dp = referenceDp(nodes, views, res.anchors, res.anchor_scores);
      (r.checks as any).dp_scores.forEach((s: number, i: number) => expect(s).to.be.closeTo(dp[(r.checks as any).dp_scores_index[i]]!, 1e-12));
      for (const item of res.retrieved) {
        expect(item.score).to.be.at.most(dp[item.id]! + 1e-12);
        expect(item.score).to.be.within(0, 1);
        expect(item.path.length).to.be.at.most(4);
        let score = res.anchor_scores[res.anchors.indexOf(item.path.length ? item.path[0].from : item.id)];
        let prev = score;
        for (const e of item.path) {
          const w = views[e.view]!.get(`${e.from}>${e.to}`);
          expect(w, `${e.view} ${e.from}>${e.to}`).to.be.a('number');
          score *= GAMMA * WEIGHTS[e.view]! * w!;
          expect(score).to.be.at.most(prev);
          prev = score;
        }
        expect(score).to.be.closeTo(item.score, 1e-12);
        if (item.path.length) expect(item.path[item.path.length - 1].to).to.equal(item.id);
      }
    }
  });

  it('with beam width = nodes the beam equals the exact DP; the views have the documented structure', () => {
    for (const seed of [1, 2, 3]) {
      const mem = drawMemory(37, 6, new Rng(seed));
      const views = buildViews(mem);
      const graph = combine(37, views);
      const anchors = [{ id: 4, score: 0.9 }, { id: 20, score: 0.7 }];
      const beam = beamSearch(graph, anchors, 4, 37).score;
      const dp = dpScores(graph, anchors, 4);
      beam.forEach((s, i) => expect(s).to.be.closeTo(dp[i]!, 1e-12));
      const narrow = beamSearch(graph, anchors, 4, 2).score;
      narrow.forEach((s, i) => expect(s).to.be.at.most(dp[i]! + 1e-12));
      // semantic: symmetric, out-degree ≥ 4
      for (const [u, row] of views.semantic) {
        expect(row.size).to.be.at.least(4);
        for (const [v, w] of row) expect(views.semantic.get(v)!.get(u)).to.equal(w);
      }
      // temporal: only time-adjacent items
      const byTime = Array.from({ length: 37 }, (_, i) => i).sort((a, b) => mem.time[a]! - mem.time[b]! || a - b);
      for (const [u, row] of views.temporal) for (const v of row.keys()) expect(Math.abs(byTime.indexOf(u) - byTime.indexOf(v))).to.equal(1);
      // causal: consecutive items of a story, later → earlier
      for (const [u, row] of views.causal) for (const v of row.keys()) {
        expect(mem.story[u]).to.equal(mem.story[v]);
        expect(u - v).to.equal(1);
        expect(mem.time[u]!).to.be.greaterThan(mem.time[v]!);
      }
      // entity: per-story cliques
      for (let u = 0; u < 37; u++) for (let v = 0; v < 37; v++) if (u !== v) expect(views.entity.get(u)?.has(v) ?? false).to.equal(mem.story[u] === mem.story[v]);
    }
  });

  it('retrieves more of the causal story than cosine-only top-k (mean precision over seeds 0…29)', () => {
    let magma = 0;
    let base = 0;
    for (let seed = 0; seed < 30; seed++) {
      const r = runRaw(graphmem, { seed }).result as any;
      const rel = new Set(r.relevant);
      const p = r.retrieved.filter((x: any) => rel.has(x.id)).length / 5;
      const b = r.baseline_retrieved.filter((x: number) => rel.has(x)).length / 5;
      expect(r.precision_at_k).to.equal(p);
      expect(r.baseline_precision_at_k).to.equal(b);
      expect(r.recall_at_k).to.be.closeTo((p * 5) / r.relevant.length, 1e-15);
      magma += p;
      base += b;
    }
    expect(magma / 30).to.be.at.least(base / 30 + 0.15);
  });

  it('omits the memory listing above the size cap and keeps shares of the view contributions summing to 1', () => {
    const r = runRaw(graphmem, { nodes: 400, dim: 64, k: 32 }).result as any;
    expect(r.nodes).to.equal(null);
    expect(r.nodes_omitted).to.equal(true);
    expect(r.retrieved).to.have.length(32);
    const shares = Object.values(r.view_contributions) as number[];
    expect(shares.reduce((a, b) => a + b, 0)).to.be.closeTo(1, 1e-12);
  });

  it('k must not exceed nodes', () => {
    expect(rejects(graphmem, { nodes: '4', k: '5' })).to.deep.equal(['k:constraint']);
    expect(rejects(graphmem, { nodes: '4', k: '4' })).to.deep.equal([]);
  });
});
