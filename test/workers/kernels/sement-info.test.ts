import { expect } from 'chai';
import info from '../../../workers/kernels/sement-info.js';
import est from '../../../workers/kernels/sement-estimate.js';
import { paramsFor, rejects, runRaw } from '../../helpers/kernels.js';
import { ariByPairs, purityOf, redraw } from '../../helpers/semantic-entropy-reference.js';

const H = (counts: number[]): number => {
  const t = counts.reduce((a, b) => a + b, 0);
  return -counts.filter((c) => c > 0).reduce((s, c) => s + (c / t) * Math.log(c / t), 0);
};
const raw = (q: Record<string, unknown> = {}): any => runRaw(info, q).result;

/** Independent greedy first-member clustering over the example's strings table. */
function recluster(ex: any, threshold: number): number[][] {
  const emb = new Map<string, ArrayLike<number>>(ex.strings.map((s: any) => [s.string, s.embedding]));
  const cos = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
    let d = 0;
    let na = 0;
    let nb = 0;
    for (let i = 0; i < a.length; i++) {
      d += a[i]! * b[i]!;
      na += a[i]! ** 2;
      nb += b[i]! ** 2;
    }
    return d / Math.sqrt(na * nb);
  };
  const out: number[][] = [];
  ex.samples.forEach((s: any, i: number) => {
    const home = out.find((c) => {
      const f = ex.samples[c[0]!].string;
      return f === s.string || cos(emb.get(f)!, emb.get(s.string)!) >= threshold - 1e-12;
    });
    if (home) home.push(i);
    else out.push([i]);
  });
  return out;
}

