/**
 * Premise retrieval for formal theorem proving as in LeanDojo / ReProver (Yang et al. 2023,
 * arXiv:2306.15626): premises and the proof goal are dense embeddings, premises are ranked by
 * cosine score, and the ranking is restricted to the premises *accessible* to the theorem (defined
 * before it in the library). Evaluated by recall@k, precision@k, MRR, average precision and nDCG@k,
 * for the accessibility-filtered and the unfiltered ranking. Design: kernels-c §5.
 */
import { defineKernel, type ConstraintViolation } from '../kernel-def.js';
import { unit } from '../lib/linalg.js';
import { sampleSeries } from '../../src/lib/numbers.js';
import { int, num } from '../../src/lib/params.js';

/** theorem position τ = floor(0.8·corpus_size): premises at library positions < τ are accessible */
export const accessibleCount = (corpus: number): number => Math.floor(0.8 * corpus);

export interface RankMetrics {
  recall_at_k: number;
  precision_at_k: number;
  mrr: number;
  average_precision: number;
  ndcg_at_k: number;
}

/** Metrics of one query from the ascending 1-based ranks of its relevant items (binary gains). */
export function metricsFromRanks(ranks: readonly number[], k: number): RankMetrics {
  const m = ranks.length;
  let hits = 0;
  let dcg = 0;
  let ap = 0;
  ranks.forEach((r, i) => {
    ap += (i + 1) / r;
    if (r <= k) {
      hits++;
      dcg += 1 / Math.log2(r + 1);
    }
  });
  let idcg = 0;
  for (let i = 1; i <= Math.min(k, m); i++) idcg += 1 / Math.log2(i + 1);
  return { recall_at_k: hits / m, precision_at_k: hits / k, mrr: 1 / ranks[0]!, average_precision: ap / m, ndcg_at_k: dcg / idcg };
}

/** 1-based ranks of `gold` when `candidates` are sorted by score (desc., ties → lower index), ascending. */
function goldRanks(candidates: Int32Array, scores: Float64Array, isGold: Uint8Array): number[] {
  const order = Array.from(candidates).sort((a, b) => scores[b]! - scores[a]! || a - b);
  const ranks: number[] = [];
  order.forEach((j, r) => {
    if (isGold[j]) ranks.push(r + 1);
  });
  return ranks;
}

