import { expect } from 'chai';
import catq, { baselineTernary, calibrate, softTernary } from '../../../workers/kernels/catq-calibrate.js';
import { Rng, RngStreams } from '../../../src/lib/prng.js';
import { runRaw } from '../../helpers/kernels.js';
import { addAt } from '../../helpers/indexed.js';

const q = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]));

/** The documented inputs (kernels-c §11), regenerated independently from the streams named in the kernel. */
function regenerate(seed: number, n: number): { w: number[]; Xcal: number[][]; Xeval: number[][] } {
  const rng = new RngStreams(seed, 'catq/calibrate');
  const ws = rng.stream('w');
  const w = Array.from({ length: n }, () => {
    const z = ws.normal();
    const chi = [0, 1, 2, 3].reduce((s) => s + ws.normal() ** 2, 0);
    return (0.02 * z) / Math.sqrt(chi / 4);
  });
  const outliers = new Set(redrawOutliers(seed));
  const acts = (label: string) => {
    const s = rng.stream(label);
    return Array.from({ length: 16 }, () => Array.from({ length: 64 }, (_, j) => s.normal() * (outliers.has(j) ? 8 : 1)));
  };
  return { w, Xcal: acts('cal'), Xeval: acts('eval') };
}

/** Mean over (row, token) of (Σ_j x_j (w_j − ŵ_j))², rows of 64 with a short last row. */
function refOutputMse(w: number[], wq: number[], X: number[][]): number {
  let s = 0;
  let count = 0;
  for (let lo = 0; lo < w.length; lo += 64) {
    for (const x of X) {
      let e = 0;
      for (let j = lo; j < Math.min(w.length, lo + 64); j++) e += x[j - lo]! * (w[j]! - wq[j]!);
      s += e * e;
      count++;
    }
  }
  return s / count;
}

/** Naive TWN baseline per row. */
function refBaseline(w: number[], tau: number): number[] {
  const out: number[] = [];
  for (let lo = 0; lo < w.length; lo += 64) {
    const row = w.slice(lo, lo + 64);
    const delta = (tau * row.reduce((s, v) => s + Math.abs(v), 0)) / row.length;
    const kept = row.filter((v) => Math.abs(v) > delta);
    const s = kept.length ? kept.reduce((a, v) => a + Math.abs(v), 0) / kept.length : 0;
    for (const v of row) out.push(Math.abs(v) > delta ? s * Math.sign(v) : 0);
  }
  return out;
}

/**
 * The whole calibration written out (kernels-c §11): for γ ∈ {0, ¼, ½}, m_j = rms(X_:,j)^γ over the
 * calibration tokens, normalised to geometric mean 1; per row w' = w·m, for each multiplier g the
 * codes sign(w')·[|w'| > g·mean|w'|], u = (X/m)·codes, the least-squares scale and its error; the
 * best g per row (first on ties), the best γ by total error (smaller γ on ties). Returns the
 * dequantised weights s·code/m of the chosen γ with its per-γ errors.
 */
function refCalibrate(w: number[], X: number[][], tau: number) {
  const grid = [...new Set([...Array.from({ length: 13 }, (_, i) => (3 + i) / 10), tau])].sort((a, b) => a - b);
  let best: { gamma: number; wq: number[]; codes: number[]; hist: number[] } | null = null;
  let bestTotal = Infinity;
  const errors: number[] = [];
  for (const gamma of [0, 0.25, 0.5]) {
    const logs = Array.from({ length: 64 }, (_, j) => gamma * 0.5 * Math.log(X.reduce((a, x) => a + x[j]! ** 2, 0) / X.length));
    const mean = logs.reduce((a, b) => a + b, 0) / 64;
    const m = logs.map((l) => Math.exp(l - mean));
    const wq: number[] = [];
    const codes: number[] = [];
    const hist = grid.map(() => 0);
    let total = 0;
    for (let lo = 0; lo < w.length; lo += 64) {
      const row = w.slice(lo, lo + 64);
      const wm = row.map((v, j) => v * m[j]!);
      const ma = wm.reduce((a, v) => a + Math.abs(v), 0) / wm.length;
      const y = X.map((x) => row.reduce((a, v, j) => a + v * x[j]!, 0));
      let pick = { err: Infinity, gi: 0, s: 0 };
      grid.forEach((g, gi) => {
        const t = wm.map((v) => (Math.abs(v) > g * ma ? Math.sign(v) : 0));
        const u = X.map((x) => t.reduce((a, c, j) => a + (c * x[j]!) / m[j]!, 0));
        const uu = u.reduce((a, v) => a + v * v, 0);
        const sc = uu > 0 ? u.reduce((a, v, k) => a + v * y[k]!, 0) / uu : 0;
        const err = y.reduce((a, v, k) => a + (v - sc * u[k]!) ** 2, 0);
        if (err < pick.err) pick = { err, gi, s: sc };
      });
      const t = wm.map((v) => (Math.abs(v) > grid[pick.gi]! * ma ? Math.sign(v) : 0));
      t.forEach((c, j) => (codes.push(c), wq.push((pick.s * c) / m[j]!)));
      addAt(hist, pick.gi);
      total += pick.err;
    }
    errors.push(total);
    if (total < bestTotal) {
      bestTotal = total;
      best = { gamma, wq, codes, hist };
    }
  }
  return { ...best!, errors, grid };
}

