/**
 * Kolmogorov–Arnold Network (Liu et al. 2024, arXiv:2404.19756) of shape [2, width, 1]: every
 * edge is φ(x) = w_b·silu(x) + Σ_i c_i·B_i(x) with uniform cubic B-splines on G intervals (G+3
 * coefficients), nodes sum. Trained full-batch with Adam (arXiv:1412.6980) and analytic
 * gradients on the paper's toy target f(x, y) = exp(sin(πx) + y²). Design: kernels-b §14.
 */
import { defineKernel } from '../kernel-def.js';
import { sigmoid } from '../lib/linalg.js';
import { int } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';
import { sampleSeries } from '../../src/lib/numbers.js';

export const ORDER = 3;
export const DOMAIN1: readonly [number, number] = [-1, 1];
export const DOMAIN2: readonly [number, number] = [-3, 3];
export const COEF_SD = 0.1;
export const LR = 0.02;
export const BETA1 = 0.9;
export const BETA2 = 0.999;
export const ADAM_EPS = 1e-8;
export const EPOCH_CAP = 150;
export const EPOCH_BUDGET = 245760;
export const TEST_POINTS = 256;
const CURVE_POINTS = 50;

export const target = (x: number, y: number): number => Math.exp(Math.sin(Math.PI * x) + y * y);
export const silu = (x: number): number => x * sigmoid(x);
const siluGrad = (x: number): number => {
  const s = sigmoid(x);
  return s * (1 + x * (1 - s));
};

export const epochsFor = (samples: number, width: number): number => Math.min(EPOCH_CAP, Math.floor(EPOCH_BUDGET / (samples * width)));

export interface Basis {
  /** First of the four nonzero basis indices, or −1 outside [lo, hi]. */
  i: number;
  b: [number, number, number, number];
  /** d/dx of the four values. */
  db: [number, number, number, number];
}

/** The nonzero cubic B-spline values B_i…B_{i+3} (and derivatives) at x on the uniform grid of G intervals over [lo, hi]. */
export function bsplineBasis(x: number, lo: number, hi: number, G: number): Basis {
  if (!(x >= lo && x <= hi)) return { i: -1, b: [0, 0, 0, 0], db: [0, 0, 0, 0] };
  const h = (hi - lo) / G;
  const u = (x - lo) / h;
  const i = Math.min(Math.floor(u), G - 1);
  const f = u - i;
  const f2 = f * f;
  const f3 = f2 * f;
  const g = 1 - f;
  return {
    i,
    b: [(g * g * g) / 6, (3 * f3 - 6 * f2 + 4) / 6, (-3 * f3 + 3 * f2 + 3 * f + 1) / 6, f3 / 6],
    db: [(-g * g) / 2 / h, (3 * f2 - 4 * f) / 2 / h, (-3 * f2 + 2 * f + 1) / 2 / h, f2 / 2 / h],
  };
}

/** All parameters in one vector: [c1 (2·W·(G+3)), wb1 (2·W), c2 (W·(G+3)), wb2 (W)]. */
export interface Kan {
  G: number;
  W: number;
  theta: Float64Array;
}

export const offsets = (G: number, W: number): { c1: number; wb1: number; c2: number; wb2: number; total: number } => {
  const n = G + 3;
  const c1 = 0;
  const wb1 = 2 * W * n;
  const c2 = wb1 + 2 * W;
  const wb2 = c2 + W * n;
  return { c1, wb1, c2, wb2, total: wb2 + W };
};

/** Draw order, stream `init`: c1 (in, j, i), wb1 (in, j), c2 (j, i), wb2 (j). */
export function initKan(G: number, W: number, rng: Rng): Kan {
  const o = offsets(G, W);
  const theta = new Float64Array(o.total);
  for (let p = o.c1; p < o.wb1; p++) theta[p] = COEF_SD * rng.normal();
  for (let p = o.wb1; p < o.c2; p++) theta[p] = rng.normal() / Math.sqrt(2);
  for (let p = o.c2; p < o.wb2; p++) theta[p] = COEF_SD * rng.normal();
  for (let p = o.wb2; p < o.total; p++) theta[p] = rng.normal() / Math.sqrt(W);
  return { G, W, theta };
}

