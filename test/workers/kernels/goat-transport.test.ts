import { expect } from 'chai';
import goat from '../../../workers/kernels/goat-transport.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { rejects, runRaw } from '../../helpers/kernels.js';

/**
 * Independent reference: Q, K from streams q, k; prior coefficients a, b from stream prior;
 * π ∝ exp(1[j=0] + a·cos(2πj/n_k) + b·sin(2πj/n_k)); Sinkhorn in the plain (not log) domain:
 * u ← (1/n_q) / (K v), v ← (1/n_k) / (Kᵀ u) with K = exp(S/reg), recording after each sweep the
 * row error Σ_i |rowsum_i − 1/n_q| and the dual mean(ln u) + mean(ln v) − Σ P.
 */
function reference(seed: number, nq: number, nk: number, iters: number, reg: number) {
  const rng = new RngStreams(seed, 'goat/transport');
  const qs = rng.stream('q');
  const ks = rng.stream('k');
  const Q = Array.from({ length: nq }, () => Array.from({ length: 8 }, () => qs.normal()));
  const K = Array.from({ length: nk }, () => Array.from({ length: 8 }, () => ks.normal()));
  const pr = rng.stream('prior');
  const a = 0.5 * pr.normal();
  const b = 0.5 * pr.normal();
  const w = Array.from({ length: nk }, (_, j) => Math.exp((j === 0 ? 1 : 0) + a * Math.cos((2 * Math.PI * j) / nk) + b * Math.sin((2 * Math.PI * j) / nk)));
  const prior = w.map((x) => x / w.reduce((s, y) => s + y, 0));
  const S = Q.map((q) => K.map((k) => q.reduce((s, x, d) => s + x * k[d]!, 0) / Math.sqrt(8)));
  const normalise = (v: number[]) => v.map((x) => x / v.reduce((s, y) => s + y, 0));
  const softmaxRows = S.map((row) => normalise(row.map((x) => Math.exp(x / reg))));
  const goatRows = S.map((row) => normalise(row.map((x, j) => prior[j]! * Math.exp(x / reg))));
  const E = S.map((row) => row.map((x) => Math.exp(x / reg)));
  let u = new Array<number>(nq).fill(1);
  let v = new Array<number>(nk).fill(1);
  const rowErrors: number[] = [];
  const duals: number[] = [];
  let firstHalf = 0;
  let P: number[][] = [];
  for (let it = 0; it < iters; it++) {
    u = E.map((row) => 1 / nq / row.reduce((s, x, j) => s + x * v[j]!, 0));
    if (it === 0) E.forEach((row, i) => row.forEach((x, j) => (firstHalf = Math.max(firstHalf, Math.abs(x * u[i]! - softmaxRows[i]![j]! / nq)))));
    v = v.map((_, j) => 1 / nk / E.reduce((s, row, i) => s + row[j]! * u[i]!, 0));
    P = E.map((row, i) => row.map((x, j) => u[i]! * x * v[j]!));
    rowErrors.push(P.reduce((s, row) => s + Math.abs(row.reduce((t, x) => t + x, 0) - 1 / nq), 0));
    const mass = P.flat().reduce((s, x) => s + x, 0);
    duals.push(u.reduce((s, x) => s + Math.log(x), 0) / nq + v.reduce((s, x) => s + Math.log(x), 0) / nk - mass);
  }
  const colError = v.reduce((s, _, j) => s + Math.abs(P.reduce((t, row) => t + row[j]!, 0) - 1 / nk), 0);
  const cost = P.reduce((s, row, i) => s + row.reduce((t, p, j) => t - p * S[i]![j]!, 0), 0);
  const entropy = -P.flat().reduce((s, p) => s + (p > 0 ? p * Math.log(p) : 0), 0);
  return { prior, S, softmaxRows, goatRows, P, rowErrors, duals, firstHalf, colError, cost, entropy };
}
const close = (a: number, b: number, what: string, tol = 1e-9) => expect(a, what).to.be.closeTo(b, tol * Math.max(1, Math.abs(b)));

const q = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]));

