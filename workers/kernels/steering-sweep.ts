/**
 * Activation steering by contrastive activation addition (Rimsky/Panickssery et al. 2023,
 * arXiv:2312.06681; Turner et al. 2023, ActAdd, arXiv:2308.10248): the steering vector is the
 * difference of mean activations between contrastive examples; adding c·v̂ to the negatives and
 * sweeping c exposes the behaviour gain against a quadratic side-effect penalty. Behaviour is read
 * by a ridge-regularised LDA probe. Design: kernels-c §10.
 */
import { defineKernel } from '../kernel-def.js';
import { cholesky, choleskySolve, cosine, dot, norm, sigmoid, unit, type Matrix } from '../lib/linalg.js';
import { int, num } from '../../src/lib/params.js';

const NOISE = 0.5;
const RIDGE = 0.1;

export default defineKernel({
  id: 'steering/sweep',
  version: 1,
  input: 'query',
  summary: 'Contrastive activation addition: mean-difference steering vector, LDA behaviour probe and a coefficient sweep with a side-effect penalty',
  technique: 'contrastive activation addition (CAA / ActAdd) steering-coefficient sweep',
  references: ['arXiv:2312.06681', 'arXiv:2308.10248'],
  honesty: 'The steering vector, the LDA probe and the sweep are computed for real; the activations are seeded Gaussian clusters around a planted behaviour direction, not a language model, and the side-effect penalty is the stated kappa·c² model.',
  params: {
    dim: int(2, 128, 32).description('activation dimension'),
    cluster: int(2, 256, 24).description('examples per behaviour cluster'),
    sweep_points: int(2, 101, 21).description('steering coefficients swept'),
    c_max: num(1e-3, 100, 6.0).description('largest steering coefficient'),
    kappa: num(0, 10, 0.08).description('weight of the side-effect penalty'),
  },
  worstCase: { dim: 128, cluster: 256, sweep_points: 101, c_max: 100, kappa: 10 },
  run({ dim: n, cluster: m, sweep_points: S, c_max, kappa }, rng) {
    // draws: μ (n normals, `mu`), δ (n normals, `delta`, normalised), positives (m×n, `pos`), negatives (m×n, `neg`)
    const mu = rng.stream('mu').normals(n);
    const delta = unit(rng.stream('delta').normals(n));
    const posNoise = rng.stream('pos').normals(m * n, NOISE);
    const negNoise = rng.stream('neg').normals(m * n, NOISE);
    const pos = new Float64Array(m * n);
    const neg = new Float64Array(m * n);
    for (let e = 0; e < m; e++) {
      for (let i = 0; i < n; i++) {
        pos[e * n + i] = mu[i]! + delta[i]! / 2 + posNoise[e * n + i]!;
        neg[e * n + i] = mu[i]! - delta[i]! / 2 + negNoise[e * n + i]!;
      }
    }
    const meanOf = (X: Float64Array) => {
      const out = new Float64Array(n);
      for (let e = 0; e < m; e++) for (let i = 0; i < n; i++) out[i] = out[i]! + X[e * n + i]!;
      return out.map((x) => x / m);
    };
    const mPos = meanOf(pos);
    const mNeg = meanOf(neg);
    const v = mPos.map((x, i) => x - mNeg[i]!);
    const vHat = unit(v);

    // pooled within-class covariance (unbiased: 2m − 2 degrees of freedom) plus the ridge
    const cov = new Float64Array(n * n);
    const centred = new Float64Array(n);
    for (const [X, mean] of [[pos, mPos], [neg, mNeg]] as const) {
      for (let e = 0; e < m; e++) {
        for (let i = 0; i < n; i++) centred[i] = X[e * n + i]! - mean[i]!;
        for (let i = 0; i < n; i++) {
          const ci = centred[i]!;
          const row = i * n;
          for (let j = 0; j <= i; j++) cov[row + j] = cov[row + j]! + ci * centred[j]!;
        }
      }
    }
    for (let i = 0; i < n; i++) {
      for (let j = 0; j <= i; j++) {
        const c = cov[i * n + j]! / (2 * m - 2) + (i === j ? RIDGE : 0);
        cov[i * n + j] = c;
        cov[j * n + i] = c;
      }
    }
    const A: Matrix = { rows: n, cols: n, data: cov };
    const w = choleskySolve(cholesky(A), v); // LDA direction (Σ + 0.1 I)⁻¹ v
    const bias = -dot(w, mPos.map((x, i) => (x + mNeg[i]!) / 2)); // decision boundary at the midpoint

    const rateOf = (X: Float64Array, c: number) => {
      // behaviour rate, mean projection on v̂ and mean norm ratio after steering every row by c·v̂
      let rate = 0;
      let proj = 0;
      let ratio = 0;
      for (let e = 0; e < m; e++) {
        let wh = 0;
        let ph = 0;
        let sq = 0;
        let sq0 = 0;
        for (let i = 0; i < n; i++) {
          const h = X[e * n + i]!;
          const hs = h + c * vHat[i]!;
          wh += w[i]! * hs;
          ph += vHat[i]! * hs;
          sq += hs * hs;
          sq0 += h * h;
        }
        rate += sigmoid(wh + bias);
        proj += ph;
        ratio += sq0 > 0 ? Math.sqrt(sq / sq0) : 1;
      }
      return { rate: rate / m, proj: proj / m, ratio: ratio / m };
    };

    const p0 = rateOf(neg, 0).rate;
    const sweep = Array.from({ length: S }, (_, k) => {
      // integer numerator keeps the grid exactly antisymmetric (c_k = −c_{S−1−k}, exact 0 for odd S)
      const c = (c_max * (2 * k - (S - 1))) / (S - 1);
      const r = rateOf(neg, c);
      return { c, behaviour_rate: r.rate, mean_projection: r.proj, norm_ratio: r.ratio, utility: r.rate - p0 - kappa * c * c };
    });
    // In exact arithmetic the rate is strictly increasing, so kappa = 0 gives c* = c_max; once the
    // probe saturates (σ = 1 in float64, e.g. c_max = 100) neighbouring utilities tie and the rule
    // below picks the smallest c reaching the maximum.
    let best = 0;
    for (let k = 1; k < S; k++) {
      const a = sweep[k]!;
      const b = sweep[best]!;
      // ties → smaller |c|, then smaller c
      if (a.utility > b.utility || (a.utility === b.utility && (Math.abs(a.c) < Math.abs(b.c) || (Math.abs(a.c) === Math.abs(b.c) && a.c < b.c)))) best = k;
    }

    return {
      constants: { noise_sd: NOISE, probe_ridge: RIDGE, true_direction_norm: 1, covariance: 'pooled within-class, 2·cluster − 2 degrees of freedom' },
      result: {
        steering_vector_norm: norm(v),
        cos_to_true_direction: cosine(v, delta),
        probe_alignment: dot(w, v),
        probe_bias: bias,
        p0,
        positive_baseline: rateOf(pos, 0).rate,
        sweep,
        c_star: sweep[best]!.c,
        utility_star: sweep[best]!.utility,
        steering_vector: v,
        probe_weights: w,
        true_direction: delta,
      },
      checks: {
        probe_gain_positive: dot(w, vHat) > 0,
        behaviour_non_decreasing: sweep.every((s, k) => k === 0 || s.behaviour_rate >= sweep[k - 1]!.behaviour_rate),
      },
    };
  },
});
