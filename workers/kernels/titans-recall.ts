/**
 * Titans neural long-term memory (Behrouz, Zhong & Mirrokni 2024, arXiv:2501.00663), linear-memory
 * case: M ∈ R^{d×d} learns ℓ(M; k, v) = ‖Mk − v‖² online at test time, with momentum over the
 * surprise (the gradient) S_t = η·S_{t−1} − θ·∇ℓ and forgetting by weight decay
 * M_t = (1 − α)·M_{t−1} + S_t. Recall is checked against the least-squares optimum M* = V·K⁺.
 * Design: kernels-b §17.
 */
import { defineKernel } from '../kernel-def.js';
import { int } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';
import { cholesky, choleskySolve, type Matrix } from '../lib/linalg.js';
import { sampleSeries } from '../../src/lib/numbers.js';

export const ETA = 0.6;
export const THETA = 0.15;
export const ALPHA = 0.002;
export const RIDGE = 1e-12;

export interface Hyper {
  eta: number;
  theta: number;
  alpha: number;
}

export const HYPER: Hyper = { eta: ETA, theta: THETA, alpha: ALPHA };

/** Draw order, stream `kv`: per pattern a key (d normals, normalised) then a value (d normals × 1/√d). */
export function drawPairs(P: number, d: number, rng: Rng): { keys: Float64Array; values: Float64Array } {
  const keys = new Float64Array(P * d);
  const values = new Float64Array(P * d);
  for (let p = 0; p < P; p++) {
    const k = rng.normals(d);
    let nn = 0;
    for (const x of k) nn += x * x;
    const r = Math.sqrt(nn);
    for (let i = 0; i < d; i++) keys[p * d + i] = k[i]! / r;
    values.set(rng.normals(d, 1 / Math.sqrt(d)), p * d);
  }
  return { keys, values };
}

/** Draw order, stream `order`: one Fisher–Yates shuffle of [0, P) per epoch. */
export function drawOrders(P: number, epochs: number, rng: Rng): number[][] {
  return Array.from({ length: epochs }, () => rng.shuffle(Array.from({ length: P }, (_, i) => i)));
}

/** Normalised recall loss Σ‖Mk_i − v_i‖² / Σ‖v_i‖² and nearest-neighbour recall accuracy. */
export function recall(M: Float64Array, keys: Float64Array, values: Float64Array, P: number, d: number): { loss: number; accuracy: number } {
  const pred = new Float64Array(P * d);
  let num = 0;
  let den = 0;
  for (let p = 0; p < P; p++) {
    for (let i = 0; i < d; i++) {
      let s = 0;
      for (let j = 0; j < d; j++) s += M[i * d + j]! * keys[p * d + j]!;
      pred[p * d + i] = s;
      num += (s - values[p * d + i]!) ** 2;
      den += values[p * d + i]! ** 2;
    }
  }
  const vNorm = new Float64Array(P);
  for (let q = 0; q < P; q++) {
    let s = 0;
    for (let i = 0; i < d; i++) s += values[q * d + i]! ** 2;
    vNorm[q] = Math.sqrt(s);
  }
  const vHat = new Float64Array(P * d);
  for (let q = 0; q < P; q++) for (let i = 0; i < d; i++) vHat[q * d + i] = vNorm[q]! > 0 ? values[q * d + i]! / vNorm[q]! : 0;
  let correct = 0;
  for (let p = 0; p < P; p++) {
    let pn = 0;
    const po = p * d;
    for (let i = 0; i < d; i++) pn += pred[po + i]! ** 2;
    if (pn === 0) continue; // an empty memory recalls nothing
    // argmax_q cos(Mk_p, v_q) = argmax_q Mk_p·v̂_q (‖Mk_p‖ is common); ties to the lower index
    let best = -1;
    let bestCos = -Infinity;
    for (let q = 0; q < P; q++) {
      let s = 0;
      const qo = q * d;
      for (let i = 0; i < d; i++) s += pred[po + i]! * vHat[qo + i]!;
      if (s > bestCos) {
        bestCos = s;
        best = q;
      }
    }
    if (best === p) correct++;
  }
  return { loss: den > 0 ? num / den : 0, accuracy: correct / P };
}

/** The memory recurrence over the given presentation orders. */
export function trainMemory(keys: Float64Array, values: Float64Array, P: number, d: number, orders: number[][], hyper: Hyper = HYPER) {
  const M = new Float64Array(d * d);
  const S = new Float64Array(d * d);
  const e = new Float64Array(d);
  const { eta, theta } = hyper;
  const keep = 1 - hyper.alpha;
  const surprise: number[] = [];
  const first = recall(M, keys, values, P, d);
  const loss = [first.loss];
  const accuracy = [first.accuracy];
  for (const order of orders) {
    for (const p of order) {
      let en = 0;
      let kn = 0;
      for (let i = 0; i < d; i++) {
        let s = 0;
        for (let j = 0; j < d; j++) s += M[i * d + j]! * keys[p * d + j]!;
        e[i] = s - values[p * d + i]!;
        en += e[i]! * e[i]!;
        kn += keys[p * d + i]! ** 2;
      }
      surprise.push(2 * Math.sqrt(en) * Math.sqrt(kn));
      const ko = p * d;
      for (let i = 0; i < d; i++) {
        const g = 2 * e[i]!; // ∇ = 2·e·kᵀ, row i
        const row = i * d;
        for (let j = 0; j < d; j++) {
          const sNew = eta * S[row + j]! - theta * (g * keys[ko + j]!);
          S[row + j] = sNew;
          M[row + j] = keep * M[row + j]! + sNew;
        }
      }
    }
    const r = recall(M, keys, values, P, d);
    loss.push(r.loss);
    accuracy.push(r.accuracy);
  }
  return { M, loss, accuracy, surprise };
}

