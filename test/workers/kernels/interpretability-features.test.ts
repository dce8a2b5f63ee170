import { expect } from 'chai';
import sae from '../../../workers/kernels/interpretability-features.js';
import { topK } from '../../../workers/lib/ranking.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { rejects, runRaw } from '../../helpers/kernels.js';
import { addAt } from '../../helpers/indexed.js';

const run = (o: Record<string, number>) => runRaw(sae, Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]))).result as any;

/** Squared distance from x to the span of `cols`, by modified Gram–Schmidt with rank-deficient columns dropped. */
function residualToSpan(cols: number[][], x: number[]): number {
  const basis: number[][] = [];
  for (const c of cols) {
    const v = c.slice();
    for (const q of basis) {
      const p = q.reduce((s, qi, i) => s + qi * v[i]!, 0);
      q.forEach((qi, i) => addAt(v, i, -p * qi));
    }
    const n = Math.hypot(...v);
    if (n > 1e-7) basis.push(v.map((vi) => vi / n));
  }
  const r = x.slice();
  for (const q of basis) {
    const p = q.reduce((s, qi, i) => s + qi * r[i]!, 0);
    q.forEach((qi, i) => addAt(r, i, -p * qi));
  }
  return r.reduce((s, ri) => s + ri * ri, 0);
}

/** The whole pipeline from the documented draw order: full sort for TopK, Gram–Schmidt projection for the refit. */
function reference(seed: number, d: number, m: number, k: number, batch: number) {
  const rng = new RngStreams(seed, 'interpretability/features');
  const s = Math.min(m, Math.max(1, Math.floor(d / 4)));
  const unitRow = (v: number[]) => {
    const n = Math.hypot(...v);
    return v.map((x) => x / n);
  };
  const fr = rng.stream('features');
  const F = Array.from({ length: m }, () => unitRow(Array.from(fr.normals(d))));
  const pr = rng.stream('perturb');
  const D = F.map((f) => {
    const noise = pr.normals(d, Math.sqrt(0.01 / d));
    return unitRow(f.map((x, i) => x + noise[i]!));
  });
  const dr = rng.stream('data');
  const xs: number[][] = [];
  let sseSae = 0;
  let sseRefit = 0;
  let hits = 0;
  let l0 = 0;
  const counts = new Array<number>(m).fill(0);
  const examples: { x: number[]; true_features: { feature: number; amplitude: number }[]; selected: { feature: number; pre: number }[]; next: number | null }[] = [];
  for (let e = 0; e < batch; e++) {
    const active = dr.sample(m, s);
    const amps = active.map(() => dr.uniform(0.5, 1.5));
    const x = new Array<number>(d).fill(0);
    active.forEach((f, t) => F[f]!.forEach((v, i) => addAt(x, i, amps[t]! * v)));
    xs.push(x);
    const pre = D.map((row) => row.reduce((acc, v, i) => acc + v * x[i]!, 0));
    const order = pre.map((v, j) => ({ v, j })).sort((a, b) => b.v - a.v || a.j - b.j);
    const support = order.slice(0, k).filter((o) => o.v > 0).map((o) => o.j);
    if (e < 4) examples.push({ x, true_features: active.map((f, t) => ({ feature: f, amplitude: amps[t]! })), selected: order.slice(0, k).map((o) => ({ feature: o.j, pre: o.v })), next: k < m ? order[k]!.v : null });
    l0 += support.length;
    for (const j of support) {
      addAt(counts, j);
      if (active.includes(j)) hits++;
    }
    const xhat = new Array<number>(d).fill(0);
    for (const j of support) D[j]!.forEach((v, i) => addAt(xhat, i, pre[j]! * v));
    sseSae += x.reduce((acc, v, i) => acc + (v - xhat[i]!) ** 2, 0);
    sseRefit += residualToSpan(support.map((j) => D[j]!), x);
  }
  const mean = new Array<number>(d).fill(0);
  for (const x of xs) x.forEach((v, i) => addAt(mean, i, v / batch));
  let sst = 0;
  for (const x of xs) x.forEach((v, i) => (sst += (v - mean[i]!) ** 2));
  return { sseSae, sseRefit, sst, recall: hits / (s * batch), precision: hits / l0, l0Mean: l0 / batch, dead: counts.filter((c) => c === 0).length, counts, examples };
}

