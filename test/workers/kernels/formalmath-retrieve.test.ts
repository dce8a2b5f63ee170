import { expect } from 'chai';
import fm from '../../../workers/kernels/formalmath-retrieve.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { roundNumber } from '../../../src/lib/numbers.js';
import { rejects, runBody, runRaw } from '../../helpers/kernels.js';
import { sampledIndex, seriesDigest } from '../../helpers/series-digest.js';

const q = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]));
const KEYS = ['recall_at_k', 'precision_at_k', 'mrr', 'average_precision', 'ndcg_at_k'] as const;

/** Independent reference: the documented draws, cosine scores, ranks by counting who beats whom. */
function reference(seed: number, N: number, dim: number, nRel: number, sep: number) {
  const rng = new RngStreams(seed, 'formalmath/retrieve');
  const raw = rng.stream('q').normals(dim);
  const qn = Math.hypot(...raw);
  const qv = Array.from(raw, (x) => x / qn);
  const g = rng.stream('g').normals(N * dim, 1 / Math.sqrt(dim));
  const pos = Array.from({ length: N }, (_, j) => j);
  const ps = rng.stream('pos');
  for (let i = N - 1; i > 0; i--) {
    const j = Math.floor(ps.next() * (i + 1));
    [pos[i], pos[j]] = [pos[j]!, pos[i]!];
  }
  const tau = Math.floor(0.8 * N);
  const acc = pos.flatMap((p, j) => (p < tau ? [j] : []));
  const pick = [...acc.keys()];
  const rs = rng.stream('rel');
  for (let i = 0; i < nRel; i++) {
    const j = i + Math.floor(rs.next() * (tau - i));
    [pick[i], pick[j]] = [pick[j]!, pick[i]!];
  }
  const gold = new Set(pick.slice(0, nRel).map((i) => acc[i]!));
  const score = Array.from({ length: N }, (_, j) => {
    const v = qv.map((qi, i) => g[j * dim + i]! + (gold.has(j) ? sep * qi : 0));
    return v.reduce((s, x, i) => s + x * qv[i]!, 0) / Math.hypot(...v);
  });
  const beats = (a: number, b: number) => score[a]! > score[b]! || (score[a] === score[b] && a < b);
  const rankIn = (cands: number[]) => [...gold].map((j) => 1 + cands.filter((c) => c !== j && beats(c, j)).length).sort((a, b) => a - b);
  const goldScores = [...gold].map((j) => score[j]!);
  const other = score.filter((_, j) => !gold.has(j));
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  return { gold: [...gold].sort((a, b) => a - b), filtered: rankIn(acc), unfiltered: rankIn(pos.map((_, j) => j)), gap: mean(goldScores) - mean(other), tau };
}

/** Metrics written from their definitions over a ranked 0/1 relevance list. */
function metrics(ranks: number[], k: number, length: number) {
  const rel = Array.from({ length }, (_, i) => (ranks.includes(i + 1) ? 1 : 0));
  const m = ranks.length;
  const topk = rel.slice(0, k).reduce<number>((s, x) => s + x, 0);
  let found = 0;
  let ap = 0;
  rel.forEach((x, i) => {
    if (x) ap += ++found / (i + 1);
  });
  const dcg = rel.slice(0, k).reduce<number>((s, x, i) => s + x / Math.log2(i + 2), 0);
  const ideal = Array.from({ length: Math.min(k, m) }, (_, i) => 1 / Math.log2(i + 2)).reduce((s, x) => s + x, 0);
  return { recall_at_k: topk / m, precision_at_k: topk / k, mrr: 1 / (rel.indexOf(1) + 1), average_precision: ap / m, ndcg_at_k: dcg / ideal };
}