export default defineKernel({
  id: 'formalmath/retrieve',
  version: 1,
  input: 'query',
  summary: 'ReProver-style dense premise retrieval restricted to accessible premises: recall@k curve, precision, MRR, AP and nDCG, filtered vs unfiltered',
  technique: 'dense premise retrieval with accessibility filtering (LeanDojo / ReProver)',
  references: ['arXiv:2306.15626'],
  honesty: 'The ranking, the accessibility filter and the retrieval metrics are real; the premise and goal embeddings are seeded random vectors with the gold premises tilted towards the goal, not a trained encoder or a Lean library.',
  // corpus_size capped at 16384 (the note says 65536): drawing 65536×64 Box–Muller normals alone
  // took ~160 ms here; at 16384×64 the whole call measured ~50 ms warm (60–75 ms with the 2 cores busy)
  params: {
    corpus_size: int(2, 16384, 512).description('premises in the corpus'),
    dim: int(2, 64, 16).description('embedding dimension'),
    n_relevant: int(1, 256, 8).description('premises relevant to the goal (at most floor(0.8·corpus_size), the accessible count)'),
    k: int(1, 1024, 16).description('retrieval depth of the recall@k curve (at most corpus_size)'),
    separation: num(0, 10, 0.4).description('how far relevant premises stand out in embedding space'),
  },
  worstCase: { corpus_size: 16384, dim: 64, n_relevant: 256, k: 1024, separation: 10 },
  rules: ['n_relevant must be at most the accessible count floor(0.8·corpus_size)', 'k must be at most corpus_size'],
  constraints: (p) => {
    const out: ConstraintViolation[] = [];
    if (p.n_relevant > accessibleCount(p.corpus_size)) out.push({ param: 'n_relevant', msg: 'n_relevant must be at most the accessible count floor(0.8·corpus_size)' });
    if (p.k > p.corpus_size) out.push({ param: 'k', msg: 'k must be at most corpus_size' });
    return out;
  },
  run({ corpus_size: N, dim, n_relevant: nRel, k, separation: s }, rng) {
    // draw order: q (stream `q`), g row-major (stream `g`, drawn whatever the separation),
    // library positions by Fisher–Yates (stream `pos`), gold among the accessible premises in
    // index order by partial Fisher–Yates (stream `rel`)
    const q = unit(rng.stream('q').normals(dim));
    const g = rng.stream('g').normals(N * dim, 1 / Math.sqrt(dim));
    const position = rng.stream('pos').shuffle(Array.from({ length: N }, (_, j) => j));
    const tau = accessibleCount(N);
    const accessible = new Int32Array(tau);
    let a = 0;
    for (let j = 0; j < N; j++) if (position[j]! < tau) accessible[a++] = j;
    const gold = rng.stream('rel').sample(tau, nRel).map((i) => accessible[i]!);
    const isGold = new Uint8Array(N);
    for (const j of gold) isGold[j] = 1;

    // s_j = q·normalise(g_j + separation·q) for gold, q·normalise(g_j) otherwise
    const scores = new Float64Array(N);
    let goldSum = 0;
    let otherSum = 0;
    for (let j = 0; j < N; j++) {
      const o = j * dim;
      const shift = isGold[j] ? s : 0;
      let dotq = 0;
      let sq = 0;
      for (let i = 0; i < dim; i++) {
        const v = g[o + i]! + shift * q[i]!;
        dotq += v * q[i]!;
        sq += v * v;
      }
      scores[j] = sq > 0 ? dotq / Math.sqrt(sq) : 0;
      if (isGold[j]) goldSum += scores[j]!;
      else otherSum += scores[j]!;
    }

    const all = Int32Array.from({ length: N }, (_, j) => j);
    const ranksF = goldRanks(accessible, scores, isGold);
    const ranksU = goldRanks(all, scores, isGold);
    const filtered = metricsFromRanks(ranksF, k);
    const unfiltered = metricsFromRanks(ranksU, k);
    // recall@i for i = 1..k on the filtered ranking
    const curve = new Float64Array(k);
    let ptr = 0;
    for (let i = 1; i <= k; i++) {
      while (ptr < ranksF.length && ranksF[ptr]! <= i) ptr++;
      curve[i - 1] = ptr / nRel;
    }
    const sampled = sampleSeries(curve);

    return {
      constants: {
        theorem_position: 'tau = floor(0.8 corpus_size); premises at library positions < tau are accessible',
        embedding: 'g_j ~ N(0, I/dim); gold e_j = normalise(g_j + separation q), others normalise(g_j); q a unit vector',
        ties: 'equal scores rank by premise index',
        gains: 'binary',
      },
      result: {
        metrics: { filtered, unfiltered },
        recall_curve: sampled.values,
        recall_curve_k: sampled.index.map((i) => i + 1),
        recall_curve_digest: sampled.digest,
        relevant_ranks: ranksF,
        relevant_ranks_unfiltered: ranksU,
        gold_premises: [...gold].sort((x, y) => x - y),
        mean_score_gap: goldSum / nRel - otherSum / (N - nRel), // N − n_relevant ≥ N − τ ≥ 1
        // expected recall@k of a random ranking of the accessible premises (k/τ, capped at 1)
        chance_recall: Math.min(k, tau) / tau,
        accessible_count: tau,
      },
      checks: {
        filtered_dominates: (Object.keys(filtered) as (keyof RankMetrics)[]).every((key) => filtered[key] >= unfiltered[key]),
      },
    };
  },
});
