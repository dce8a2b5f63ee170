/**
 * TopK sparse autoencoder (Gao et al. 2024, *Scaling and evaluating sparse autoencoders*,
 * arXiv:2406.04093): z = ReLU(TopK(W_enc(x − b_pre))), x̂ = W_dec z + b_pre, so L0 ≤ k exactly,
 * with the encoder tied to the decoder's transpose (their initialisation). The activations are a
 * sparse superposition of more unit features than dimensions (Elhage et al. 2022, *Toy Models of
 * Superposition*, arXiv:2209.10652). Design: kernels-c §20.
 *
 * The decoder is the true dictionary plus small noise, standing in for a trained SAE; the kernel
 * measures what TopK encoding recovers (support recall/precision, FVU) and how much of the error is
 * the encoder's amplitudes rather than its support (least-squares refit on the same support).
 */
import { defineKernel } from '../kernel-def.js';
import { cholesky, choleskySolve, zeros } from '../lib/linalg.js';
import { int } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';
import { topK } from '../lib/ranking.js';

const AMP_LO = 0.5;
const AMP_HI = 1.5;
const PERTURB_VAR = 0.01; // per-coordinate variance · d_model, so the perturbation norm is ≈ 0.1
const RIDGE = 1e-10;
const EXAMPLES = 4;
const TOP_FREQ = 10;

/** One of the first examples, encoded: its true features and what TopK selected. */
interface EncodedExample {
  /** the activation vector */
  x: number[];
  /** the features it was built from, with their amplitudes */
  true_features: { feature: number; amplitude: number }[];
  /** the TopK features, best first; the activation is the pre-activation after ReLU */
  selected: { feature: number; pre_activation: number; activation: number }[];
  /** the best pre-activation left out (the (k+1)-th), or null when k = n_features */
  next_pre_activation: number | null;
}

/** m unit rows of width d, drawn row by row as standard normals and normalised. */
function unitRows(rng: Rng, m: number, d: number): Float64Array {
  const W = new Float64Array(m * d);
  for (let j = 0; j < m; j++) {
    const row = rng.normals(d);
    let nn = 0;
    for (let i = 0; i < d; i++) nn += row[i]! ** 2;
    const inv = 1 / Math.sqrt(nn);
    for (let i = 0; i < d; i++) W[j * d + i] = row[i]! * inv;
  }
  return W;
}