/** Model output at (x, y); also fills h (hidden sums) when given. */
export function forward(model: Kan, x: number, y: number, h = new Float64Array(model.W)): number {
  const { G, W, theta } = model;
  const n = G + 3;
  const o = offsets(G, W);
  const ins = [x, y];
  h.fill(0);
  for (let k = 0; k < 2; k++) {
    const bs = bsplineBasis(ins[k]!, DOMAIN1[0], DOMAIN1[1], G);
    const s = silu(ins[k]!);
    for (let j = 0; j < W; j++) {
      let v = theta[o.wb1 + k * W + j]! * s;
      if (bs.i >= 0) for (let r = 0; r < 4; r++) v += theta[o.c1 + (k * W + j) * n + bs.i + r]! * bs.b[r]!;
      h[j] = h[j]! + v;
    }
  }
  let out = 0;
  for (let j = 0; j < W; j++) {
    const bs = bsplineBasis(h[j]!, DOMAIN2[0], DOMAIN2[1], G);
    out += theta[o.wb2 + j]! * silu(h[j]!);
    if (bs.i >= 0) for (let r = 0; r < 4; r++) out += theta[o.c2 + j * n + bs.i + r]! * bs.b[r]!;
  }
  return out;
}

/** Layer-1 bases of a fixed training set, computed once. */
interface Prepared {
  N: number;
  idx: Int32Array;
  b: Float64Array;
  s: Float64Array;
  y: Float64Array;
}

function prepare(G: number, xs: Float64Array, ys: Float64Array, f: Float64Array): Prepared {
  const N = f.length;
  const idx = new Int32Array(2 * N);
  const b = new Float64Array(8 * N);
  const s = new Float64Array(2 * N);
  for (let p = 0; p < N; p++) {
    for (let k = 0; k < 2; k++) {
      const v = k === 0 ? xs[p]! : ys[p]!;
      const bs = bsplineBasis(v, DOMAIN1[0], DOMAIN1[1], G);
      idx[2 * p + k] = bs.i;
      b.set(bs.b, (2 * p + k) * 4);
      s[2 * p + k] = silu(v);
    }
  }
  return { N, idx, b, s, y: f };
}

