import { expect } from 'chai';
import titans, { trainMemory } from '../../../workers/kernels/titans-recall.js';
import { createHash } from 'node:crypto';
import { RngStreams } from '../../../src/lib/prng.js';
import { runRaw } from '../../helpers/kernels.js';
import { solveLinear } from '../../helpers/linear-solve.js';

/** Independent replay of S ← ηS − θ·2(Mk − v)kᵀ, M ← (1 − α)M + S, with plain nested arrays. */
function replay(keys: number[][], values: number[][], orders: number[][], eta = 0.6, theta = 0.15, alpha = 0.002) {
  const d = keys[0]!.length;
  const M = Array.from({ length: d }, () => new Array<number>(d).fill(0));
  const S = Array.from({ length: d }, () => new Array<number>(d).fill(0));
  const lossOf = (): number => {
    let num = 0;
    let den = 0;
    keys.forEach((k, p) => {
      for (let i = 0; i < d; i++) {
        const pred = M[i]!.reduce((s, m, j) => s + m * k[j]!, 0);
        num += (pred - values[p]![i]!) ** 2;
        den += values[p]![i]! ** 2;
      }
    });
    return num / den;
  };
  // nearest-neighbour recall: the value of largest cosine with Mk_p must be v_p (an all-zero Mk recalls nothing)
  const accOf = (): number =>
    keys.filter((k, p) => {
      const pred = M.map((row) => row.reduce((s, m, j) => s + m * k[j]!, 0));
      if (pred.every((x) => x === 0)) return false;
      const cos = values.map((v) => pred.reduce((s, x, i) => s + x * v[i]!, 0) / Math.hypot(...v));
      return cos.indexOf(Math.max(...cos)) === p;
    }).length / keys.length;
  const losses = [lossOf()];
  const acc = [accOf()];
  const surprise: number[] = [];
  for (const order of orders) {
    for (const p of order) {
      const k = keys[p]!;
      const e = M.map((row, i) => row.reduce((s, m, j) => s + m * k[j]!, 0) - values[p]![i]!);
      surprise.push(2 * Math.hypot(...e) * Math.hypot(...k));
      for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) {
        S[i]![j] = eta * S[i]![j]! - theta * 2 * e[i]! * k[j]!;
        M[i]![j] = (1 - alpha) * M[i]![j]! + S[i]![j]!;
      }
    }
    losses.push(lossOf());
    acc.push(accOf());
  }
  return { M, losses, acc, surprise };
}

/** Least-squares loss min_M Σ‖Mk − v‖² / Σ‖v‖² by Gaussian elimination on the d×d normal equations (P > d). */
function lsLoss(keys: number[][], values: number[][]): number {
  const d = keys[0]!.length;
  const G = Array.from({ length: d }, (_, a) => Array.from({ length: d }, (_, b) => keys.reduce((s, k) => s + k[a]! * k[b]!, 0)));
  let num = 0;
  let den = 0;
  for (let i = 0; i < d; i++) {
    // row i of M solves G m = Σ_p v_p[i] k_p
    const m = solveLinear(
      G,
      G.map((_, a) => keys.reduce((s, k, p) => s + values[p]![i]! * k[a]!, 0)),
    );
    keys.forEach((k, p) => {
      num += (m.reduce((s, x, j) => s + x * k[j]!, 0) - values[p]![i]!) ** 2;
      den += values[p]![i]! ** 2;
    });
  }
  return num / den;
}

const rowsOf = (x: Float64Array[]): number[][] => x.map((r) => Array.from(r));

