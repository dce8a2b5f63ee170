import { expect } from 'chai';
import kla, { drawData, runRule } from '../../../workers/kernels/kla-update.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { runRaw } from '../../helpers/kernels.js';

const EPS = 1e-6;

/** Independent replay of one rule on row vectors: S ← S + β_t·kᵀ(v − kS). */
function replay(keys: number[][], values: number[][], Strue: number[][], beta: (kk: number) => number) {
  const d = keys[0]!.length;
  const S = Array.from({ length: d }, () => new Array<number>(d).fill(0));
  const kS = (k: number[]): number[] => Array.from({ length: d }, (_, j) => k.reduce((acc, ki, i) => acc + ki * S[i]![j]!, 0));
  const out = { pre: [] as number[], post: [] as number[], err: [] as number[], beta: [] as number[], kk: [] as number[] };
  keys.forEach((k, t) => {
    const r = values[t]!.map((v, j) => v - kS(k)[j]!);
    const kk = k.reduce((a, x) => a + x * x, 0);
    const b = beta(kk);
    for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) S[i]![j] = S[i]![j]! + b * k[i]! * r[j]!;
    out.pre.push(Math.hypot(...r));
    out.post.push(Math.hypot(...values[t]!.map((v, j) => v - kS(k)[j]!)));
    out.err.push(Math.sqrt(S.reduce((acc, row, i) => acc + row.reduce((a2, x, j) => a2 + (x - Strue[i]![j]!) ** 2, 0), 0)));
    out.beta.push(b);
    out.kk.push(kk);
  });
  return out;
}

/** ‖(I − P)S*‖_F with P the projector on span{k_1..k_t}, by classical Gram–Schmidt with re-orthogonalisation. */
function floorAt(keys: number[][], Strue: number[][], t: number): number {
  const d = Strue.length;
  const Q: number[][] = [];
  for (const k of keys.slice(0, t)) {
    let w = k.slice();
    for (let pass = 0; pass < 2; pass++) for (const q of Q) {
      const c = q.reduce((a, x, i) => a + x * w[i]!, 0);
      w = w.map((x, i) => x - c * q[i]!);
    }
    const n = Math.hypot(...w);
    if (n > 1e-9 * Math.hypot(...k)) Q.push(w.map((x) => x / n));
  }
  let f = 0;
  for (let j = 0; j < d; j++) {
    let col = Strue.map((row) => row[j]!);
    for (const q of Q) {
      const c = q.reduce((a, x, i) => a + x * col[i]!, 0);
      col = col.map((x, i) => x - c * q[i]!);
    }
    f += col.reduce((a, x) => a + x * x, 0);
  }
  return Math.sqrt(f);
}

const rows = (x: Float64Array[]): number[][] => x.map((r) => Array.from(r));

/** The data redrawn (kernels-b §21 order, one stream): S* (d·d normals / √d); per t a key direction (d normals) and a log-norm (×0.75); then T·d noise normals ×0.05. */
function drawIndependently(seed: number, T: number, d: number) {
  const r = new RngStreams(seed, 'kla/update').stream('stream');
  const Strue = Array.from({ length: d }, () => Array.from({ length: d }, () => r.normal() / Math.sqrt(d)));
  const keys = Array.from({ length: T }, () => {
    const g = Array.from({ length: d }, () => r.normal());
    const s = Math.exp(0.75 * r.normal());
    const n = Math.hypot(...g);
    return g.map((x) => (s * x) / n);
  });
  const values = keys.map((k) => Strue[0]!.map((_, j) => k.reduce((a, ki, i) => a + ki * Strue[i]![j]!, 0)));
  const noisy = values.map((row) => row.map((v) => v + 0.05 * r.normal()));
  return { Strue, keys, values, noisy };
}

