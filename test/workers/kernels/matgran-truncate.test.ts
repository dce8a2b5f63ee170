import { expect } from 'chai';
import matgran from '../../../workers/kernels/matgran-truncate.js';
import { jacobiEigen } from '../../../workers/lib/linalg.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { rejects, runRaw } from '../../helpers/kernels.js';

const q = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]));

/** The documented inputs (kernels-c §14), regenerated independently: centroids stream, then noise row by row. */
function regenerate(seed: number, dim: number, K: number, n: number): { X: number[][]; y: number[] } {
  const rng = new RngStreams(seed, 'matgran/truncate');
  const cs = rng.stream('centroids');
  const centroids = Array.from({ length: K }, () => Array.from({ length: dim }, () => cs.normal()));
  const noise = rng.stream('noise');
  const X = Array.from({ length: n }, (_, i) => centroids[i % K]!.map((c) => 0.6 * c + noise.normal()));
  return { X, y: X.map((_, i) => i % K) };
}

/** Brute-force leave-one-out nearest centroid: recompute every centroid without item i. */
function looAccuracy(F: number[][], y: number[], K: number): number {
  let correct = 0;
  for (let i = 0; i < F.length; i++) {
    let best = -1;
    let bestD = Infinity;
    for (let k = 0; k < K; k++) {
      const members = F.filter((_, t) => y[t] === k && t !== i);
      const mu = F[i]!.map((_, j) => members.reduce((s, f) => s + f[j]!, 0) / members.length);
      const d = F[i]!.reduce((s, v, j) => s + (v - mu[j]!) ** 2, 0);
      if (d < bestD) {
        bestD = d;
        best = k;
      }
    }
    if (best === y[i]) correct++;
  }
  return correct / F.length;
}