describe('kernel formalmath/retrieve', () => {
  it('ranks, gold set and score gap equal an independent brute-force reference; metrics follow their definitions', () => {
    for (const [seed, N, dim, nRel, k, sep] of [[42, 512, 16, 8, 16, 0.4], [1, 40, 3, 5, 40, 1.5], [2, 2, 2, 1, 1, 0], [3, 300, 8, 30, 100, 0.2], [4, 101, 64, 80, 7, 10]] as const) {
      const r = runRaw(fm, q({ seed, corpus_size: N, dim, n_relevant: nRel, k, separation: sep })).result as any;
      const ref = reference(seed, N, dim, nRel, sep);
      expect(r.gold_premises).to.deep.equal(ref.gold);
      expect(r.relevant_ranks).to.deep.equal(ref.filtered);
      expect(r.relevant_ranks_unfiltered).to.deep.equal(ref.unfiltered);
      expect(r.mean_score_gap).to.be.closeTo(ref.gap, 1e-12);
      expect(r.accessible_count).to.equal(ref.tau);
      expect(r.chance_recall).to.be.closeTo(Math.min(k, ref.tau) / ref.tau, 1e-15);
      const mf = metrics(ref.filtered, k, ref.tau);
      const mu = metrics(ref.unfiltered, k, N);
      for (const key of KEYS) {
        expect(r.metrics.filtered[key]).to.be.closeTo(mf[key], 1e-12);
        expect(r.metrics.unfiltered[key]).to.be.closeTo(mu[key], 1e-12);
      }
    }
  });

  it('recall curve, its sampled k and its digest recomputed from the reference ranks; metrics in [0,1]; filtered ≥ unfiltered', () => {
    for (const [seed, N, nRel, k, sep] of [[5, 2048, 40, 1024, 0.3], [6, 512, 8, 16, 0.4], [7, 64, 51, 64, 0.1], [8, 1000, 256, 300, 0]] as const) {
      const r = runRaw(fm, q({ seed, corpus_size: N, n_relevant: nRel, k, separation: sep })).result as any;
      const ref = reference(seed, N, 16, nRel, sep);
      expect(r.relevant_ranks).to.deep.equal(ref.filtered);
      expect(r.relevant_ranks_unfiltered).to.deep.equal(ref.unfiltered);
      // recall@i for every i = 1…k, counted from the reference's gold ranks
      const full = Array.from({ length: k }, (_, i) => ref.filtered.filter((x) => x <= i + 1).length / nRel);
      const index = sampledIndex(k);
      expect(r.recall_curve_k).to.deep.equal(index.map((i) => i + 1));
      expect(r.recall_curve).to.deep.equal(index.map((i) => roundNumber(full[i]!))); // sampled values are rounded
      expect(r.recall_curve_digest).to.equal(seriesDigest(full));
      expect(r.recall_curve.at(-1)).to.be.closeTo(metrics(ref.filtered, k, ref.tau).recall_at_k, 1e-12);
      for (const key of KEYS) {
        for (const side of ['filtered', 'unfiltered']) expect(r.metrics[side][key]).to.be.within(0, 1);
        expect(r.metrics.filtered[key]).to.be.at.least(r.metrics.unfiltered[key]);
      }
    }
  });

  it('every gold rank is non-increasing and every metric non-decreasing in separation (same seed)', () => {
    for (const seed of [42, 3, 17]) {
      let prev: any = null;
      for (const sep of [0, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3, 10]) {
        const r = runRaw(fm, q({ seed, corpus_size: 1024, n_relevant: 16, k: 32, separation: sep })).result as any;
        if (prev) {
          expect(r.gold_premises).to.deep.equal(prev.gold_premises);
          r.relevant_ranks.forEach((x: number, i: number) => expect(x).to.be.at.most(prev.relevant_ranks[i]));
          for (const key of KEYS) expect(r.metrics.filtered[key]).to.be.at.least(prev.metrics.filtered[key]);
          expect(r.mean_score_gap).to.be.above(prev.mean_score_gap);
        }
        prev = r;
      }
      expect(prev.metrics.filtered.recall_at_k).to.equal(1);
    }
  });

  it('[trend] with separation 0 the mean recall@k over 20 seeds is near chance', () => {
    let sum = 0;
    let chance = 0;
    for (let seed = 0; seed < 20; seed++) {
      const r = runRaw(fm, q({ seed, corpus_size: 512, n_relevant: 32, k: 128, separation: 0 })).result as any;
      sum += r.metrics.filtered.recall_at_k;
      chance = r.chance_recall;
    }
    expect(chance).to.be.closeTo(128 / 409, 1e-12);
    expect(Math.abs(sum / 20 - chance)).to.be.below(0.08);
  });

  it('another seed draws other gold premises; n_relevant ≤ ⌊0.8·corpus_size⌋ and k ≤ corpus_size', () => {
    const a = JSON.parse(runBody(fm, { seed: '1' }));
    const b = JSON.parse(runBody(fm, { seed: '2' }));
    expect(a.result.gold_premises).to.not.deep.equal(b.result.gold_premises);
    // n_relevant ≤ floor(0.8·corpus_size); k ≤ corpus_size
    expect(rejects(fm, { corpus_size: '10', n_relevant: '9', k: '5' })).to.deep.equal(['n_relevant:constraint']);
    expect(rejects(fm, { corpus_size: '10', n_relevant: '8', k: '5' })).to.deep.equal([]);
    expect(rejects(fm, { corpus_size: '10', n_relevant: '2', k: '11' })).to.deep.equal(['k:constraint']);
    expect(rejects(fm, { corpus_size: '2', n_relevant: '2', k: '3' })).to.deep.equal(['n_relevant:constraint', 'k:constraint']);
  });
});