/** Full-batch MSE and its analytic gradient (into `grad`). */
export function lossAndGrad(model: Kan, data: Prepared, grad: Float64Array): number {
  const { G, W, theta } = model;
  const n = G + 3;
  const o = offsets(G, W);
  grad.fill(0);
  const h = new Float64Array(W);
  const gh = new Float64Array(W);
  const idx2 = new Int32Array(W);
  const b2 = new Float64Array(4 * W);
  let loss = 0;
  for (let p = 0; p < data.N; p++) {
    h.fill(0);
    for (let k = 0; k < 2; k++) {
      const i0 = data.idx[2 * p + k]!;
      const s = data.s[2 * p + k]!;
      const bo = (2 * p + k) * 4;
      const b0 = data.b[bo]!;
      const bb1 = data.b[bo + 1]!;
      const bb2 = data.b[bo + 2]!;
      const bb3 = data.b[bo + 3]!;
      for (let j = 0; j < W; j++) {
        let v = theta[o.wb1 + k * W + j]! * s;
        if (i0 >= 0) {
          const c = o.c1 + (k * W + j) * n + i0;
          v += theta[c]! * b0 + theta[c + 1]! * bb1 + theta[c + 2]! * bb2 + theta[c + 3]! * bb3;
        }
        h[j] = h[j]! + v;
      }
    }
    let out = 0;
    for (let j = 0; j < W; j++) {
      const bs = bsplineBasis(h[j]!, DOMAIN2[0], DOMAIN2[1], G);
      idx2[j] = bs.i;
      out += theta[o.wb2 + j]! * silu(h[j]!);
      let dspline = 0;
      if (bs.i >= 0) {
        for (let r = 0; r < 4; r++) {
          const c = theta[o.c2 + j * n + bs.i + r]!;
          out += c * bs.b[r]!;
          dspline += c * bs.db[r]!;
          b2[4 * j + r] = bs.b[r]!;
        }
      }
      gh[j] = theta[o.wb2 + j]! * siluGrad(h[j]!) + dspline;
    }
    const err = out - data.y[p]!;
    loss += err * err;
    const delta = (2 * err) / data.N;
    for (let j = 0; j < W; j++) {
      grad[o.wb2 + j] = grad[o.wb2 + j]! + delta * silu(h[j]!);
      const i2 = idx2[j]!;
      if (i2 >= 0) for (let r = 0; r < 4; r++) grad[o.c2 + j * n + i2 + r] = grad[o.c2 + j * n + i2 + r]! + delta * b2[4 * j + r]!;
      const g = delta * gh[j]!;
      for (let k = 0; k < 2; k++) {
        grad[o.wb1 + k * W + j] = grad[o.wb1 + k * W + j]! + g * data.s[2 * p + k]!;
        const i0 = data.idx[2 * p + k]!;
        if (i0 >= 0) {
          const c = o.c1 + (k * W + j) * n + i0;
          const bo = (2 * p + k) * 4;
          for (let r = 0; r < 4; r++) grad[c + r] = grad[c + r]! + g * data.b[bo + r]!;
        }
      }
    }
  }
  return loss / data.N;
}

/** Loss and gradient of `model` on raw points (for the unit-level gradient check). */
export function lossAndGradAt(model: Kan, xs: Float64Array, ys: Float64Array, f: Float64Array): { loss: number; grad: Float64Array } {
  const grad = new Float64Array(model.theta.length);
  const loss = lossAndGrad(model, prepare(model.G, xs, ys, f), grad);
  return { loss, grad };
}

/** Draw order: x then y per point, both U(−1, 1). */
export function drawPoints(count: number, rng: Rng): { xs: Float64Array; ys: Float64Array; f: Float64Array } {
  const xs = new Float64Array(count);
  const ys = new Float64Array(count);
  const f = new Float64Array(count);
  for (let p = 0; p < count; p++) {
    xs[p] = rng.uniform(-1, 1);
    ys[p] = rng.uniform(-1, 1);
    f[p] = target(xs[p]!, ys[p]!);
  }
  return { xs, ys, f };
}

/** `epochs` Adam steps; returns the loss before each step and the loss after the last one. */
export function train(model: Kan, xs: Float64Array, ys: Float64Array, f: Float64Array, epochs: number): { curve: Float64Array; finalLoss: number } {
  const data = prepare(model.G, xs, ys, f);
  const P = model.theta.length;
  const grad = new Float64Array(P);
  const m = new Float64Array(P);
  const v = new Float64Array(P);
  const curve = new Float64Array(epochs);
  let b1t = 1;
  let b2t = 1;
  for (let e = 0; e < epochs; e++) {
    curve[e] = lossAndGrad(model, data, grad);
    b1t *= BETA1;
    b2t *= BETA2;
    for (let p = 0; p < P; p++) {
      const g = grad[p]!;
      m[p] = BETA1 * m[p]! + (1 - BETA1) * g;
      v[p] = BETA2 * v[p]! + (1 - BETA2) * g * g;
      model.theta[p] = model.theta[p]! - (LR * (m[p]! / (1 - b1t))) / (Math.sqrt(v[p]! / (1 - b2t)) + ADAM_EPS);
    }
  }
  return { curve, finalLoss: lossAndGrad(model, data, grad) };
}

function rmse(model: Kan, xs: Float64Array, ys: Float64Array, f: Float64Array): number {
  let s = 0;
  for (let p = 0; p < f.length; p++) s += (forward(model, xs[p]!, ys[p]!) - f[p]!) ** 2;
  return Math.sqrt(s / f.length);
}

