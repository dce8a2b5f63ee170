import { expect } from 'chai';
import est from '../../../workers/kernels/sement-estimate.js';
import { runRaw } from '../../helpers/kernels.js';
import { ariByPairs, purityOf, redraw } from '../../helpers/semantic-entropy-reference.js';

/** Independent re-implementation of the greedy first-member clustering. */
function recluster(samples: { string: string; embedding: ArrayLike<number> }[], threshold: number): number[][] {
  const cos = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
    let d = 0;
    let na = 0;
    let nb = 0;
    for (let i = 0; i < a.length; i++) {
      d += a[i]! * b[i]!;
      na += a[i]! ** 2;
      nb += b[i]! ** 2;
    }
    return Math.max(-1, Math.min(1, d / Math.sqrt(na * nb)));
  };
  const out: number[][] = [];
  samples.forEach((s, i) => {
    for (const c of out) {
      const f = samples[c[0]!]!;
      if (f.string === s.string || cos(f.embedding, s.embedding) >= threshold - 1e-12) {
        c.push(i);
        return;
      }
    }
    out.push([i]);
  });
  return out;
}
const H = (counts: number[]): number => {
  const t = counts.reduce((a, b) => a + b, 0);
  return -counts.filter((c) => c > 0).reduce((s, c) => s + (c / t) * Math.log(c / t), 0);
};
const stringCounts = (samples: { string: string }[]): number[] => {
  const m = new Map<string, number>();
  for (const s of samples) m.set(s.string, (m.get(s.string) ?? 0) + 1);
  return [...m.values()];
};
const raw = (q: Record<string, unknown>): any => runRaw(est, q).result;