/** The final state of a rule and the mean recall residual over the pairs seen, at given 1-based steps. */
function finalAndRecall(keys: number[][], values: number[][], beta: (kk: number) => number, at: number[]) {
  const d = keys[0]!.length;
  const S = Array.from({ length: d }, () => new Array<number>(d).fill(0));
  const kS = (k: number[]) => Array.from({ length: d }, (_, j) => k.reduce((a, ki, i) => a + ki * S[i]![j]!, 0));
  const recall: number[] = [];
  keys.forEach((k, t) => {
    const r = values[t]!.map((v, j) => v - kS(k)[j]!);
    const b = beta(k.reduce((a, x) => a + x * x, 0));
    for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) S[i]![j] = S[i]![j]! + b * k[i]! * r[j]!;
    if (at.includes(t + 1)) recall.push(keys.slice(0, t + 1).reduce((acc, ku, u) => acc + Math.hypot(...values[u]!.map((v, j) => v - kS(ku)[j]!)), 0) / (t + 1));
  });
  return { S, recall };
}
const relFro = (A: number[][], B: number[][]) => Math.sqrt(A.reduce((s, row, i) => s + row.reduce((t, x, j) => t + (x - B[i]![j]!) ** 2, 0), 0) / B.reduce((s, row) => s + row.reduce((t, x) => t + x * x, 0), 0));