describe('kernel sement/info', () => {
  it('the answers are redrawn independently from streams meanings and samples; π, purity and ARI recomputed', () => {
    for (const [seed, K, C, th] of [[42, 40, 5, 0.6], [7, 120, 12, 0.5], [3, 13, 13, 0.9], [5, 150, 8, 0.1], [6, 90, 10, 0.2]] as const) {
      const r = runRaw(info, { seed, K, n_clusters: C, threshold: th }).result as any;
      const ref = redraw('sement/info', seed, K, C);
      expect(r.example.pi).to.have.length(ref.pi.length);
      Array.from(r.example.pi as ArrayLike<number>).forEach((p, c) => expect(p).to.be.closeTo(ref.pi[c]!, 1e-12));
      expect(r.example.samples.map((x: any) => [x.meaning, x.paraphrase, x.string])).to.deep.equal(ref.samples.map((x) => [x.meaning, x.paraphrase, x.string]));
      r.example.samples.forEach((x: any, k: number) => expect(x.loglik).to.be.closeTo(ref.samples[k]!.loglik, 1e-12));
      const strings = new Map<string, ArrayLike<number>>(r.example.strings.map((x: any) => [x.string, x.embedding]));
      for (const x of ref.samples) Array.from(strings.get(x.string)!).forEach((v, d) => expect(v).to.be.closeTo(x.embedding[d]!, 1e-12));
      expect(strings.size).to.equal(new Set(ref.samples.map((x) => x.string)).size);
      const clusters: number[][] = r.example.clusters.map((c: any) => c.members);
      const truth = ref.samples.map((x) => x.meaning);
      const labels = new Array<number>(K);
      clusters.forEach((c, ci) => c.forEach((i) => (labels[i] = ci)));
      expect(r.example.purity).to.be.closeTo(purityOf(clusters, truth), 1e-12);
      expect(r.example.ari).to.be.closeTo(ariByPairs(labels, truth), 1e-12);
    }
  });

  it('recomputes: the greedy rule on the redrawn answers reproduces the clusters, and the entropies their sizes', () => {
    for (const [seed, K, C, th] of [[42, 40, 5, 0.6], [5, 200, 20, 0.5], [6, 13, 13, 0.8]] as const) {
      const ex = raw({ seed, K, n_clusters: C, threshold: th }).example;
      // the answers redrawn from streams meanings and samples, shaped as the example (samples, distinct strings)
      const ref = redraw('sement/info', seed, K, C);
      const mine = { samples: ref.samples, strings: [...new Map(ref.samples.map((x) => [x.string, x.embedding]))].map(([string, embedding]) => ({ string, embedding })) };
      const clusters = recluster(mine, th);
      expect(ex.clusters.map((c: any) => c.members)).to.deep.equal(clusters);
      expect(ex.clusters.map((c: any) => c.size)).to.deep.equal(clusters.map((c) => c.length));
      expect(ex.se_discrete).to.be.closeTo(H(clusters.map((c) => c.length)), 1e-12);
      expect(ex.se_miller_madow).to.be.closeTo(ex.se_discrete + (clusters.length - 1) / (2 * K), 1e-12);
      const counts = new Map<string, number>();
      for (const x of ref.samples) counts.set(x.string, (counts.get(x.string) ?? 0) + 1);
      expect(ex.lexical_entropy).to.be.closeTo(H([...counts.values()]), 1e-12);
      expect(ex.true_entropy).to.be.closeTo(H(ref.pi), 1e-12);
    }
  });

  it('grouping never raises entropy and stays in range, for seeds 0–19', () => {
    for (let seed = 0; seed < 20; seed++) {
      const r = raw({ seed });
      const ex = r.example;
      expect(ex.se_discrete).to.be.at.least(0);
      expect(ex.se_discrete).to.be.at.most(ex.lexical_entropy + 1e-12);
      expect(ex.se_discrete).to.be.at.most(Math.log(ex.n_clusters_found) + 1e-12);
      expect(ex.se_weighted).to.be.within(0, Math.log(ex.n_clusters_found) + 1e-12);
      expect(Math.log(ex.n_clusters_found)).to.be.at.most(r.bounds.se_max);
      expect(r.bounds.se_max).to.be.closeTo(Math.log(40), 1e-15);
      expect(r.bounds.se_min).to.equal(0);
      // method.* are descriptive texts (the estimators' formulas as words), not computed values
      // every cluster is a union of identical-string groups
      const home = new Map<string, number>();
      ex.clusters.forEach((c: any, ci: number) =>
        c.members.forEach((i: number) => {
          const s = ex.samples[i].string;
          expect(home.get(s) ?? ci).to.equal(ci);
          home.set(s, ci);
        }),
      );
    }
  });

  it('extremes: threshold −1 gives one cluster and SE 0; threshold 1 gives SE_d = H_lex', () => {
    for (let seed = 0; seed < 10; seed++) {
      expect(raw({ seed, threshold: -1 }).example).to.include({ n_clusters_found: 1, se_discrete: 0 });
      const ex = raw({ seed, threshold: 1 }).example;
      expect(ex.n_clusters_found).to.equal(ex.strings.length);
      expect(ex.se_discrete).to.be.closeTo(ex.lexical_entropy, 1e-12);
    }
  });

  it('is the card of /sement/estimate: its defaults are the route defaults and the same rule gives the same clusters', () => {
    const r = raw();
    const { seed: _s, ...defaults } = paramsFor(est);
    expect(r.method.defaults).to.deep.equal(defaults);
    expect(r.estimate_route).to.equal('/api/svc/v1/sement/estimate');
    // both routes cluster by the same rule: re-run info's rule on estimate's samples
    const e = runRaw(est, { seed: 3 }).result as any;
    const strings = new Map<string, ArrayLike<number>>(e.samples.map((s: any) => [s.string, s.embedding]));
    const asInfo = { samples: e.samples, strings: [...strings].map(([string, embedding]) => ({ string, embedding })) };
    expect(recluster(asInfo, 0.6)).to.deep.equal(e.clusters);
    let ari = 0;
    for (let seed = 0; seed < 20; seed++) ari += raw({ seed }).example.ari;
    expect(ari / 20).to.be.above(0.8);
  });

  it('n_clusters must not exceed K', () => {
    expect(rejects(info, { K: '3', n_clusters: '5' })).to.deep.equal(['n_clusters:constraint']);
    expect(rejects(info, { K: '5', n_clusters: '5' })).to.deep.equal([]);
  });
});