/** The 6 outlier channels of 64: a partial Fisher–Yates from the front on stream `outliers`, one uniform per pick, ascending. */
function redrawOutliers(seed: number): number[] {
  const u = new RngStreams(seed, 'catq/calibrate').stream('outliers');
  const idx = Array.from({ length: 64 }, (_, i) => i);
  for (let i = 0; i < 6; i++) {
    const j = i + Math.floor(u.next() * (64 - i));
    [idx[i], idx[j]] = [idx[j]!, idx[i]!];
  }
  return idx.slice(0, 6).sort((a, b) => a - b);
}

describe('kernel catq/calibrate', () => {
  it('outlier_channels equal the 6 channels redrawn from stream outliers, and they carry the ×8 gain in both batches', () => {
    for (const seed of [0, 1, 42, 77, 1234, 4294967295]) {
      const r = runRaw(catq, { seed: String(seed), n_params: '64' }).result as any;
      const channels = redrawOutliers(seed);
      expect(r.outlier_channels).to.deep.equal(channels);
      // the gain lands on exactly those channels: their sample variance over 32 tokens is far above the rest
      const { Xcal, Xeval } = regenerate(seed, 64);
      const rows = [...Xcal, ...Xeval];
      const ms = Array.from({ length: 64 }, (_, j) => rows.reduce((a, x) => a + x[j]! ** 2, 0) / rows.length);
      const loud = ms.map((v, j) => [v, j] as const).sort((a, b) => b[0] - a[0]).slice(0, 6).map(([, j]) => j).sort((a, b) => a - b);
      expect(loud).to.deep.equal(channels);
    }
  });

  it('every γ of the search, the chosen calibration, its codes and the soft ternariser recomputed independently', () => {
    for (const [seed, n, tau, alpha] of [[42, 4096, 0.75, 0.1], [5, 1000, 0.05, 0.5], [6, 130, 3, 0.02]] as const) {
      const out = runRaw(catq, q({ seed, n_params: n, tau, alpha }));
      const r = out.result as any;
      const { w, Xcal, Xeval } = regenerate(seed, n);
      const ref = refCalibrate(w, Xcal, tau);
      // the checks compare the calibrated and baseline errors, both recomputed here
      const wb = refBaseline(w, tau);
      const [baseCal, baseEval] = [refOutputMse(w, wb, Xcal), refOutputMse(w, wb, Xeval)];
      const [calCal, calEval] = [refOutputMse(w, ref.wq, Xcal), refOutputMse(w, ref.wq, Xeval)];
      const checks = out.checks as { calibrated_not_worse_on_cal: boolean; eval_improvement_ratio: number };
      expect(checks.calibrated_not_worse_on_cal).to.equal(calCal <= baseCal * (1 + 1e-9));
      expect(checks.eval_improvement_ratio).to.be.closeTo(calEval / baseEval, 1e-9 * (calEval / baseEval));
      const rows = Math.ceil(n / 64);
      r.calibrated.gamma_search.forEach((g: any, i: number) => {
        expect(g.gamma).to.equal([0, 0.25, 0.5][i]);
        expect(g.output_mse_cal).to.be.closeTo(ref.errors[i]! / (rows * 16), (1e-9 * ref.errors[i]!) / (rows * 16) + 1e-18);
      });
      expect(r.calibrated.chosen_gamma).to.equal(ref.gamma);
      expect(r.calibrated.multiplier_histogram).to.deep.equal(ref.hist);
      const rel = (a: number, b: number) => expect(a).to.be.closeTo(b, 1e-9 * Math.abs(b) + 1e-18);
      rel(r.calibrated.output_mse_cal, refOutputMse(w, ref.wq, Xcal));
      rel(r.calibrated.output_mse_eval, refOutputMse(w, ref.wq, Xeval));
      rel(r.calibrated.weight_mse, w.reduce((a, v, i) => a + (v - ref.wq[i]!) ** 2, 0) / n);
      const counts = { neg: ref.codes.filter((c) => c < 0).length, zero: ref.codes.filter((c) => c === 0).length, pos: ref.codes.filter((c) => c > 0).length };
      expect(r.code_counts).to.deep.equal(counts);
      expect(r.calibrated.sparsity).to.equal(counts.zero / n);
      expect(r.code_entropy_bits).to.be.closeTo(-Object.values(counts).reduce((a, k) => a + (k ? (k / n) * Math.log2(k / n) : 0), 0), 1e-12);
      // soft: s·sign(w)·½(1 + tanh((|w| − Δ)/T)) per row with the baseline's Δ = τ·mean|w|, s and T = α·mean|w|
      const soft: number[] = [];
      for (let lo = 0; lo < n; lo += 64) {
        const row = w.slice(lo, lo + 64);
        const ma = row.reduce((a, v) => a + Math.abs(v), 0) / row.length;
        const kept = row.filter((v) => Math.abs(v) > tau * ma);
        const sc = kept.length ? kept.reduce((a, v) => a + Math.abs(v), 0) / kept.length : 0;
        for (const v of row) soft.push(sc * Math.sign(v) * 0.5 * (1 + Math.tanh((Math.abs(v) - tau * ma) / (alpha * ma))));
      }
      expect(r.soft.alpha).to.equal(alpha);
      rel(r.soft.output_mse_cal, refOutputMse(w, soft, Xcal));
      rel(r.soft.output_mse_eval, refOutputMse(w, soft, Xeval));
      rel(r.soft.weight_mse, w.reduce((a, v, i) => a + (v - soft[i]!) ** 2, 0) / n);
    }
  });

  it('baseline errors match an independent TWN implementation on the regenerated inputs (short last row too)', () => {
    for (const [seed, n, tau] of [[1, 4096, 0.75], [2, 100, 0.3], [3, 64, 2]]) {
      const r = runRaw(catq, q({ seed: seed!, n_params: n!, tau: tau! })).result as any;
      const { w, Xcal, Xeval } = regenerate(seed!, n!);
      const wb = refBaseline(w, tau!);
      expect(r.baseline.output_mse_cal).to.be.closeTo(refOutputMse(w, wb, Xcal), 1e-12 * r.baseline.output_mse_cal + 1e-18);
      expect(r.baseline.output_mse_eval).to.be.closeTo(refOutputMse(w, wb, Xeval), 1e-12 * r.baseline.output_mse_eval + 1e-18);
      expect(r.baseline.weight_mse).to.be.closeTo(w.reduce((s, v, i) => s + (v - wb[i]!) ** 2, 0) / n!, 1e-15);
      expect(r.baseline.sparsity).to.equal(wb.filter((v) => v === 0).length / n!);
      expect(r.rows).to.equal(Math.ceil(n! / 64));
      expect(r.last_row_length).to.equal(n! - 64 * (Math.ceil(n! / 64) - 1));
    }
  });

  it('calibration never loses to the baseline on calibration data, and γ = 0 equals a brute-force grid/LS search', () => {
    for (const [seed, n, tau] of [[4, 4096, 0.75], [5, 1000, 0.05], [6, 130, 3], [7, 2048, 0.5]]) {
      const r = runRaw(catq, q({ seed: seed!, n_params: n!, tau: tau! })).result as any;
      expect(r.calibrated.output_mse_cal).to.be.at.most(r.baseline.output_mse_cal * (1 + 1e-12));
      const { w, Xcal } = regenerate(seed!, n!);
      const grid = [...new Set([...Array.from({ length: 13 }, (_, i) => (3 + i) / 10), tau!])].sort((a, b) => a - b);
      expect(r.calibrated.multiplier_grid).to.deep.equal(grid);
      let total = 0;
      let rows = 0;
      for (let lo = 0; lo < n!; lo += 64) {
        const row = w.slice(lo, lo + 64);
        const ma = row.reduce((s, v) => s + Math.abs(v), 0) / row.length;
        const y = Xcal.map((x) => row.reduce((s, v, j) => s + v * x[j]!, 0));
        let best = Infinity;
        for (const g of grid) {
          const u = Xcal.map((x) => row.reduce((s, v, j) => s + (Math.abs(v) > g * ma ? Math.sign(v) : 0) * x[j]!, 0));
          const uu = u.reduce((s, v) => s + v * v, 0);
          const sc = uu > 0 ? u.reduce((s, v, t) => s + v * y[t]!, 0) / uu : 0;
          best = Math.min(best, y.reduce((s, v, t) => s + (v - sc * u[t]!) ** 2, 0));
        }
        total += best;
        rows++;
      }
      expect(r.calibrated.gamma_search[0].output_mse_cal).to.be.closeTo(total / (rows * 16), 1e-12 * total);
      const chosen = r.calibrated.gamma_search.find((g: any) => g.gamma === r.calibrated.chosen_gamma);
      for (const g of r.calibrated.gamma_search) expect(chosen.output_mse_cal).to.be.at.most(g.output_mse_cal);
      expect(r.calibrated.output_mse_cal).to.be.closeTo(chosen.output_mse_cal, 1e-9 * chosen.output_mse_cal);
      expect(r.calibrated.multiplier_histogram.reduce((a: number, b: number) => a + b, 0)).to.equal(rows);
    }
  });

  it('baseline sparsity is non-decreasing in tau for a fixed seed', () => {
    for (const seed of [0, 1, 2]) {
      let prev = -1;
      for (const tau of [0.05, 0.3, 0.5, 0.7, 0.75, 1, 1.2, 2, 3]) {
        const s = (runRaw(catq, q({ seed, tau })).result as any).baseline.sparsity;
        expect(s).to.be.at.least(prev);
        prev = s;
      }
      expect(prev).to.be.greaterThan(0.9);
    }
  });

  it('module: the soft ternariser at temperature 1e-9 is the hard one; codes are ternary; entropy ≤ log₂3', () => {
    const rng = new Rng(9);
    const w = rng.normals(1000, 0.02);
    const b = baselineTernary(w, 0.7);
    const soft = softTernary(w, b.scales, b.deltas, b.meanAbs, 1e-9);
    let differ = 0;
    for (let i = 0; i < w.length; i++) {
      const r = Math.floor(i / 64);
      const hard = b.scales[r]! * b.codes[i]!;
      if (Math.abs(soft[i]! - hard) > 0) {
        differ++;
        expect(Math.abs(Math.abs(w[i]!) - b.deltas[r]!)).to.be.below(1e-7 * b.meanAbs[r]!);
      }
      expect([-1, 0, 1]).to.include(b.codes[i]);
    }
    expect(differ).to.equal(0);
    // a broad temperature blurs: the soft weights differ from the hard ones
    const blurred = softTernary(w, b.scales, b.deltas, b.meanAbs, 1);
    expect(blurred.some((v, i) => Math.abs(v - b.scales[Math.floor(i / 64)]! * b.codes[i]!) > 1e-4)).to.equal(true);
    for (const seed of [1, 2, 3]) {
      const r = runRaw(catq, { seed: String(seed) }).result as any;
      const { neg, zero, pos } = r.code_counts;
      expect(neg + zero + pos).to.equal(4096);
      const h = [neg, zero, pos].filter((k) => k > 0).reduce((s, k) => s - (k / 4096) * Math.log2(k / 4096), 0);
      expect(r.code_entropy_bits).to.be.closeTo(h, 1e-12);
      expect(r.code_entropy_bits).to.be.at.most(Math.log2(3));
      expect(r.calibrated.sparsity).to.equal(zero / 4096);
    }
  });

  it('module: scaling any calibrated row scale by 1 ± 1 % never lowers that row’s calibration error', () => {
    const rng = new Rng(21);
    const n = 64 * 12 + 20;
    const w = rng.normals(n, 0.02);
    const X = rng.normals(16 * 64);
    for (let t = 0; t < 16; t++) X[t * 64 + 3] = X[t * 64 + 3]! * 8;
    const c = calibrate(w, X, 16, 0.75);
    const rowErr = (lo: number, hi: number, scale: number) => {
      let s = 0;
      for (let t = 0; t < 16; t++) {
        let e = 0;
        for (let j = lo; j < hi; j++) e += X[t * 64 + j - lo]! * (w[j]! - (scale * c.codes[j]!) / c.modulation[j - lo]!);
        s += e * e;
      }
      return s;
    };
    for (let r = 0, lo = 0; lo < n; r++, lo += 64) {
      const hi = Math.min(n, lo + 64);
      const e0 = rowErr(lo, hi, c.scales[r]!);
      for (const f of [0.99, 1.01]) expect(rowErr(lo, hi, c.scales[r]! * f)).to.be.at.least(e0 * (1 - 1e-12));
      for (let j = lo; j < hi; j++) expect([-1, 0, 1]).to.include(c.codes[j]);
    }
  });

  it('[trend] calibrated output error on held-out activations beats the baseline (10 seeds)', () => {
    let wins = 0;
    for (let seed = 200; seed < 210; seed++) {
      const r = runRaw(catq, { seed: String(seed) }).result as any;
      if (r.calibrated.output_mse_eval < r.baseline.output_mse_eval) wins++;
    }
    expect(wins).to.be.at.least(8);
  });

  it('reports closed-form storage: log2(3) bits per weight', () => {
    const r = runRaw(catq).result as any;
    expect(r.bits_per_weight).to.be.closeTo(Math.log2(3), 1e-15);
    expect(r.compression_vs_fp16).to.be.closeTo(16 / Math.log2(3), 1e-12);
  });
});