describe('kernel kla/update', () => {
  it('data redrawn from the stream; noisy runs, final errors, checkpoint recalls and the floor recomputed', () => {
    for (const [seed, T, d] of [[42, 64, 8], [3, 20, 4], [9, 6, 8]] as const) {
      const r = runRaw(kla, { seed, seq_len: T, d_state: d }).result as any;
      const x = drawIndependently(seed, T, d);
      expect([rows(r.S_true).length, rows(r.keys).length, rows(r.noisy_values).length, r.floor.length, r.kla_noisy.pre_residual.length]).to.deep.equal([d, T, T, T, T]);
      rows(r.S_true).forEach((row, i) => row.forEach((v, j) => expect(v).to.be.closeTo(x.Strue[i]![j]!, 1e-15)));
      rows(r.keys).forEach((row, t) => row.forEach((v, i) => expect(v).to.be.closeTo(x.keys[t]![i]!, 1e-12)));
      rows(r.noisy_values).forEach((row, t) => row.forEach((v, j) => expect(v).to.be.closeTo(x.noisy[t]![j]!, 1e-12)));
      const klaB = (kk: number) => 1 / (kk + EPS);
      const fixB = () => 0.5;
      const kn = replay(x.keys, x.noisy, x.Strue, klaB);
      const bn = replay(x.keys, x.noisy, x.Strue, fixB);
      for (let t = 0; t < T; t++) {
        expect(r.kla_noisy.pre_residual[t]).to.be.closeTo(kn.pre[t]!, 1e-9 * Math.max(1, kn.pre[t]!));
        expect(r.kla_noisy.post_residual[t]).to.be.closeTo(kn.post[t]!, 1e-9 * Math.max(1, kn.pre[t]!));
        expect(r.kla_noisy.err_to_truth[t]).to.be.closeTo(kn.err[t]!, 1e-9 * Math.max(1, kn.err[t]!));
        expect(r.baseline_noisy.pre_residual[t]).to.be.closeTo(bn.pre[t]!, 1e-9 * Math.max(1, bn.pre[t]!));
        expect(r.baseline_noisy.err_to_truth[t]).to.be.closeTo(bn.err[t]!, 1e-9 * Math.max(1, bn.err[t]!));
        expect(r.floor[t]).to.be.closeTo(floorAt(x.keys, x.Strue, t + 1), 1e-9);
      }
      const steps = [...new Set(Array.from({ length: 8 }, (_, c) => Math.max(1, Math.round(((c + 1) * T) / 8))))];
      const fk = finalAndRecall(x.keys, x.values, klaB, steps);
      const fb = finalAndRecall(x.keys, x.values, fixB, steps);
      expect(r.checkpoints.map((c: any) => c.t)).to.deep.equal(steps);
      r.checkpoints.forEach((c: any, k: number) => {
        expect(c.kla_recall).to.be.closeTo(fk.recall[k]!, 1e-9 * Math.max(1, fk.recall[k]!));
        expect(c.baseline_recall).to.be.closeTo(fb.recall[k]!, 1e-9 * Math.max(1, fb.recall[k]!));
      });
      expect(r.final.kla_rel_err).to.be.closeTo(relFro(fk.S, x.Strue), 1e-9);
      expect(r.final.baseline_rel_err).to.be.closeTo(relFro(fb.S, x.Strue), 1e-9 * Math.max(1, relFro(fb.S, x.Strue)));
      expect(r.final.kla_noisy_rel_err).to.be.closeTo(relFro(finalAndRecall(x.keys, x.noisy, klaB, []).S, x.Strue), 1e-9);
      const bnRel = relFro(finalAndRecall(x.keys, x.noisy, fixB, []).S, x.Strue);
      expect(r.final.baseline_noisy_rel_err).to.be.closeTo(bnRel, 1e-9 * Math.max(1, bnRel));
      expect(r.lists_omitted).to.equal(false);
    }
  });

  it('replays both rules on the redrawn keys and values; every KLA step is the exact Kaczmarz projection', () => {
    for (const [seed, T, d] of [[42, 64, 8], [3, 20, 4], [4, 100, 12]] as const) {
      const r = runRaw(kla, { seed, seq_len: T, d_state: d }).result as any;
      const { keys, values, Strue } = drawIndependently(seed, T, d);
      rows(r.values).forEach((row, t) => row.forEach((v, j) => expect(v).to.be.closeTo(values[t]![j]!, 1e-12)));
      expect([rows(r.values).length, r.kla.pre_residual.length, r.baseline.err_to_truth.length, r.key_norms.length]).to.deep.equal([T, T, T, T]);
      keys.forEach((k, t) => values[t]!.forEach((v, j) => expect(v).to.be.closeTo(k.reduce((a, ki, i) => a + ki * Strue[i]![j]!, 0), 1e-12)));
      const a = replay(keys, values, Strue, (kk) => 1 / (kk + EPS));
      const b = replay(keys, values, Strue, () => 0.5);
      expect(r.index).to.deep.equal(Array.from({ length: T }, (_, t) => t));
      for (let t = 0; t < T; t++) {
        expect(r.kla.pre_residual[t]).to.be.closeTo(a.pre[t]!, 1e-11 * Math.max(1, a.pre[t]!));
        expect(r.kla.err_to_truth[t]).to.be.closeTo(a.err[t]!, 1e-11 * Math.max(1, a.err[t]!));
        expect(r.baseline.pre_residual[t]).to.be.closeTo(b.pre[t]!, 1e-9 * Math.max(1, b.pre[t]!));
        expect(r.baseline.err_to_truth[t]).to.be.closeTo(b.err[t]!, 1e-9 * Math.max(1, b.err[t]!));
        // post = pre·ε/(‖k‖² + ε), up to cancellation at the scale of v (series are rounded to 12 digits)
        const expected = (r.kla.pre_residual[t] * EPS) / (a.kk[t]! + EPS);
        expect(Math.abs(r.kla.post_residual[t] - expected)).to.be.at.most(1e-9 * r.kla.pre_residual[t] + 1e-11 * Math.max(1, Math.hypot(...values[t]!)));
        expect(r.key_norms[t]).to.be.closeTo(Math.sqrt(a.kk[t]!), 1e-11 * Math.sqrt(a.kk[t]!));
      }
      expect(r.overshoot_steps).to.equal(a.kk.filter((kk) => 0.5 * kk > 2).length);
    }
  });

  it('error to truth obeys ‖E_t‖² = ‖E_{t−1}‖² − β(2 − β‖k‖²)‖r‖², so it never increases on the noiseless system', () => {
    const r = runRaw(kla, { seed: 42 }).result as any;
    const { keys, Strue } = drawIndependently(42, 64, 8);
    let prev = Math.sqrt(Strue.flat().reduce((a, x) => a + x * x, 0));
    r.kla.err_to_truth.forEach((e: number, t: number) => {
      const kk = keys[t]!.reduce((a, x) => a + x * x, 0);
      const beta = 1 / (kk + EPS);
      const expected = prev ** 2 - beta * (2 - beta * kk) * r.kla.pre_residual[t] ** 2;
      expect(e ** 2).to.be.closeTo(expected, 1e-8 * Math.max(1, prev ** 2));
      expect(e).to.be.at.most(prev + 1e-12);
      prev = e;
    });
  });

  it('never goes below the unexplored-subspace floor, which is positive while T < d', () => {
    for (const [seed, T, d] of [[42, 64, 8], [5, 6, 10], [6, 30, 16]] as const) {
      const r = runRaw(kla, { seed, seq_len: T, d_state: d }).result as any;
      const { keys, Strue } = drawIndependently(seed, T, d);
      expect(r.floor).to.have.length(T);
      r.floor.forEach((f: number, t: number) => {
        expect(f).to.be.closeTo(floorAt(keys, Strue, t + 1), 1e-9);
        expect(r.kla.err_to_truth[t]).to.be.at.least(f - 1e-9);
      });
      if (T < d) expect(r.kla.err_to_truth[T - 1]).to.be.at.least(r.floor[T - 1]).and.greaterThan(0);
    }
  });

  it('KLA predictions are invariant to key scale (ε = 0) while the fixed-step rule overshoots and diverges', () => {
    const T = 40;
    const d = 6;
    const data = drawData(T, d, new RngStreams(7, 'kla/update').stream('stream'));
    const scaled = data.keys.map((k) => 10 * k);
    const scaledValues = data.values.map((v) => 10 * v);
    const a = runRule(data.keys, data.values, T, d, (kk) => 1 / kk, null, []);
    const b = runRule(scaled, data.values, T, d, (kk) => 1 / kk, null, []);
    for (let t = 0; t < T; t++) expect(b.pre[t]).to.be.closeTo(a.pre[t]!, 1e-9 * Math.max(1, a.pre[t]!));
    for (let i = 0; i < d * d; i++) expect(b.S[i]! * 10).to.be.closeTo(a.S[i]!, 1e-9);
    const base = runRule(data.keys, data.values, T, d, () => 0.5, data.Strue, []);
    const big = runRule(scaled, scaledValues, T, d, () => 0.5, data.Strue, []);
    expect(big.overshoot).to.be.greaterThan(0);
    expect(big.err[T - 1]!).to.be.greaterThan(1000 * base.err[T - 1]!);
  });

  it('lists keys, values and S_true only when T ≤ 256 and T·d ≤ 4096: at each bound and one past it', () => {
    for (const [T, d, listed] of [[256, 16, true], [257, 1, false], [128, 32, true], [129, 32, false]] as const) {
      const r = runRaw(kla, { seed: 1, seq_len: T, d_state: d }).result as any;
      expect([r.lists_omitted, 'keys' in r, 'S_true' in r], `T ${T}, d ${d}`).to.deep.equal([!listed, listed, listed]);
      if (listed) expect([r.keys.length, r.values.length, r.noisy_values.length, r.S_true.length]).to.deep.equal([T, T, T, d]);
    }
  });

  it('converges linearly on the noiseless system: relative error < 1e-3 at T = 512, d = 8 (seeds 0…9)', () => {
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(kla, { seed, seq_len: 512, d_state: 8 }).result as any;
      expect(r.final.kla_rel_err).to.be.below(1e-3);
      expect(r.final.kla_noisy_rel_err).to.be.greaterThan(r.final.kla_rel_err);
      expect(r.lists_omitted).to.equal(true);
      expect(r.checkpoints.map((c: any) => c.t)).to.deep.equal([64, 128, 192, 256, 320, 384, 448, 512]);
      for (let c = 1; c < 8; c++) expect(r.checkpoints[c].kla_recall).to.be.at.most(r.checkpoints[c - 1].kla_recall * 1.5 + 1e-9);
    }
  });
});
