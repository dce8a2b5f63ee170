import { expect } from 'chai';
import qhall, { clusterEntropies, greedyClusters, kleVne, type Generations } from '../../../workers/kernels/qhall-quantify.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { runRaw } from '../../helpers/kernels.js';

/** ln det(A) by an independent Cholesky (A symmetric positive definite, as array of rows). */
function logDet(A: number[][]): number {
  const n = A.length;
  const L = A.map(() => new Array<number>(n).fill(0));
  let s = 0;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let v = A[i]![j]!;
      for (let k = 0; k < j; k++) v -= L[i]![k]! * L[j]![k]!;
      L[i]![j] = i === j ? Math.sqrt(v) : v / L[j]![j]!;
    }
    s += 2 * Math.log(L[i]![i]!);
  }
  return s;
}

/** Test-side symmetric eigenvalues by classical Jacobi (largest off-diagonal pivot). */
function eigenvalues(A0: number[][]): number[] {
  const A = A0.map((r) => r.slice());
  const n = A.length;
  for (let it = 0; it < 200 * n * n; it++) {
    let p = 0;
    let q = 1;
    let big = 0;
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) if (Math.abs(A[i]![j]!) > big) [big, p, q] = [Math.abs(A[i]![j]!), i, j];
    if (big < 1e-15) break;
    const phi = 0.5 * Math.atan2(2 * A[p]![q]!, A[q]![q]! - A[p]![p]!);
    const c = Math.cos(phi);
    const s = Math.sin(phi);
    for (let k = 0; k < n; k++) {
      const akp = A[k]![p]!;
      const akq = A[k]![q]!;
      A[k]![p] = c * akp - s * akq;
      A[k]![q] = s * akp + c * akq;
    }
    for (let k = 0; k < n; k++) {
      const apk = A[p]![k]!;
      const aqk = A[q]![k]!;
      A[p]![k] = c * apk - s * aqk;
      A[q]![k] = s * apk + c * aqk;
    }
  }
  return A.map((r, i) => r[i]!);
}

const centre = (z: number[]): number[] => {
  const m = z.reduce((a, b) => a + b, 0) / z.length;
  return z.map((v) => v - m);
};
const dot = (a: number[], b: number[]): number => a.reduce((s, x, i) => s + x * b[i]!, 0);

/** Generations redrawn: A·dim prototype normals from one stream, then per generation int(A) and dim normals ×0.35 from another (the questions use one stream for both). */
function draw(protos: ReturnType<RngStreams['stream']>, gens: ReturnType<RngStreams['stream']>, K: number, dim: number, A: number) {
  const mu = Array.from({ length: A }, () => Array.from({ length: dim }, () => protos.normal()));
  return Array.from({ length: K }, () => {
    const a = Math.floor(gens.next() * A);
    return { latent: a, z: mu[a]!.map((m) => m + 0.35 * gens.normal()) };
  });
}
const eigenScoreOf = (gs: { z: number[] }[]): number => {
  const Z = gs.map((g) => centre(g.z));
  return logDet(Z.map((a, i) => Z.map((b, j) => dot(a, b) + (i === j ? 1e-3 : 0)))) / gs.length;
};