describe('kernel titans/recall', () => {
  it('keys, values and orders redrawn from streams kv and order; accuracy, surprise, its digest, L* and capacity recomputed', () => {
    for (const [seed, d, P, epochs] of [[42, 8, 8, 8], [3, 5, 12, 4], [6, 16, 6, 3], [2, 1, 3, 2]] as const) {
      const r = runRaw(titans, { seed, d, patterns: P, epochs }).result as any;
      const kv = new RngStreams(seed, 'titans/recall').stream('kv');
      const keys: number[][] = [];
      const values: number[][] = [];
      for (let p = 0; p < P; p++) {
        const g = Array.from({ length: d }, () => kv.normal());
        keys.push(g.map((x) => x / Math.hypot(...g)));
        values.push(Array.from({ length: d }, () => kv.normal() / Math.sqrt(d)));
      }
      const os = new RngStreams(seed, 'titans/recall').stream('order');
      const orders = Array.from({ length: epochs }, () => {
        const a = Array.from({ length: P }, (_, i) => i);
        for (let i = P - 1; i > 0; i--) {
          const j = Math.floor(os.next() * (i + 1));
          [a[i], a[j]] = [a[j]!, a[i]!];
        }
        return a;
      });
      rowsOf(r.keys).forEach((k, p) => k.forEach((x, i) => expect(x).to.be.closeTo(keys[p]![i]!, 1e-15)));
      rowsOf(r.values).forEach((v, p) => v.forEach((x, i) => expect(x).to.be.closeTo(values[p]![i]!, 1e-15)));
      expect(r.orders).to.deep.equal(orders);
      const ref = replay(keys, values, orders);
      expect(r.accuracy_by_epoch).to.deep.equal(ref.acc);
      expect(r.surprise_index).to.deep.equal(ref.surprise.map((_, i) => i));
      expect(r.surprise).to.have.length(ref.surprise.length);
      r.surprise.forEach((x: number, i: number) => expect(x).to.be.closeTo(ref.surprise[i]!, 1e-11));
      expect(r.surprise_digest).to.equal(createHash('sha256').update(JSON.stringify(ref.surprise.map((x) => Number(x.toPrecision(12))))).digest('hex'));
      // P ≤ d: the keys can be fitted exactly (L* ≈ 0); P > d: the normal-equation optimum
      expect(r.ls_optimum_loss).to.be.closeTo(P <= d ? 0 : lsLoss(keys, values), 1e-9);
      expect(r.capacity_prediction).to.equal(Math.max(0, P - d) / P);
    }
  });

  it('replays from keys, values and orders: M_final and the loss curve to 1e-12', () => {
    for (const [seed, d, patterns, epochs] of [[42, 8, 8, 8], [3, 5, 12, 4], [6, 16, 6, 3]] as const) {
      const r = runRaw(titans, { seed, d, patterns, epochs }).result as any;
      const keys = rowsOf(r.keys);
      keys.forEach((k) => expect(Math.hypot(...k)).to.be.closeTo(1, 1e-12));
      const ref = replay(keys, rowsOf(r.values), r.orders);
      r.orders.forEach((o: number[]) => expect(o.slice().sort((a, b) => a - b)).to.deep.equal(Array.from({ length: patterns }, (_, i) => i)));
      ref.M.forEach((row, i) => row.forEach((m, j) => expect(r.M_final[i][j]).to.be.closeTo(m, 1e-12)));
      ref.losses.forEach((l, e) => expect(r.loss_by_epoch[e]).to.be.closeTo(l, 1e-12));
    }
  });

  it('starts at loss 1, never beats the least-squares optimum and improves at the defaults', () => {
    for (const [seed, d, patterns] of [[42, 8, 8], [1, 4, 20], [2, 6, 30], [3, 8, 3]] as const) {
      const r = runRaw(titans, { seed, d, patterns }).result as any;
      expect(r.loss_by_epoch[0]).to.equal(1);
      expect(r.accuracy_by_epoch[0]).to.equal(0);
      for (const l of r.loss_by_epoch) expect(l).to.be.at.least(r.ls_optimum_loss - 1e-12);
      if (patterns > d) expect(r.ls_optimum_loss).to.be.closeTo(lsLoss(rowsOf(r.keys), rowsOf(r.values)), 1e-9);
    }
    const def = runRaw(titans).result as any;
    expect(def.loss_by_epoch[8]).to.be.below(1);
    expect(def.surprise_index).to.have.length(64);
  });

  it('matches the capacity prediction: L* ≈ 0 for P ≤ d, mean L* within 0.1 of (P − d)/P for P > d (seeds 0…19)', () => {
    for (let seed = 0; seed < 5; seed++) expect((runRaw(titans, { seed, d: 8, patterns: 6, epochs: 1 }).result as any).ls_optimum_loss).to.be.at.most(1e-10);
    for (const [d, P] of [[8, 16], [4, 32], [16, 24]] as const) {
      let sum = 0;
      for (let seed = 0; seed < 20; seed++) {
        const r = runRaw(titans, { seed, d, patterns: P, epochs: 1 }).result as any;
        expect(r.ls_optimum_loss).to.be.greaterThan(0);
        expect(r.capacity_prediction).to.equal((P - d) / P);
        sum += r.ls_optimum_loss;
      }
      expect(sum / 20).to.be.closeTo((P - d) / P, 0.1);
    }
  });

  it('with α = 0, η = 0, θ = ½ and orthonormal keys one epoch is an exact delta rule: Mk_i = v_i', () => {
    const d = 6;
    const P = 4;
    // orthonormal keys: a rotation of the first P basis vectors
    const c = Math.cos(0.7);
    const s = Math.sin(0.7);
    const keys = new Float64Array(P * d);
    for (let p = 0; p < P; p++) {
      keys[p * d + p] = c;
      keys[p * d + ((p + 1) % d)] = p % 2 ? -s : s;
    }
    // make them exactly orthonormal by Gram–Schmidt
    for (let p = 0; p < P; p++) {
      for (let q = 0; q < p; q++) {
        let dt = 0;
        for (let i = 0; i < d; i++) dt += keys[p * d + i]! * keys[q * d + i]!;
        for (let i = 0; i < d; i++) keys[p * d + i] = keys[p * d + i]! - dt * keys[q * d + i]!;
      }
      let n = 0;
      for (let i = 0; i < d; i++) n += keys[p * d + i]! ** 2;
      for (let i = 0; i < d; i++) keys[p * d + i] = keys[p * d + i]! / Math.sqrt(n);
    }
    const values = Float64Array.from({ length: P * d }, (_, i) => Math.sin(3 * i + 1));
    const { M } = trainMemory(keys, values, P, d, [[2, 0, 3, 1]], { eta: 0, theta: 0.5, alpha: 0 });
    for (let p = 0; p < P; p++) for (let i = 0; i < d; i++) {
      let pred = 0;
      for (let j = 0; j < d; j++) pred += M[i * d + j]! * keys[p * d + j]!;
      expect(pred).to.be.closeTo(values[p * d + i]!, 1e-12);
    }
  });
});