describe('kernel matgran/truncate', () => {
  it('matches an independent reference: eigenvalues (Jacobi), brute-force LOO accuracies and axis-prefix variance', () => {
    const [seed, dim, K, n] = [5, 12, 4, 40];
    const r = runRaw(matgran, q({ seed, dim, n_classes: K, n_items: n })).result as any;
    const { X, y } = regenerate(seed, dim, K, n);
    const mean = X[0]!.map((_, j) => X.reduce((s, x) => s + x[j]!, 0) / n);
    const Xc = X.map((x) => x.map((v, j) => v - mean[j]!));
    const C = new Float64Array(dim * dim);
    for (let a = 0; a < dim; a++) for (let b = 0; b < dim; b++) C[a * dim + b] = Xc.reduce((s, x) => s + x[a]! * x[b]!, 0) / (n - 1);
    const { values, vectors } = jacobiEigen({ rows: dim, cols: dim, data: C });
    const order = Array.from(values.keys()).reverse();
    order.forEach((src, i) => expect(r.eigenvalues[i]).to.be.closeTo(values[src]!, 1e-10));
    const Z = Xc.map((x) => order.map((src) => x.reduce((s, v, a) => s + v * vectors.data[a * dim + src]!, 0)));
    expect(r.granularities).to.deep.equal([1, 3, 6, 12]);
    expect(r.table.map((row: any) => row.m)).to.deep.equal([1, 3, 6, 12]);
    expect(r.eigenvalues).to.have.length(dim);
    let trace = 0;
    for (let a = 0; a < dim; a++) trace += C[a * dim + a]!;
    for (const row of r.table) {
      expect(row.accuracy).to.equal(looAccuracy(Z.map((z) => z.slice(0, row.m)), y, K));
      expect(row.accuracy_axis_prefix).to.equal(looAccuracy(Xc.map((x) => x.slice(0, row.m)), y, K));
      let diag = 0;
      for (let a = 0; a < row.m; a++) diag += C[a * dim + a]!;
      expect(row.retained_variance_axis_prefix).to.be.closeTo(diag / trace, 1e-12);
      const kept = order.slice(0, row.m).reduce((s, src) => s + values[src]!, 0);
      expect(row.retained_variance).to.be.closeTo(kept / trace, 1e-10);
      // ‖x − P_m x‖² summed over items, from the reference coordinates
      expect(row.recon_mse).to.be.closeTo(Z.reduce((s, z) => s + z.slice(row.m).reduce((t, v) => t + v * v, 0), 0) / n, 1e-9);
    }
    expect(r.trace).to.be.closeTo(trace, 1e-12);
    const full = looAccuracy(Z, y, K);
    expect(r.full_accuracy).to.equal(full);
    const chosen = r.table.find((row: any) => row.accuracy >= full - 0.03 - 1e-12).m;
    expect([r.chosen_granularity, r.dim_savings]).to.deep.equal([chosen, 1 - chosen / dim]);
  });

  it('closed forms: recon_mse = (n−1)/n·Σ_{i>m} λ_i, retained variance non-decreasing to 1, Σλ = trace, and Ky Fan beats axis prefixes', () => {
    for (const [dim, K, n, seed] of [[64, 8, 160, 1], [100, 5, 77, 2], [2, 2, 4, 3], [128, 32, 512, 4]]) {
      const r = runRaw(matgran, q({ dim: dim!, n_classes: K!, n_items: n!, seed: seed! })).result as any;
      const lam = r.eigenvalues as number[];
      expect(lam).to.have.length(dim!);
      for (let i = 1; i < lam.length; i++) expect(lam[i]).to.be.at.most(lam[i - 1]!);
      const total = lam.reduce((a, b) => a + b, 0);
      expect(total).to.be.closeTo(r.trace, 1e-9 * r.trace);
      let prevRet = 0;
      for (const row of r.table) {
        const tail = lam.slice(row.m).reduce((a, b) => a + b, 0);
        expect(row.recon_mse).to.be.closeTo(((n! - 1) / n!) * tail, 1e-9 * Math.max(1, total));
        expect(row.retained_variance).to.be.closeTo(lam.slice(0, row.m).reduce((a, b) => a + b, 0) / total, 1e-12);
        expect(row.retained_variance).to.be.at.least(prevRet);
        expect(row.retained_variance).to.be.at.least(row.retained_variance_axis_prefix - 1e-12);
        prevRet = row.retained_variance;
      }
      const last = r.table.at(-1);
      expect(last.m).to.equal(dim);
      expect(last.retained_variance).to.be.closeTo(1, 1e-12);
      // nearest-centroid distances are rotation invariant: full PCA = full axis accuracy
      expect(last.accuracy).to.equal(last.accuracy_axis_prefix);
      expect(r.full_accuracy).to.equal(last.accuracy);
    }
  });

  it('chosen granularity obeys the rule (every smaller listed m fails it); tol = 1 gives 1; tol = 0 reaches full accuracy', () => {
    for (let seed = 0; seed < 6; seed++) for (const tol of [0, 0.03, 0.2, 1]) {
      const r = runRaw(matgran, q({ seed, tol })).result as any;
      const ok = (row: any) => row.accuracy >= r.full_accuracy - tol - 1e-12;
      const idx = r.table.findIndex((row: any) => row.m === r.chosen_granularity);
      expect(idx).to.be.at.least(0);
      expect(ok(r.table[idx])).to.equal(true);
      for (let i = 0; i < idx; i++) expect(ok(r.table[i])).to.equal(false);
      expect(r.dim_savings).to.be.closeTo(1 - r.chosen_granularity / 64, 1e-15);
      if (tol === 1) expect(r.chosen_granularity).to.equal(1);
      if (tol === 0) expect(r.table[idx].accuracy).to.be.at.least(r.full_accuracy);
    }
  });

  it('[trend] PCA prefixes beat axis prefixes and chosen ≪ dim at defaults (10 seeds)', () => {
    let small = 0;
    let pcaWins = 0;
    for (let seed = 100; seed < 110; seed++) {
      const r = runRaw(matgran, { seed: String(seed) }).result as any;
      if (r.chosen_granularity <= 16) small++;
      const row8 = r.table.find((row: any) => row.m === 8);
      if (row8.accuracy > row8.accuracy_axis_prefix + 0.2) pcaWins++;
    }
    expect(small).to.be.at.least(8);
    expect(pcaWins).to.be.at.least(8);
  });

  it('n_items must be at least 2·n_classes', () => {
    expect(rejects(matgran, { n_classes: '32', n_items: '63' })).to.deep.equal(['n_items:constraint']);
    expect(rejects(matgran, { n_classes: '32', n_items: '64' })).to.deep.equal([]);
  });
});