describe('kernel interpretability/features', () => {
  it('matches an independent pipeline (sorted TopK, Gram–Schmidt refit) on 10 seeds and shapes', () => {
    const shapes = [[16, 128, 8, 64], [8, 32, 3, 20], [4, 5, 5, 7], [32, 64, 32, 16], [2, 2, 1, 3]];
    for (let seed = 0; seed < 10; seed++) {
      const [d, m, k, batch] = shapes[seed % shapes.length]!;
      const r = run({ d_model: d!, n_features: m!, top_k: k!, batch: batch!, seed });
      const ref = reference(seed, d!, m!, k!, batch!);
      expect(r.l0_mean).to.be.closeTo(ref.l0Mean, 1e-12);
      expect(r.support_recall).to.be.closeTo(ref.recall, 1e-12);
      expect(r.support_precision).to.be.closeTo(ref.precision, 1e-12);
      expect(r.dead_features).to.equal(ref.dead);
      expect(r.sse_sae).to.be.closeTo(ref.sseSae, 1e-9 * Math.max(1, ref.sseSae));
      expect(r.fvu_sae).to.be.closeTo(ref.sseSae / ref.sst, 1e-9 * Math.max(1, ref.sseSae / ref.sst));
      expect(r.sse_refit).to.be.closeTo(ref.sseRefit, 1e-7 * Math.max(1, ref.sst));
      expect(r.fvu_refit).to.be.closeTo(ref.sseRefit / ref.sst, 1e-7 * Math.max(1, ref.sseRefit / ref.sst));
      expect(r.superposition_ratio).to.equal(m! / d!);
      // the most frequent features: count descending, then feature index, at most 10
      const freq = ref.counts.map((c, j) => ({ feature: j, count: c })).sort((a, b) => b.count - a.count || a.feature - b.feature).slice(0, 10);
      expect(r.top_frequencies).to.deep.equal(freq);
      // the first examples: input, true features, the k selected pre-activations and the (k+1)-th, from the reference encoder
      expect(r.examples).to.have.length(Math.min(4, batch!));
      r.examples.forEach((ex: any, e: number) => {
        const want = ref.examples[e]!;
        expect(ex.x).to.have.length(d!);
        ex.x.forEach((v: number, i: number) => expect(v).to.be.closeTo(want.x[i]!, 1e-12));
        expect(ex.true_features.map((t: any) => t.feature)).to.deep.equal(want.true_features.map((t) => t.feature));
        ex.true_features.forEach((t: any, i: number) => expect(t.amplitude).to.be.closeTo(want.true_features[i]!.amplitude, 1e-15));
        expect(ex.selected.map((x: any) => x.feature)).to.deep.equal(want.selected.map((x) => x.feature));
        ex.selected.forEach((x: any, i: number) => {
          expect(x.pre_activation).to.be.closeTo(want.selected[i]!.pre, 1e-12);
          expect(x.activation).to.be.closeTo(Math.max(0, want.selected[i]!.pre), 1e-12);
        });
        if (want.next === null) expect(ex.next_pre_activation).to.equal(null);
        else expect(ex.next_pre_activation).to.be.closeTo(want.next, 1e-12);
      });
    }
  });

  it('L0 ≤ top_k; each example’s selected pre-activations are sorted and ≥ the (k+1)-th', () => {
    for (const k of [1, 4, 8, 32]) {
      const r = run({ top_k: k, seed: k });
      expect(r.l0_max).to.be.at.most(k);
      expect(r.l0_mean).to.be.at.most(r.l0_max);
      for (const ex of r.examples) {
        const pre = ex.selected.map((s: any) => s.pre_activation);
        expect(pre).to.have.length(k);
        for (let i = 1; i < k; i++) expect(pre[i]).to.be.at.most(pre[i - 1]);
        for (const p of pre) expect(p).to.be.at.least(ex.next_pre_activation);
        for (const s of ex.selected) expect(s.activation).to.equal(Math.max(0, s.pre_activation));
      }
    }
    expect(run({ n_features: 4, top_k: 4 }).examples[0].next_pre_activation).to.equal(null);
  });

  it('topK keeps the k largest, descending, ties to the lower index', () => {
    expect(topK([1, 3, 3, 2, 3], 2)).to.deep.equal([1, 2]);
    expect(topK([0, 0, 0], 3)).to.deep.equal([0, 1, 2]);
    expect(topK([5, -1, 7, 7, 6], 4)).to.deep.equal([2, 3, 4, 0]);
  });

  it('recall is non-decreasing and refit FVU non-increasing in top_k; the refit never loses to the SAE amplitudes', () => {
    for (let seed = 0; seed < 5; seed++) {
      let prev: any = null;
      for (const k of [1, 2, 4, 8, 16, 32]) {
        const r = run({ top_k: k, seed });
        expect(r.fvu_refit).to.be.at.most(r.fvu_sae + 1e-9);
        if (prev) {
          expect(r.support_recall).to.be.at.least(prev.support_recall);
          expect(r.fvu_refit).to.be.at.most(prev.fvu_refit + 1e-9);
        }
        prev = r;
      }
    }
  });

  it('[trend] recall falls as the superposition ratio n_features/d_model grows (10 seeds)', () => {
    const ms = [16, 32, 64, 128, 256];
    const means = new Array(ms.length).fill(0);
    let wins = 0;
    for (let seed = 0; seed < 10; seed++) {
      const rec = ms.map((m) => run({ d_model: 16, n_features: m, top_k: 8, seed }).support_recall as number);
      rec.forEach((v, i) => (means[i] += v / 10));
      if (rec[0]! > rec.at(-1)!) wins++;
    }
    expect(wins).to.be.at.least(9);
    for (let i = 1; i < ms.length; i++) expect(means[i]).to.be.below(means[i - 1]);
    expect(run({ d_model: 16, n_features: 128 }).superposition_ratio).to.equal(8);
  });

  it('batch = 1 has no variance: fvu is null with a reason', () => {
    const r = run({ batch: 1 });
    expect(r.fvu_sae).to.equal(null);
    expect(r.fvu_reason).to.be.a('string');
  });

  it('top_k must not exceed n_features', () => {
    expect(rejects(sae, { n_features: '4', top_k: '5' })).to.deep.equal(['top_k:constraint']);
    expect(rejects(sae, { n_features: '4', top_k: '4' })).to.deep.equal([]);
  });
});