export default defineKernel({
  id: 'interpretability/features',
  version: 1,
  input: 'query',
  summary: 'TopK sparse autoencoder on superposed sparse features: exact L0, support recovery, FVU of the SAE vs a least-squares refit on the same support',
  technique: 'TopK sparse autoencoder (tied encoder) on a toy-superposition data model',
  references: ['arXiv:2406.04093', 'arXiv:2209.10652'],
  honesty:
    'TopK encoding, decoding, the least-squares refit and the support statistics are computed exactly; the features, the data and the "trained" decoder (true features plus seeded noise) are synthetic.',
  params: {
    d_model: int(2, 64, 16).description('activation dimension'),
    n_features: int(2, 1024, 128).description('dictionary features of the SAE'),
    top_k: int(1, 32, 8).description('active features per example (at most n_features)'),
    batch: int(1, 128, 64).description('examples encoded'),
  },
  worstCase: { d_model: 64, n_features: 1024, top_k: 32, batch: 128 },
  rules: ['top_k must be ≤ n_features'],
  constraints: (p) => (p.top_k <= p.n_features ? [] : [{ param: 'top_k', msg: 'top_k must be ≤ n_features' }]),
  run({ d_model: d, n_features: m, top_k: k, batch }, rng) {
    // s true features per example; capped at n_features (the note's floor(d/4) can exceed a tiny dictionary)
    const s = Math.min(m, Math.max(1, Math.floor(d / 4)));
    // draws: true features, m rows of d normals, normalised (stream `features`); decoder noise, m rows of
    // d normals (stream `perturb`); per example: s distinct features by partial Fisher–Yates, then s
    // amplitudes U(0.5, 1.5) (stream `data`)
    const F = unitRows(rng.stream('features'), m, d);
    const ps = rng.stream('perturb');
    const noiseSd = Math.sqrt(PERTURB_VAR / d);
    const D = new Float64Array(m * d); // decoder rows = latent directions, unit norm
    for (let j = 0; j < m; j++) {
      const noise = ps.normals(d, noiseSd);
      let nn = 0;
      for (let i = 0; i < d; i++) {
        const v = F[j * d + i]! + noise[i]!;
        D[j * d + i] = v;
        nn += v * v;
      }
      const inv = 1 / Math.sqrt(nn);
      for (let i = 0; i < d; i++) D[j * d + i] = D[j * d + i]! * inv;
    }
    const ds = rng.stream('data');

    const mean = new Float64Array(d);
    const X = new Float64Array(batch * d);
    const errSae = new Float64Array(batch);
    const errRefit = new Float64Array(batch);
    const counts = new Int32Array(m);
    const pre = new Float64Array(m);
    let l0Sum = 0;
    let l0Max = 0;
    let hits = 0;
    let trueTotal = 0;
    const examples: EncodedExample[] = [];
    for (let e = 0; e < batch; e++) {
      const active = ds.sample(m, s);
      const amps = Array.from({ length: s }, () => ds.uniform(AMP_LO, AMP_HI));
      const x = X.subarray(e * d, (e + 1) * d);
      active.forEach((f, t) => {
        for (let i = 0; i < d; i++) x[i] = x[i]! + amps[t]! * F[f * d + i]!;
      });
      for (let i = 0; i < d; i++) mean[i] = mean[i]! + x[i]! / batch;
      // encoder: W_enc = W_decᵀ, b_pre = 0
      for (let j = 0; j < m; j++) {
        let acc = 0;
        const o = j * d;
        for (let i = 0; i < d; i++) acc += D[o + i]! * x[i]!;
        pre[j] = acc;
      }
      const sel = topK(pre, k);
      const support = sel.filter((j) => pre[j]! > 0); // ReLU after TopK
      l0Sum += support.length;
      l0Max = Math.max(l0Max, support.length);
      const trueSet = new Set(active);
      for (const j of support) {
        counts[j] = counts[j]! + 1;
        if (trueSet.has(j)) hits++;
      }
      trueTotal += s;

      // SAE reconstruction with its own amplitudes
      const xs = new Float64Array(d);
      for (const j of support) for (let i = 0; i < d; i++) xs[i] = xs[i]! + pre[j]! * D[j * d + i]!;
      let es = 0;
      for (let i = 0; i < d; i++) es += (x[i]! - xs[i]!) ** 2;
      errSae[e] = es;

      // least squares on the same support: (D_Sᵀ D_S + ridge·I) c = D_Sᵀ x
      const n = support.length;
      let er = 0;
      if (n === 0) er = es;
      else {
        const G = zeros(n, n);
        const rhs = new Float64Array(n);
        for (let a = 0; a < n; a++) {
          const oa = support[a]! * d;
          rhs[a] = pre[support[a]!]!; // D_Sᵀ x is the pre-activation, as W_enc = W_decᵀ
          for (let b = 0; b <= a; b++) {
            const ob = support[b]! * d;
            let g = 0;
            for (let i = 0; i < d; i++) g += D[oa + i]! * D[ob + i]!;
            G.data[a * n + b] = g;
            G.data[b * n + a] = g;
          }
          G.data[a * n + a] = G.data[a * n + a]! + RIDGE;
        }
        const c = choleskySolve(cholesky(G), rhs);
        const xr = new Float64Array(d);
        for (let a = 0; a < n; a++) for (let i = 0; i < d; i++) xr[i] = xr[i]! + c[a]! * D[support[a]! * d + i]!;
        for (let i = 0; i < d; i++) er += (x[i]! - xr[i]!) ** 2;
      }
      errRefit[e] = er;

      if (e < EXAMPLES) {
        examples.push({
          x: Array.from(x),
          true_features: active.map((f, t) => ({ feature: f, amplitude: amps[t]! })),
          selected: sel.map((j) => ({ feature: j, pre_activation: pre[j]!, activation: Math.max(0, pre[j]!) })),
          next_pre_activation: k < m ? pre[topK(pre, k + 1)[k]!]! : null,
        });
      }
    }

    let sst = 0;
    for (let e = 0; e < batch; e++) for (let i = 0; i < d; i++) sst += (X[e * d + i]! - mean[i]!) ** 2;
    const sum = (a: Float64Array) => a.reduce((p, q) => p + q, 0);
    const fvu = (a: Float64Array) => (sst > 0 ? sum(a) / sst : null);
    let dead = 0;
    for (let j = 0; j < m; j++) if (counts[j] === 0) dead++;
    const order = Array.from({ length: m }, (_, j) => j).sort((a, b) => counts[b]! - counts[a]! || a - b);
    let refitNotWorse = true;
    for (let e = 0; e < batch; e++) if (errRefit[e]! > errSae[e]! + 1e-9) refitNotWorse = false;
    return {
      constants: {
        active_per_example: s,
        amplitude: [AMP_LO, AMP_HI],
        decoder_noise_var: PERTURB_VAR / d,
        b_pre: 0,
        encoder: 'W_dec transpose',
        ridge: RIDGE,
        fvu_baseline: 'batch mean',
      },
      result: {
        l0_mean: l0Sum / batch,
        l0_max: l0Max,
        fvu_sae: fvu(errSae),
        fvu_refit: fvu(errRefit),
        fvu_reason: sst > 0 ? null : 'batch variance is zero (batch = 1)',
        sse_sae: sum(errSae),
        sse_refit: sum(errRefit),
        support_recall: hits / trueTotal,
        support_precision: l0Sum > 0 ? hits / l0Sum : null,
        dead_features: dead,
        top_frequencies: order.slice(0, Math.min(TOP_FREQ, m)).map((j) => ({ feature: j, count: counts[j]! })),
        examples,
        superposition_ratio: m / d,
      },
      checks: { l0_within_k: l0Max <= k, refit_not_worse_per_example: refitNotWorse },
    };
  },
});