export default defineKernel({
  id: 'kan/fit',
  version: 2,
  informative: {
    loss_curve: 'the interior is the Adam trajectory (replaying it would copy the optimiser); its first and last points are recomputed by the tests from the returned parameters',
  },
  input: 'query',
  summary: 'Kolmogorov–Arnold Network [2, width, 1] with cubic B-spline edges trained by Adam on exp(sin(πx) + y²)',
  technique: 'KAN with learnable cubic B-spline edge functions plus silu base branch, full-batch Adam with analytic gradients',
  references: ['arXiv:2404.19756', 'arXiv:1412.6980'],
  honesty: 'The network, its gradients and its training are real; the training and test points are seeded uniform draws of a known closed-form target.',
  params: {
    grid: int(2, 48, 12).description('B-spline grid intervals per edge'),
    samples: int(16, 512, 128).description('training samples'),
    width: int(1, 32, 16).description('hidden width of the [2, width, 1] network'),
  },
  worstCase: { grid: 48, samples: 60, width: 32 },
  run({ grid: G, samples, width: W }, rng) {
    // draw order: training points (stream `data`), test points (stream `test`), parameters (stream `init`, see initKan)
    const tr = drawPoints(samples, rng.stream('data'));
    const te = drawPoints(TEST_POINTS, rng.stream('test'));
    const model = initKan(G, W, rng.stream('init'));
    const epochs = epochsFor(samples, W);
    const { curve, finalLoss } = train(model, tr.xs, tr.ys, tr.f, epochs);
    const testRmse = rmse(model, te.xs, te.ys, te.f);
    let mean = 0;
    for (const v of te.f) mean += v;
    mean /= TEST_POINTS;
    let ssTot = 0;
    for (const v of te.f) ssTot += (v - mean) ** 2;
    const baseline = Math.sqrt(ssTot / TEST_POINTS);
    const curveWithFinal = Float64Array.from([...curve, finalLoss]);
    const sampled = sampleSeries(curveWithFinal, CURVE_POINTS);
    const n = G + 3;
    const o = offsets(G, W);
    const th = model.theta;
    const slice = (at: number, len: number): Float64Array => th.subarray(at, at + len);
    return {
      constants: { order: ORDER, lr: LR, adam: { beta1: BETA1, beta2: BETA2, eps: ADAM_EPS }, coef_init_sd: COEF_SD, epoch_cap: EPOCH_CAP, epoch_budget: EPOCH_BUDGET, test_points: TEST_POINTS, target: 'exp(sin(pi*x) + y^2)' },
      result: {
        architecture: [2, W, 1],
        grid: G,
        k: ORDER,
        epochs,
        lr: LR,
        domains: { layer1: DOMAIN1, layer2: DOMAIN2 },
        loss_curve: sampled.values,
        loss_curve_epochs: sampled.index,
        initial_loss: curve[0],
        final_loss: finalLoss,
        train_rmse: Math.sqrt(finalLoss),
        test_rmse: testRmse,
        r2_test: ssTot > 0 ? 1 - (testRmse * testRmse * TEST_POINTS) / ssTot : null,
        baseline_rmse: baseline,
        params: {
          layer1: {
            coef: [0, 1].map((k) => Array.from({ length: W }, (_, j) => slice(o.c1 + (k * W + j) * n, n))),
            w_base: [0, 1].map((k) => slice(o.wb1 + k * W, W)),
          },
          layer2: { coef: Array.from({ length: W }, (_, j) => slice(o.c2 + j * n, n)), w_base: slice(o.wb2, W) },
        },
        test_points: Array.from({ length: TEST_POINTS }, (_, p) => [te.xs[p], te.ys[p], te.f[p]]),
      },
      checks: { loss_decreased: finalLoss < curve[0]!, loss_ratio: finalLoss / curve[0]! },
    };
  },
});