/** Least-squares optimum M* = V·K⁺ through the smaller normal equations; returns M* and L*. */
export function leastSquares(keys: Float64Array, values: Float64Array, P: number, d: number): { M: Float64Array; loss: number } {
  const M = new Float64Array(d * d);
  if (P <= d) {
    // M* = V (KᵀK + ridge)⁻¹ Kᵀ, with K = [k_1 … k_P] (d×P)
    const G: Matrix = { rows: P, cols: P, data: new Float64Array(P * P) };
    for (let a = 0; a < P; a++) for (let b = 0; b < P; b++) {
      let s = 0;
      for (let i = 0; i < d; i++) s += keys[a * d + i]! * keys[b * d + i]!;
      G.data[a * P + b] = s + (a === b ? RIDGE : 0);
    }
    const L = cholesky(G);
    for (let i = 0; i < d; i++) {
      // row i of M*: (G⁻¹ V_iᵀ)ᵀ Kᵀ where V_i = (v_1[i] … v_P[i])
      const c = choleskySolve(L, Float64Array.from({ length: P }, (_, p) => values[p * d + i]!));
      for (let j = 0; j < d; j++) {
        let s = 0;
        for (let p = 0; p < P; p++) s += c[p]! * keys[p * d + j]!;
        M[i * d + j] = s;
      }
    }
  } else {
    // M* = V Kᵀ (K Kᵀ + ridge)⁻¹
    const G: Matrix = { rows: d, cols: d, data: new Float64Array(d * d) };
    for (let a = 0; a < d; a++) for (let b = 0; b < d; b++) {
      let s = 0;
      for (let p = 0; p < P; p++) s += keys[p * d + a]! * keys[p * d + b]!;
      G.data[a * d + b] = s + (a === b ? RIDGE : 0);
    }
    const L = cholesky(G);
    for (let i = 0; i < d; i++) {
      const rhs = new Float64Array(d);
      for (let j = 0; j < d; j++) {
        let s = 0;
        for (let p = 0; p < P; p++) s += values[p * d + i]! * keys[p * d + j]!;
        rhs[j] = s;
      }
      M.set(choleskySolve(L, rhs), i * d); // G symmetric: row i of M* solves G·m = (V Kᵀ)_i
    }
  }
  return { M, loss: recall(M, keys, values, P, d).loss };
}

export default defineKernel({
  id: 'titans/recall',
  version: 1,
  input: 'query',
  summary: 'Titans neural long-term memory: test-time associative learning with surprise momentum and forgetting, against the least-squares capacity limit',
  technique: 'Titans linear long-term memory (gradient surprise with momentum, weight-decay forgetting)',
  references: ['arXiv:2501.00663'],
  honesty: 'The memory recurrence and the least-squares reference are computed exactly; keys, values and presentation orders are seeded synthetic draws, and the gates are constants rather than learned.',
  params: {
    d: int(1, 32, 8).description('key/value dimension'),
    patterns: int(1, 64, 8).description('associations memorised'),
    epochs: int(1, 64, 8).description('passes over the associations'),
  },
  worstCase: { d: 32, patterns: 64, epochs: 64 },
  run({ d, patterns: P, epochs }, rng) {
    // draw order: pairs (stream `kv`, key then value per pattern); orders (stream `order`, one shuffle per epoch)
    const { keys, values } = drawPairs(P, d, rng.stream('kv'));
    const orders = drawOrders(P, epochs, rng.stream('order'));
    const tr = trainMemory(keys, values, P, d, orders);
    const ls = leastSquares(keys, values, P, d);
    const surprise = sampleSeries(tr.surprise);
    const rows = (a: Float64Array, n: number): Float64Array[] => Array.from({ length: n }, (_, i) => a.subarray(i * d, (i + 1) * d));
    return {
      constants: { eta: ETA, theta: THETA, alpha: ALPHA, ridge: RIDGE, key_law: 'unit Gaussian direction', value_law: 'N(0, I/d)' },
      result: {
        keys: rows(keys, P),
        values: rows(values, P),
        orders,
        loss_by_epoch: tr.loss,
        accuracy_by_epoch: tr.accuracy,
        surprise: surprise.values,
        surprise_index: surprise.index,
        surprise_digest: surprise.digest,
        ls_optimum_loss: ls.loss,
        capacity_prediction: Math.max(0, P - d) / P,
        M_final: rows(tr.M, d),
        hyper: { eta: ETA, theta: THETA, alpha: ALPHA },
      },
      checks: {
        start_loss_is_one: tr.loss[0] === 1,
        never_below_ls_optimum: tr.loss.every((l) => l >= ls.loss - 1e-12),
      },
    };
  },
});