describe('kernel goat/transport', () => {
  it('every reported value recomputed by a plain-domain Sinkhorn on inputs redrawn from the streams', () => {
    for (const [seed, nq, nk, iters, reg] of [[42, 12, 16, 40, 1], [3, 5, 7, 25, 0.3], [9, 20, 30, 10, 4], [1, 1, 1, 3, 1], [5, 16, 16, 8, 2], [6, 16, 17, 4, 1]] as const) {
      const r = runRaw(goat, { seed: String(seed), ...q({ n_q: nq, n_k: nk, iters, reg }) }).result as any;
      const ref = reference(seed, nq, nk, iters, reg);
      r.prior.forEach((x: number, j: number) => close(x, ref.prior[j]!, `prior ${j}`));
      expect(r.goat_rows.length).to.equal(Math.min(4, nq));
      expect(r.softmax_rows.length).to.equal(Math.min(4, nq));
      r.goat_rows.forEach((row: number[], i: number) => row.forEach((x, j) => close(x, ref.goatRows[i]![j]!, `goat ${i},${j}`)));
      r.softmax_rows.forEach((row: number[], i: number) => row.forEach((x, j) => close(x, ref.softmaxRows[i]![j]!, `softmax ${i},${j}`)));
      expect(r.plan_truncated).to.equal(nq * nk > 256);
      expect(r.plan.length).to.equal(nq * nk > 256 ? 4 : nq);
      r.plan.forEach((row: number[], i: number) => row.forEach((x, j) => close(x, ref.P[i]![j]!, `plan ${i},${j}`)));
      if (nq * nk <= 256) (r.scores as number[]).forEach((x, k) => close(x, ref.S[Math.floor(k / nk)]![k % nk]!, `score ${k}`));
      else expect(r.scores).to.equal(null);
      expect(r.curve_iterations).to.deep.equal(ref.rowErrors.map((_, i) => i));
      r.row_error_curve.forEach((x: number, i: number) => expect(x, `row error ${i}`).to.be.closeTo(ref.rowErrors[i]!, 1e-12));
      r.dual_curve.forEach((x: number, i: number) => close(x, ref.duals[i]!, `dual ${i}`));
      expect(r.final_row_error).to.be.closeTo(ref.rowErrors.at(-1)!, 1e-12);
      expect(r.final_col_error).to.be.closeTo(ref.colError, 1e-12);
      close(r.transport_cost, ref.cost, 'cost');
      close(r.plan_entropy, ref.entropy, 'entropy');
      expect(r.first_half_step_vs_softmax).to.be.closeTo(ref.firstHalf, 1e-15);
      // KL(GOAT row ‖ prior) = Σ_j r_ij ln(r_ij/π_j) on the plain-domain rows, every row and their mean
      const kl = ref.goatRows.map((row) => row.reduce((acc, x, j) => acc + (x > 0 ? x * Math.log(x / ref.prior[j]!) : 0), 0));
      expect(r.kl_goat_rows_vs_prior.length).to.equal(nq);
      r.kl_goat_rows_vs_prior.forEach((x: number, i: number) => expect(x, `kl ${i}`).to.be.closeTo(kl[i]!, 1e-9 * Math.max(1, kl[i]!)));
      close(r.kl_goat_rows_vs_prior_mean, kl.reduce((a, b) => a + b, 0) / nq, 'kl mean');
    }
  });

  it('iters reaches the note’s 500 (501 is refused) and matches the reference there; at reg = 100 the GOAT rows sit on the prior', () => {
    expect(rejects(goat, { iters: '500' })).to.deep.equal([]);
    expect(rejects(goat, { iters: '501' })).to.deep.equal(['iters:number.max']);
    const r = runRaw(goat, q({ seed: 8, n_q: 6, n_k: 9, iters: 500, reg: 0.05 })).result as any;
    const ref = reference(8, 6, 9, 500, 0.05);
    expect(r.curve_iterations.at(-1)).to.equal(499);
    expect(r.final_row_error).to.be.closeTo(ref.rowErrors.at(-1)!, 1e-12);
    r.plan.forEach((row: number[], i: number) => row.forEach((x, j) => close(x, ref.P[i]![j]!, `plan ${i},${j}`)));
    // at reg = 100 the scores barely move the rows off the prior, so KL is near 0 but positive
    const hot = runRaw(goat, q({ seed: 8, reg: 100 })).result as any;
    for (const x of hot.kl_goat_rows_vs_prior) expect(x).to.be.within(0, 1e-3);
  });

  it('Sinkhorn conserves the column marginals exactly, the dual rises and the row error falls (4 seeds, 3 regs)', () => {
    for (let seed = 0; seed < 4; seed++) for (const reg of [0.1, 1, 3]) {
      const r = runRaw(goat, { seed: String(seed), ...q({ reg, iters: 60 }) }).result as any;
      expect(r.final_col_error).to.be.at.most(1e-12);
      const dual = r.dual_curve as number[];
      for (let i = 1; i < dual.length; i++) expect(dual[i]).to.be.at.least(dual[i - 1]! - 1e-12);
      const rows = r.row_error_curve as number[];
      for (let i = 1; i < rows.length; i++) expect(rows[i]).to.be.at.most(rows[i - 1]! + 1e-12);
      const mass = (r.plan as number[][]).flat().reduce((a, b) => a + b, 0);
      expect(mass).to.be.closeTo(1, 1e-9);
    }
  });

  it('the first half-step is softmax/n_q; GOAT rows sum to 1 and equal softmax times the prior, renormalised', () => {
    const r = runRaw(goat, {}).result as any;
    expect(r.first_half_step_vs_softmax).to.be.at.most(1e-15);
    expect(r.final_row_error).to.be.below(1e-12);
    const S = r.scores as number[];
    for (let i = 0; i < r.goat_rows.length; i++) {
      const w = Array.from({ length: 16 }, (_, j) => r.prior[j] * Math.exp(S[i * 16 + j]!));
      const z = w.reduce((a, b) => a + b, 0);
      w.forEach((x, j) => expect(r.goat_rows[i][j]).to.be.closeTo(x / z, 1e-12));
    }
  });

  it('a very high temperature gives the independent coupling', () => {
    const r = runRaw(goat, q({ reg: 100, n_q: 8, n_k: 8 })).result as any;
    for (const row of r.plan) for (const p of row) expect(Math.abs(p - 1 / 64) / (1 / 64)).to.be.below(0.1);
  });
});