describe('kernel qhall/quantify', () => {
  it('generations redrawn from their streams; the Gram eigenvalues, the KLE spectrum and all 16 detection EigenScores recomputed', () => {
    for (const [seed, K, dim, A] of [[42, 24, 8, 3], [5, 6, 10, 4], [9, 30, 4, 1]] as const) {
      const r = runRaw(qhall, { seed, generations: K, dim, latent_answers: A }).result as any;
      const rng = new RngStreams(seed, 'qhall/quantify');
      const gens = draw(rng.stream('answers'), rng.stream('gens'), K, dim, A);
      expect(r.generations).to.have.length(K);
      r.generations.forEach((g: any, j: number) => {
        expect(g.z).to.have.length(dim);
        expect(g.latent).to.equal(gens[j]!.latent);
        Array.from(g.z as ArrayLike<number>).forEach((x, i) => expect(x).to.be.closeTo(gens[j]!.z[i]!, 1e-15));
      });
      // eigenvalues of the smaller of the centred Gram (K×K) and scatter (dim×dim) matrices
      const Z = gens.map((g) => centre(g.z));
      const small = K <= dim ? Z.map((a) => Z.map((b) => dot(a, b))) : Array.from({ length: dim }, (_, a) => Array.from({ length: dim }, (_, b) => Z.reduce((t, z) => t + z[a]! * z[b]!, 0)));
      const want = eigenvalues(small).sort((a, b) => a - b);
      expect(r.eigenvalues).to.have.length(want.length);
      Array.from(r.eigenvalues as ArrayLike<number>).sort((a, b) => a - b).forEach((x, i) => expect(x).to.be.closeTo(want[i]!, 1e-9));
      const U = gens.map((g) => g.z.map((v) => v / Math.hypot(...g.z)));
      const rho = K <= dim ? U.map((a) => U.map((b) => dot(a, b) / K)) : Array.from({ length: dim }, (_, a) => Array.from({ length: dim }, (_, b) => U.reduce((t, u) => t + (u[a]! * u[b]!) / K, 0)));
      const spec = eigenvalues(rho).sort((a, b) => a - b);
      expect(r.kle_spectrum).to.have.length(spec.length);
      Array.from(r.kle_spectrum as ArrayLike<number>).sort((a, b) => a - b).forEach((x, i) => expect(x).to.be.closeTo(spec[i]!, 1e-12));
      const grounded: number[] = [];
      const confab: number[] = [];
      for (let q = 0; q < 16; q++) {
        const st = rng.stream(`questions/${q}`);
        (q < 8 ? grounded : confab).push(eigenScoreOf(draw(st, st, K, dim, q < 8 ? 1 : A)));
      }
      r.detection.eigenscores_grounded.forEach((x: number, i: number) => expect(x).to.be.closeTo(grounded[i]!, 1e-9));
      r.detection.eigenscores_confab.forEach((x: number, i: number) => expect(x).to.be.closeTo(confab[i]!, 1e-9));
    }
  });

  it('EigenScore via the K×K Gram equals the dim×dim path (Sylvester), both recomputed by log-determinants', () => {
    for (const [seed, K, dim] of [[42, 24, 8], [3, 5, 12], [7, 40, 3]] as const) {
      const r = runRaw(qhall, { seed, generations: K, dim }).result as any;
      const Z = r.generations.map((g: any) => centre(Array.from(g.z)));
      const gramK = Z.map((a: number[], i: number) => Z.map((b: number[], j: number) => dot(a, b) + (i === j ? 1e-3 : 0)));
      const esK = logDet(gramK) / K;
      const cov = Array.from({ length: dim }, (_, a) => Array.from({ length: dim }, (_, b) => Z.reduce((s: number, z: number[]) => s + z[a]! * z[b]!, 0) + (a === b ? 1e-3 : 0)));
      const esD = (logDet(cov) + (K - dim) * Math.log(1e-3)) / K;
      expect(esK).to.be.closeTo(esD, 1e-9);
      expect(r.eigenscore).to.be.closeTo(esK, 1e-9);
      expect(r.eigenvalues).to.have.length(Math.min(K, dim));
    }
  });

  it('ρ has unit trace and 0 ≤ VNE ≤ ln min(K, dim); VNE recomputes with an independent eigensolver', () => {
    for (const [seed, K, dim, A] of [[42, 24, 8, 3], [5, 6, 10, 4], [9, 30, 4, 1]] as const) {
      const r = runRaw(qhall, { seed, generations: K, dim, latent_answers: A }).result as any;
      const U = r.generations.map((g: any) => {
        const z = Array.from(g.z as Float64Array);
        const n = Math.hypot(...z);
        return z.map((v) => v / n);
      });
      const rho = U.map((a: number[]) => U.map((b: number[]) => dot(a, b) / K));
      const ev = eigenvalues(rho);
      expect(ev.reduce((a, b) => a + b, 0)).to.be.closeTo(1, 1e-12);
      const vne = -ev.reduce((s, l) => s + (l > 1e-14 ? l * Math.log(l) : 0), 0);
      expect(r.kle_vne).to.be.closeTo(vne, 1e-9);
      expect(r.kle_vne).to.be.within(0, Math.log(Math.min(K, dim)) + 1e-12);
    }
  });

  it('orthonormal prototypes without noise give VNE = SE = entropy of the latent proportions', () => {
    const dim = 6;
    const latent = [0, 2, 2, 1, 0, 2, 5, 2, 1, 0];
    const K = latent.length;
    const z = new Float64Array(K * dim);
    latent.forEach((a, j) => (z[j * dim + a] = 1));
    const g: Generations = { K, dim, latent: Int32Array.from(latent), z };
    const counts = [3, 2, 4, 0, 0, 1];
    const h = -counts.reduce((s, c) => s + (c ? (c / K) * Math.log(c / K) : 0), 0);
    expect(kleVne(g).vne).to.be.closeTo(h, 1e-12);
    const clusters = greedyClusters(g);
    expect(clusters).to.deep.equal([[0, 4, 9], [1, 2, 5, 7], [3, 8], [6]]);
    expect(clusterEntropies(clusters.map((c) => c.length), K).shannon).to.be.closeTo(h, 1e-12);
  });

  it('re-derives the greedy clusters and entropies; Rényi-2 ≤ SE ≤ ln #clusters and the plateau readout is consistent', () => {
    for (let seed = 0; seed < 6; seed++) {
      const out = runRaw(qhall, { seed, latent_answers: 1 + seed });
      const r = out.result as any;
      const { generations: K, dim } = out.params;
      // the generations redrawn from their streams, not read back from the body
      const rng = new RngStreams(seed, 'qhall/quantify');
      const gens = draw(rng.stream('answers'), rng.stream('gens'), K, dim, 1 + seed);
      const U = gens.map((g) => {
        const z = Array.from(g.z);
        const n = Math.hypot(...z);
        return z.map((v) => v / n);
      });
      const clusters: number[][] = [];
      U.forEach((u: number[], j: number) => {
        let best = -1;
        let bc = -Infinity;
        clusters.forEach((c, ci) => {
          const s = dot(u, U[c[0]!]!);
          if (s >= 0.55 && s > bc) [best, bc] = [ci, s];
        });
        if (best < 0) clusters.push([j]);
        else clusters[best]!.push(j);
      });
      expect(r.clusters).to.deep.equal(clusters);
      const p = clusters.map((c) => c.length / K);
      const se = 0 - p.reduce((s, q) => s + q * Math.log(q), 0);
      const r2 = -Math.log(p.reduce((s, q) => s + q * q, 0));
      expect(r.semantic_entropy).to.be.closeTo(se, 1e-12);
      expect(r.renyi2_entropy).to.be.closeTo(r2, 1e-12);
      expect(r.cluster_sizes).to.deep.equal(clusters.map((c) => c.length));
      expect(r.normalized_entropy).to.be.closeTo(se / Math.log(K), 1e-12);
      expect(r2).to.be.at.most(se + 1e-12);
      expect(se).to.be.at.most(Math.log(clusters.length) + 1e-12);
      const nu = Math.min(8, Math.floor((8 * se) / Math.log(K)));
      expect(r.plateau).to.deep.equal({ levels: 8, nu, g: nu / 8 });
    }
  });

  it('detects confabulation: AUROC ≥ 0.95 at 3 latent answers, chance at 1, EigenScore rising with the answers (seeds 0…9)', () => {
    let chance = 0;
    const mean = { 1: 0, 3: 0, 8: 0 } as Record<number, number>;
    for (let seed = 0; seed < 10; seed++) {
      const three = runRaw(qhall, { seed, latent_answers: 3 }).result as any;
      const { eigenscores_grounded: g, eigenscores_confab: c, auroc } = three.detection;
      let u = 0;
      for (const x of c) for (const y of g) u += x > y ? 1 : x === y ? 0.5 : 0;
      expect(auroc).to.equal(u / 64);
      expect(auroc).to.be.at.least(0.95);
      chance += (runRaw(qhall, { seed, latent_answers: 1 }).result as any).detection.auroc;
      for (const A of [1, 3, 8]) mean[A]! += (runRaw(qhall, { seed, latent_answers: A }).result as any).eigenscore / 10;
    }
    expect(chance / 10).to.be.within(0.3, 0.7);
    expect(mean[1]).to.be.below(mean[3]!);
    expect(mean[3]).to.be.below(mean[8]!);
  });
});