describe('kernel sement/estimate', () => {
  it('the answers are redrawn independently from streams meanings and samples; π, purity and ARI recomputed', () => {
    for (const [seed, K, C, th] of [[42, 40, 5, 0.6], [7, 120, 12, 0.5], [3, 13, 13, 0.9], [5, 150, 8, 0.1], [6, 90, 10, 0.2]] as const) {
      const r = runRaw(est, { seed, K, n_clusters: C, threshold: th }).result as any;
      const ref = redraw('sement/estimate', seed, K, C);
      expect(r.pi).to.have.length(ref.pi.length);
      Array.from(r.pi as ArrayLike<number>).forEach((p, c) => expect(p).to.be.closeTo(ref.pi[c]!, 1e-12));
      expect(r.samples.map((x: any) => [x.meaning, x.paraphrase, x.string])).to.deep.equal(ref.samples.map((x) => [x.meaning, x.paraphrase, x.string]));
      r.samples.forEach((x: any, k: number) => expect(x.loglik).to.be.closeTo(ref.samples[k]!.loglik, 1e-12));
      r.samples.forEach((x: any, k: number) => Array.from(x.embedding as ArrayLike<number>).forEach((v, d) => expect(v).to.be.closeTo(ref.samples[k]!.embedding[d]!, 1e-12)));
      const clusters: number[][] = r.clusters;
      const truth = ref.samples.map((x) => x.meaning);
      const labels = new Array<number>(K);
      clusters.forEach((c, ci) => c.forEach((i) => (labels[i] = ci)));
      expect(r.purity).to.be.closeTo(purityOf(clusters, truth), 1e-12);
      expect(r.ari).to.be.closeTo(ariByPairs(labels, truth), 1e-12);
      expect(r.max_entropy).to.be.closeTo(Math.log(K), 1e-15);
      expect(r.n_clusters_found).to.equal(clusters.length);
    }
  });

  it('recomputes: the greedy clustering of the redrawn answers and every entropy', () => {
    for (const [seed, K, C, th] of [[42, 40, 5, 0.6], [1, 256, 20, 0.6], [2, 100, 50, 0.3], [3, 77, 8, 0.9]] as const) {
      const r = raw({ seed, K, n_clusters: C, threshold: th });
      expect(r.samples).to.have.length(K);
      // everything below from the redrawn answers and π, never from the body's samples
      const ref = redraw('sement/estimate', seed, K, C);
      const samples = ref.samples;
      const clusters = recluster(samples, th);
      expect(r.clusters).to.deep.equal(clusters);
      expect(r.cluster_sizes).to.deep.equal(clusters.map((c) => c.length));
      const sizes = clusters.map((c) => c.length);
      expect(r.se_discrete).to.be.closeTo(H(sizes), 1e-12);
      expect(r.se_discrete_mm).to.be.closeTo(H(sizes) + (clusters.length - 1) / (2 * K), 1e-12);
      expect(r.lexical_entropy).to.be.closeTo(H(stringCounts(samples)), 1e-12);
      const mass = clusters.map((c) => {
        const uniq = new Map<string, number>();
        for (const i of c) uniq.set(samples[i]!.string, Math.exp(samples[i]!.loglik));
        return [...uniq.values()].reduce((a, b) => a + b, 0);
      });
      expect(r.se_likelihood).to.be.closeTo(H(mass), 1e-12);
      expect(r.true_semantic_entropy).to.be.closeTo(-ref.pi.reduce((s: number, p: number) => s + p * Math.log(p), 0), 1e-12);
      // loglik = ln(π_c·w_v) with w = (3, 2, 1)/6
      for (const s of samples) expect(s.loglik).to.be.closeTo(Math.log(ref.pi[s.meaning]! * [3, 2, 1][s.paraphrase]! / 6), 1e-12);
    }
  });

  it('bounds for every seed: 0 ≤ SE_d ≤ ln(found) ≤ ln K, SE_d ≤ H_lex, SE_ℓ ≤ ln(found), ARI and purity in range', () => {
    for (let seed = 0; seed < 20; seed++) {
      const r = raw({ seed });
      expect(r.se_discrete).to.be.at.least(0);
      expect(r.se_discrete).to.be.at.most(Math.log(r.n_clusters_found) + 1e-12);
      expect(Math.log(r.n_clusters_found)).to.be.at.most(r.max_entropy + 1e-12);
      expect(r.se_discrete).to.be.at.most(r.lexical_entropy + 1e-12);
      expect(r.se_likelihood).to.be.within(0, Math.log(r.n_clusters_found) + 1e-12);
      expect(r.ari).to.be.within(-1, 1);
      expect(r.purity).to.be.within(0, 1);
    }
  });

  it('extremes: threshold −1 gives one cluster (SE 0); threshold 1 gives one cluster per distinct string (SE = H_lex)', () => {
    for (let seed = 0; seed < 10; seed++) {
      const lo = raw({ seed, threshold: -1 });
      expect(lo.n_clusters_found).to.equal(1);
      expect(lo.se_discrete).to.equal(0);
      const hi = raw({ seed, threshold: 1 });
      expect(hi.n_clusters_found).to.equal(new Set(hi.samples.map((s: any) => s.string)).size);
      expect(hi.se_discrete).to.be.closeTo(hi.lexical_entropy, 1e-12);
    }
  });

  it('consistency identity: when clusters are the true meanings with all paraphrases seen, SE_ℓ = H(π | observed)', () => {
    let hits = 0;
    for (let seed = 0; seed < 40; seed++) {
      const r = raw({ seed, K: 256, n_clusters: 3 });
      const meanings = [...new Set<number>(r.samples.map((s: any) => s.meaning))];
      const strings = new Set<string>(r.samples.map((s: any) => s.string));
      const exact = r.purity === 1 && r.n_clusters_found === meanings.length && meanings.every((m) => [0, 1, 2].every((v) => strings.has(`c${m}-v${v}`)));
      if (!exact) continue;
      hits++;
      expect(r.se_likelihood).to.be.closeTo(H(meanings.map((m) => r.pi[m])), 1e-12);
    }
    expect(hits).to.be.at.least(10);
  });

  it('trend over seeds 0–19: mean SE_d at n_clusters 1 < 5 < 20, and clusters recover meanings at the defaults', () => {
    const mean = (C: number): number => {
      let s = 0;
      for (let seed = 0; seed < 20; seed++) s += raw({ seed, n_clusters: C }).se_discrete;
      return s / 20;
    };
    const [m1, m5, m20] = [mean(1), mean(5), mean(20)];
    expect(m1).to.be.below(m5);
    expect(m5).to.be.below(m20);
    let ari = 0;
    for (let seed = 0; seed < 20; seed++) ari += raw({ seed }).ari;
    expect(ari / 20).to.be.above(0.8);
  });
});
